// The importers' expected failures (bad input, bad options): the CLI prints the message as one line, no stack.
export class ImportError extends Error {
  override name = 'ImportError';
}
