// The import CLI: `npm run --silent import -- <kind> <file> [options]`. Bad input is one line on stderr and a
// non-zero exit (2 for usage), never a stack trace; the summary goes to stdout (JSON with --json).
import { parseCommand, report, UsageError, USAGE } from './command.ts';
import { ImportError } from './errors.ts';
import { runImport } from './pipeline.ts';
import { loadLocalEnv } from '../local-env.ts';

loadLocalEnv(); // this clone's database when DATABASE_URL and PGPORT are not set

function fail(message: string, code = 1): never {
  process.stderr.write(`import: ${message}\n`);
  process.exit(code);
}

async function main() {
  const command = parseCommand(process.argv.slice(2));
  if (command.help) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  const summary = await runImport(command.kind, command.options);
  process.stdout.write(command.json ? JSON.stringify(summary) + '\n' : report(summary));
  // A dry run answers as the real load would: a refusal is its one line on stderr and exit 1.
  if (summary.refusals.length) fail(summary.refusals.join('; '));
}

main().catch((err: unknown) => {
  if (err instanceof UsageError) fail(err.message, 2);
  if (err instanceof ImportError) fail(err.message);
  const e = err as Error & { code?: string };
  // Database and system errors: still one line; DEBUG=import shows the stack.
  if (process.env.DEBUG?.includes('import')) console.error(e);
  fail(`${e.code ? `${e.code} ` : ''}${e.message ?? String(err)}`);
});
