// This clone's settings: .local/env, written by scripts/services.sh when the clone's services start (make run, make
// services, make test) with the ports and servers they were started with. Every process started from the clone
// (the server, the CLIs, the setup scripts) reads it first, so that without PGPORT or REDIS_PORT in its environment
// it still talks to this clone's services, not another clone's. A variable set in the environment wins, even empty.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';

export const LOCAL_ENV_FILE = fileURLToPath(new URL('../.local/env', import.meta.url));

/** Sets each setting of `file` that `env` does not have; nothing when the file does not exist. */
export function loadLocalEnv(env: NodeJS.ProcessEnv = process.env, file = LOCAL_ENV_FILE): void {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (env[name] === undefined && value !== undefined) env[name] = value;
  }
}
