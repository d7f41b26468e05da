// The child process generateState forks for --jobs above 1: generates each county it is sent and answers with its
// result (counties are independent streams, so the output does not depend on which process wrote it).
import { countyByCoNo } from '../counties.ts';
import type { WorkerJob, WorkerReply } from './state.ts';
import { generateCounty } from './state-county.ts';

const reply = (m: WorkerReply) => process.send!(m);

process.on('message', (m: WorkerJob) => {
  generateCounty(countyByCoNo(m.coNo), m.parcels, m.seed, m.out).then(
    (result) => reply({ result }),
    (err: unknown) => reply({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );
});
