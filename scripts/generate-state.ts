// `make data`: the generator's `state` profile (scripts/generate/profiles/state.ts) from the command line: synthetic
// statewide files for all 67 counties, deterministic from --seed and --parcels. docs/generator.md describes them.
//   node --import tsx scripts/generate-state.ts --parcels 100000 --seed 1 --out .local/state [--jobs 2] [--years 3]
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { generateState } from './generate/profiles/state.ts';

const { values } = parseArgs({
  options: {
    parcels: { type: 'string', default: '100000' },
    seed: { type: 'string', default: '1' },
    out: { type: 'string', default: '.local/state' },
    jobs: { type: 'string', default: String(Math.min(2, availableParallelism())) },
    years: { type: 'string', default: '1' },
  },
});
await generateState({
  parcels: Number(values.parcels),
  seed: values.seed,
  out: values.out,
  jobs: Number(values.jobs),
  years: Number(values.years),
}).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
