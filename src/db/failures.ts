// Which failures of a query mean the server could not answer it, so that another server may: the read router runs
// such a read once more elsewhere (src/db/replicas.ts); any other error is the statement's own answer.

/** Error codes of postgres.js and of Node's sockets that mean the server was not reached or the connection was lost. */
const CONNECTION_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * Whether the server failed to answer a query (worth running it on another server) and why; null for an answer
 * the statement itself earned (22xxx bad input, P0001 raised, 57014 statement timeout...), which another server
 * would give too. SQLSTATE 08xxx: connection exceptions; 57P01/57P02/57P03: the server shuts down, crashed, or is
 * starting; 53300: no connection slot left; 40001 "canceling statement due to conflict with recovery" and 57P04
 * (database dropped): a hot standby cancelled the query to replay WAL. The API runs no serializable transactions,
 * but 40001 is checked by its message as well.
 */
export function failureOf(err: unknown): 'connection_error' | 'recovery_conflict' | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  if (CONNECTION_CODES.has(code) || code.startsWith('08') || /^57P0[123]$/.test(code) || code === '53300') {
    return 'connection_error';
  }
  if (code === '57P04') return 'recovery_conflict';
  if (code === '40001' && /conflict with recovery/i.test((err as Error).message)) return 'recovery_conflict';
  return null;
}
