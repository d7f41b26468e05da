// DATABASE_REPLICA_URLS: a comma-separated list of postgres:// URLs, one per streaming read replica. Problems name the
// item by its position, never its text (a URL may hold a password).

/** The list's items, trimmed; empty when the setting is unset or blank. */
export function replicaUrls(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') return [];
  return value.split(',').map((item) => item.trim());
}

/** Why an item is not a replica URL, or null when it is one. */
function problemOf(item: string): string | null {
  if (item === '') return 'is empty';
  if (!/^postgres(ql)?:\/\//.test(item)) return 'must be a postgres:// URL';
  let url: URL;
  try {
    url = new URL(item);
  } catch {
    return 'is not a valid URL';
  }
  if (url.hostname === '') return 'has no host';
  if (url.pathname.length <= 1) return 'names no database (postgres://user@host:port/database)';
  return null;
}

/** One configuration problem per bad item, in the form of the other settings' problems. */
export function replicaUrlProblems(config: { DATABASE_REPLICA_URLS?: unknown }): string[] {
  const value = config.DATABASE_REPLICA_URLS;
  if (typeof value !== 'string') return [];
  const items = replicaUrls(value);
  return items.flatMap((item, i) => {
    const problem = problemOf(item);
    return problem ? [`DATABASE_REPLICA_URLS: item ${i + 1} of ${items.length} ${problem}`] : [];
  });
}
