// Billing periods (UTC calendar months, YYYY-MM) and UTC days, as the metering and the usage reads name them.

export const periodOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);

/** Seconds from `ms` to the start of the next UTC month: when a monthly quota resets. */
export function secondsToNextPeriod(ms: number): number {
  const d = new Date(ms);
  return Math.ceil((Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) - ms) / 1000);
}

/**
 * The UTC day (YYYY-MM-DD) and month (the period, YYYY-MM) of `now`, for the hot path: computed again only when `now`
 * leaves the day computed last.
 */
let today = { from: 0, to: -1, day: '', period: '' };
export function calendar(now: number): { day: string; period: string } {
  if (now < today.from || now >= today.to) {
    const from = now - (now % 86_400_000);
    const day = new Date(from).toISOString().slice(0, 10);
    today = { from, to: from + 86_400_000, day, period: day.slice(0, 7) };
  }
  return today;
}
