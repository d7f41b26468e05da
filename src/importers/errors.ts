// The importers' expected failures (bad input, bad options): the CLI prints the message as one line, no stack.
export class ImportError extends Error {
  override name = 'ImportError';
}

/**
 * A load refused because the file or its effect looks like a mistake (the wrong kind of file, too many rejects, too
 * much of a county deleted): nothing was changed, and load_history records it as 'refused'.
 */
export class RefusedError extends ImportError {
  override name = 'RefusedError';
}
