// The generator's one seeded random-number generator (mulberry32) and its seed and weight helpers. Every profile draws
// from its own stream: the fixtures from one fixed seed, the statewide state from one stream per county (seeded from
// SEED and CO_NO), so counties can be generated in any order (or in parallel) and still be byte-identical.

/** FNV-1a over a string: turns any seed text plus a county number into a 32-bit PRNG seed. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A cheap integer mix, used to derive stable attributes (a subdivision's character, a rare name) from an index. */
export function mix32(a: number, b = 0): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x27d4eb2f, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

/** mulberry32 with the draws the profiles need. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed | 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = Math.imul(this.state ^ (this.state >>> 15), 1 | this.state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }
  /** An element of xs, the early ones much more likely: index floor(n * u^power), so power > 1 favours the front. */
  skewed<T>(xs: readonly T[], power: number): T {
    return xs[Math.min(xs.length - 1, Math.floor(xs.length * Math.pow(this.next(), power)))]!;
  }
  /** Index into a table of cumulative weights (built once with cumulative()). */
  weighted(cum: Float64Array): number {
    const r = this.next() * cum[cum.length - 1]!;
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid]! > r) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
  /**
   * A Zipf-like rank in [0, n): P(rank r) is proportional to 1 / (r + q). Log-uniform sampling on [q, n + q] gives
   * that in O(1); q flattens the head (q = 10 makes the top rank about 1% of draws among 10^5 ranks, like SMITH).
   */
  zipf(n: number, q: number): number {
    const r = Math.floor(q * Math.pow((n + q) / q, this.next()) - q);
    return r < n ? r : n - 1;
  }
  /** Log-normal noise around 1 (sigma in log space), for prices and values. */
  lognormal(sigma: number): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.exp(sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
  }
}

export function cumulative(weights: readonly number[]): Float64Array {
  const out = new Float64Array(weights.length);
  let sum = 0;
  weights.forEach((w, i) => (out[i] = sum += w));
  return out;
}
