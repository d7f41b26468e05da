// Option parsing for the operator CLI: node:util's parseArgs, plus negative numbers as values the way people
// type them (`--credits -50`), which parseArgs alone refuses as ambiguous.
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;
const NEGATIVE_NUMBER = /^-\d+(\.\d+)?$/;

/** Joins `--name -50` into `--name=-50` for options that take a value, so a negative number reads as a value. */
export function joinNegativeValues(argv: readonly string[], options: Options): string[] {
  const rest = [...argv];
  const out: string[] = [];
  for (let arg = rest.shift(); arg !== undefined; arg = rest.shift()) {
    const takesValue = arg.startsWith('--') && options[arg.slice(2)]?.type === 'string';
    out.push(takesValue && NEGATIVE_NUMBER.test(rest[0] ?? '') ? `${arg}=${rest.shift()}` : arg);
  }
  return out;
}

export function parseCliArgs<const O extends Options>(argv: readonly string[], options: O) {
  return parseArgs({ args: joinNegativeValues(argv, options), allowPositionals: true, options });
}
