// The process: the configuration, decoded once (a bad setting stops it with every problem listed), then serve().
// In development the log is readable lines (src/dev-log.ts); in production and tests, JSON lines for machines.
import { loadConfig } from './config.ts';
import { developmentLogStream } from './dev-log.ts';
import { loadLocalEnv } from './local-env.ts';
import { serve } from './server.ts';

loadLocalEnv();
let config;
try {
  config = loadConfig();
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
await serve(config, [], config.NODE_ENV === 'development' ? developmentLogStream() : undefined);
