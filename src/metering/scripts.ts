// The Redis side of metering: each script is one atomic round trip, composed at start from the pieces in lua/
// (shared local functions first, then the script's own body).
//
// Keys per metered subject S (a client's live pool, or `<client>:test` for its test keys):
//   st:S    hash  ver, period, m (monthly left), c (one-time credits), o (overage used), ov (overage allowed),
//                 pk (pack ids, oldest-expiring first), p:<id> (pack left), x:<id> (pack expiry, ms)
//   pend:S  hash  spent but not yet flushed to Postgres, by ledger field: m:<period>, o:<period>, c, p:<id>,
//                 t:<period> (test pool), n:<period> (charged requests)
// Per client: win:<client>, a sorted set of admitted request ids by time (the sliding 60 s window); fly:<client>, a
// sorted set of the ids of its requests in flight by when their lease ends (lua/admit-one.lua).
// Per request: res:<request id> = "<pend field>|<st key>|<pend key>" until settled, with a one-day TTL; the reaper
// refunds reservations older than five minutes (their process died before settling), found by their remaining TTL.
// Usage waiting to be flushed to Postgres, as counts (never a value per request), in batches named when opened:
//   usage:batch:<µs>-<n>  hash  charged requests counted per "<client>|<key>|<mode>|<surface>|<period>|<UTC day>|<pend
//                               field>", named by when it closes (the batch clock in µs) and a sequence number, so a
//                               name is never given twice, even after Redis has lost its data
//   usage:current         string  the batch settlements write into until it closes or is taken; the first settlement
//                               after that opens a new one, closing the batch age (ARGV) later
//   usage:batches         list  every batch not yet recorded and acknowledged, oldest first
//   usage:clock           hash  hw, skew: the batch clock (lua/clock.lua), Redis's TIME made never to go back
// A batch is recorded only once closed and sealed: the flush takes it (lua/take.lua), which stops settlements writing
// into it, and with replicas waits for one of them to have the seal. So even if Redis loses its last writes (a
// restart from its append-only file, fsynced every second, or a failover to a replica) and comes back with a batch
// Postgres already holds, nothing writes into that batch again: Postgres skips it by name, and new settlements open a
// new batch. Nothing is counted twice, and nothing is written into a batch already recorded, whatever the clocks of
// the servers (docs/metering.md#failover).

import { readFileSync } from 'node:fs';

const piece = (name: string) => readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');
const script = (...pieces: string[]) => pieces.map(piece).join('\n');

/** Settlements, then admissions, of one turn of a process's event loop (lua/turn.lua). */
export const TURN = script('batch', 'admit-one', 'refund', 'clock', 'turn');
/** Refunds reservations whose process died before settling (lua/reap.lua). */
export const REAP = script('refund', 'reap');
/** Rebuilds a client's hot balance from Postgres (lua/init.lua). */
export const INIT = script('init');
/** The oldest closed usage batches, to record in Postgres (lua/take.lua). */
export const TAKE = script('clock', 'take');
/** Drops usage batches recorded in Postgres (lua/ack.lua). */
export const ACK = script('batch', 'ack');
