// Workloads per endpoint, sampled from the loaded data so every request asks about something that exists (or,
// for typos and reversed names, something close to it). Deterministic for a given database and seed.
import type postgres from 'postgres';

export type Workloads = Record<string, string[]>;

interface SampleRow {
  id: string;
  slug: string;
  parcel_id: string;
  owner: string | null;
  address: string | null;
  lng: number | null;
  lat: number | null;
}

/** A small seeded PRNG (mulberry32), so a workload is the same from run to run. */
function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const q = encodeURIComponent;

/** The items of b spread evenly among those of a, so that a run stopped early has met both in proportion. */
function spread<T>(a: T[], b: T[]): T[] {
  const out: T[] = [];
  let j = 0;
  for (const [i, x] of a.entries()) {
    out.push(x);
    while (j < b.length && (j + 1) * a.length <= (i + 1) * b.length) out.push(b[j++]!);
  }
  return out.concat(b.slice(j));
}

export async function buildWorkloads(sql: postgres.Sql, seed = 42): Promise<Workloads> {
  const random = rng(seed);
  const [bounds] = await sql<
    { lo: string; hi: string }[]
  >`SELECT min(id)::text AS lo, max(id)::text AS hi FROM core.parcels`;
  const lo = Number(bounds?.lo ?? 0);
  const hi = Number(bounds?.hi ?? 0);
  const ids = Array.from({ length: 4000 }, () => lo + Math.floor(random() * (hi - lo + 1)));
  const sample = await sql<SampleRow[]>`
    SELECT p.id::text, c.slug, p.parcel_id, p.owner_name AS owner, p.site_address_full AS address,
           ST_X(p.centroid) AS lng, ST_Y(p.centroid) AS lat
      FROM core.parcels p JOIN core.counties c ON c.id = p.county_id
     WHERE p.id = ANY (${ids}::bigint[])
     ORDER BY p.id`;
  const withPlace = sample.filter((s) => s.lng !== null && s.lat !== null);
  const withOwner = sample.filter((s) => s.owner);
  const withAddress = sample.filter((s) => s.address);

  // Names: the most common surnames, rare names, one-letter typos, reversed order; addresses: full and partial.
  const surnames = new Map<string, number>();
  for (const s of withOwner) {
    const first = s.owner!.split(/\s+/)[0]!;
    surnames.set(first, (surnames.get(first) ?? 0) + 1);
  }
  const common = [...surnames.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([n]) => n);
  const typo = (s: string) => {
    const i = 1 + Math.floor(random() * Math.max(1, s.length - 2));
    return s.slice(0, i) + 'AEIOURSTN'[Math.floor(random() * 9)] + s.slice(i + 1);
  };
  const queries = new Set<string>();
  for (const n of common) queries.add(n);
  for (const s of withOwner.slice(0, 150)) queries.add(s.owner!);
  for (const s of withOwner.slice(150, 250)) queries.add(typo(s.owner!));
  for (const s of withOwner.slice(250, 350)) queries.add(s.owner!.split(/\s+/).slice(0, 2).reverse().join(' '));
  for (const s of withAddress.slice(0, 100)) queries.add(s.address!);
  for (const s of withAddress.slice(100, 200)) queries.add(s.address!.split(/\s+/).slice(0, 2).join(' '));
  const queryList = [...queries].filter((x) => x.length > 0 && x.length <= 200);
  const countyOf = new Map(withOwner.map((s) => [s.owner!, s.slug]));
  // owner names as people type them: parcels drawn at random, so a common name (JOHNSON JOHN) comes as often as the
  // roll holds it, repeats kept, each searched in its own county (bench/county-names.ts measures such names alone)
  const typed = withOwner
    .slice(350, 550)
    .filter((s) => s.owner!.length <= 200)
    .map((s) => ({ owner: s.owner!, slug: s.slug }));

  const delinquent = await sql<{ slug: string; parcel_id: string; tax_year: number | null; status: string | null }[]>`
    SELECT c.slug, d.parcel_id, d.tax_year, d.status
      FROM core.tax_delinquencies d JOIN core.counties c ON c.id = d.county_id
     WHERE d.id % 97 = 0 ORDER BY d.id LIMIT 2000`;
  const counties = (await sql<{ slug: string }[]>`SELECT slug FROM core.counties ORDER BY id`).map((r) => r.slug);
  const loaded = (await sql<{ slug: string }[]>`SELECT slug FROM core.counties WHERE parcel_count > 0 ORDER BY id`).map(
    (r) => r.slug,
  );
  const dor = ['0100', '0400', '0000', '1100', '0800'];

  const box = (s: SampleRow) => {
    const dLat = 0.0045; // about 500 m each way: a box of about 1 km2
    const dLng = 0.0045 / Math.cos((s.lat! * Math.PI) / 180);
    return `${(s.lng! - dLng).toFixed(6)},${(s.lat! - dLat).toFixed(6)},${(s.lng! + dLng).toFixed(6)},${(s.lat! + dLat).toFixed(6)}`;
  };

  return {
    'parcel by id': sample.map((s) => `/v1/parcels/${s.id}`),
    'parcel by parcel id': sample.map((s) => `/v1/parcels/by-parcel-id?county=${s.slug}&parcel_id=${q(s.parcel_id)}`),
    county: counties.map((c) => `/v1/counties/${c}`),
    usage: ['/v1/account/usage'],
    'search statewide': spread(
      queryList,
      typed.map((s) => s.owner),
    ).map((x) => `/v1/parcels/search?query=${q(x)}`),
    'search in county': spread(
      queryList.map((x) => ({ owner: x, slug: countyOf.get(x) ?? loaded[0] ?? 'miami-dade' })),
      typed,
    ).map((s) => `/v1/parcels/search?query=${q(s.owner)}&county=${s.slug}`),
    // what a search box sends as a user types: each query cut inside or after its second word
    autocomplete: queryList.map((x) => {
      const words = x.split(/\s+/);
      const typed =
        words.length > 1 ? `${words[0]} ${words[1]!.slice(0, Math.max(2, words[1]!.length - 2))}` : x.slice(0, 4);
      return `/v1/parcels/autocomplete?q=${q(typed)}`;
    }),
    point: withPlace.map((s) => `/v1/parcels/search?point=${s.lng},${s.lat}`),
    'near 500 m': withPlace.map((s) => `/v1/parcels/search?near=${s.lat},${s.lng}&radius_m=500`),
    'bbox 1 km2': withPlace.map((s) => `/v1/parcels/search?bbox=${box(s)}`),
    structured: loaded.flatMap((c) =>
      dor.map((d) => `/v1/parcels/search?county=${c}&dor_use_code=${d}&sort=just_value_desc`),
    ),
    'structured + facets': loaded.flatMap((c) =>
      dor.map(
        (d) =>
          `/v1/parcels/search?county=${c}&dor_use_code=${d}&sort=just_value_desc&facets=county,dor_use_code,city,zip`,
      ),
    ),
    'delinquency search': delinquent.map(
      (d) =>
        `/v1/tax-delinquencies/search?county=${d.slug}${d.tax_year ? `&tax_year=${d.tax_year}` : ''}${d.status ? `&status=${d.status}` : ''}&sort=due_desc`,
    ),
    'delinquency by parcel': delinquent.map(
      (d) => `/v1/tax-delinquencies/by-parcel?parcel_id=${q(d.parcel_id)}&county=${d.slug}`,
    ),
    'delinquency counts': loaded.flatMap((c) => [
      `/v1/tax-delinquencies/counts?county=${c}`,
      `/v1/tax-delinquencies/counts?county=${c}&tax_year=2024`,
    ]),
  };
}

/** Every workload interleaved, for the mixed-throughput run. */
export function mixed(workloads: Workloads): string[] {
  const lists = Object.values(workloads).filter((l) => l.length > 0);
  const out: string[] = [];
  const longest = Math.max(...lists.map((l) => l.length));
  for (let i = 0; i < Math.min(longest, 2000); i++) for (const l of lists) out.push(l[i % l.length]!);
  return out;
}
