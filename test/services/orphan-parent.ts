// A test process for orphans.test.ts to kill: it makes what the suite's tests make, through the same helpers (an API
// process with ORPHAN_WORKERS workers, a Redis server, a test database, a cleanup command that creates the file named
// by ORPHAN_MARKER), prints one line `started {"pids":[...],"ports":[...],"database":"..."}`, and waits to be killed.
import t from 'tap';
import { listeningPids, startApi } from './graceful-helpers.ts';
import { freePorts, cleanupWhenDone } from '../helpers/processes.ts';
import { servers } from '../redis-failover/servers.ts';
import { createTestDatabase } from '../helpers/db.ts';

const workers = Number(process.env.ORPHAN_WORKERS);
const api = await startApi(t, { WORKERS: String(workers) }, workers);
const [redisPort] = (await freePorts(1)) as [number];
await servers(t).redis(redisPort);
cleanupWhenDone(t, 'touch', [process.env.ORPHAN_MARKER!]);
const { name: database } = await createTestDatabase();

const pids = [...new Set([api.child.pid!, ...listeningPids(api)])];
process.stdout.write(`started ${JSON.stringify({ pids, ports: [api.port, redisPort], database })}\n`);
setInterval(() => {}, 60_000);
