// Search quality as users meet it: a set of queries written the way people damage names and addresses (a swap of
// two letters, a dropped or doubled letter, a wrong vowel, a split or joined particle, a suffix written out, words
// reordered, a missing unit number), each with the parcel it means, and the share found first (recall@1) and in the
// first ten (recall@10), statewide and in the parcel's county.
//   node --import tsx bench/quality.ts --build     writes bench/quality-set.json from the state `make bench` loads
//   node --import tsx bench/quality.ts             measures it against that state (DATABASE_URL: the bench database)
// A query finds its parcel when a hit has the parcel's owner name (an owner query) or site address (an address
// query) in normalized form: many parcels share an owner, and the query names the owner, not one of its parcels
// (without a unit number, the building: any hit at that address, with its unit number left out if it has one).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { ownerDatabaseUrl } from '../src/db-url.ts';
import { Rng } from '../scripts/generate/prng.ts';

export const QUALITY_SET = join(import.meta.dirname, 'quality-set.json');

export interface QualityPair {
  query: string;
  /** What the query names: the parcel's owner or its site address. */
  field: 'owner' | 'address';
  damage: string;
  county: string;
  parcel_id: string;
}

export interface QualityResult {
  pairs: number;
  statewide: { at1: number; at10: number };
  inCounty: { at1: number; at10: number };
  /** recall@10 statewide per kind of damage. */
  byDamage: Record<string, number>;
  misses: string[];
}

const VOWELS = 'AEIOU';
/** A site address's unit number, as the roll writes it. */
const UNIT = /( #| UNIT | APT )\s*\S+$/;
const SUFFIXES: Record<string, string[]> = {
  TR: ['Trust', 'Trustee'],
  LLC: ['L.L.C.', 'L L C'],
  INC: ['Incorporated'],
  CORP: ['Corporation'],
  LTD: ['Limited'],
  LP: ['L.P.'],
};

/** Mixed case, as people type. */
const typed = (s: string) => s.toLowerCase().replace(/\b[a-z]/g, (c) => c.toUpperCase());

/** One damage of a word of at least 4 letters, or null when the text has none to damage. */
function damageWord(text: string, rng: Rng, kind: 'swap' | 'drop' | 'double' | 'vowel'): string | null {
  const words = text.split(' ');
  const candidates = words.map((w, i) => [w, i] as const).filter(([w]) => /^[A-Z]{4,}$/.test(w));
  if (candidates.length === 0) return null;
  const [word, at] = rng.pick(candidates);
  const i = rng.int(1, word.length - 2);
  let out: string;
  if (kind === 'swap') {
    if (word[i] === word[i + 1]) return null;
    out = word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2);
  } else if (kind === 'drop') out = word.slice(0, i) + word.slice(i + 1);
  else if (kind === 'double') out = word.slice(0, i + 1) + word[i] + word.slice(i + 1);
  else {
    const v = [...word].map((c, j) => [c, j] as const).filter(([c]) => VOWELS.includes(c));
    if (v.length === 0) return null;
    const [c, j] = rng.pick(v);
    out = word.slice(0, j) + rng.pick([...VOWELS].filter((x) => x !== c)) + word.slice(j + 1);
  }
  words[at] = out;
  return words.join(' ');
}

/** Builds the set: damaged owners and addresses of parcels spread over the state, deterministic for a state. */
export async function buildQualitySet(sql: postgres.Sql, perDamage = 40): Promise<QualityPair[]> {
  const rng = new Rng(20261125);
  const rows = await sql<{ slug: string; parcel_id: string; owner: string; address: string | null }[]>`
    SELECT c.slug, p.parcel_id, p.owner_name AS owner, p.site_address_full AS address
      FROM core.parcels p JOIN core.counties c ON c.id = p.county_id
     WHERE p.owner_name IS NOT NULL AND p.id % 211 = 0
     ORDER BY p.id`;
  // particles as the roll writes them: joined (MCDONALD, MACKENZIE) or apart (VAN BELL, DE LEON)
  const particled = await sql<{ slug: string; parcel_id: string; owner: string }[]>`
    SELECT c.slug, p.parcel_id, p.owner_name AS owner
      FROM core.parcels p JOIN core.counties c ON c.id = p.county_id
     WHERE p.owner_name ~ '(^| )(MC|MAC)[A-Z]{4,}( |$)|(^| )(VAN|DE|DEL|LA) [A-Z]{3,}'
     ORDER BY p.id LIMIT 2000`;
  const suffixed = rows.filter((r) => r.owner.split(' ').some((w) => w in SUFFIXES));
  const units = rows.filter((r) => r.address && UNIT.test(r.address));
  const pairs: QualityPair[] = [];
  const seen = new Set<string>();
  const add = (p: QualityPair) => {
    if (!seen.has(p.query) && pairs.filter((x) => x.damage === p.damage).length < perDamage) {
      seen.add(p.query);
      pairs.push(p);
    }
  };
  const shuffled = [...rows].sort(() => rng.next() - 0.5);
  for (const r of shuffled) {
    for (const kind of ['swap', 'drop', 'double', 'vowel'] as const) {
      const field = rng.chance(0.6) || !r.address ? 'owner' : 'address';
      const text = field === 'owner' ? r.owner : r.address!;
      const damaged = damageWord(text, rng, kind);
      if (damaged) add({ query: typed(damaged), field, damage: kind, county: r.slug, parcel_id: r.parcel_id });
    }
    const words = r.owner.split(' ');
    if (words.length >= 2 && /^[A-Z]+$/.test(words[0]!) && /^[A-Z]+$/.test(words[1]!))
      add({
        query: typed([words[1], words[0], ...words.slice(2)].join(' ')),
        field: 'owner',
        damage: 'reordered',
        county: r.slug,
        parcel_id: r.parcel_id,
      });
  }
  for (const r of suffixed) {
    const words = r.owner.split(' ').map((w) => (w in SUFFIXES ? rng.pick(SUFFIXES[w]!) : w));
    add({ query: typed(words.join(' ')), field: 'owner', damage: 'suffix', county: r.slug, parcel_id: r.parcel_id });
  }
  for (const r of units) {
    add({
      query: typed(r.address!.replace(UNIT, '')),
      field: 'address',
      damage: 'no unit',
      county: r.slug,
      parcel_id: r.parcel_id,
    });
  }
  for (const r of particled.sort(() => rng.next() - 0.5)) {
    const split = r.owner.replace(/(^| )(MC|MAC)([A-Z]{4,})/, '$1$2 $3');
    const query = split !== r.owner ? split : r.owner.replace(/(^| )(VAN|DE|DEL|LA) ([A-Z]{3,})/, '$1$2$3');
    if (query !== r.owner)
      add({ query: typed(query), field: 'owner', damage: 'particle', county: r.slug, parcel_id: r.parcel_id });
  }
  return pairs;
}

/** Recall@1 and @10 of the set, statewide and in each pair's county, through api.parcel_search_hits. */
export async function measureQuality(sql: postgres.Sql, pairs: QualityPair[]): Promise<QualityResult> {
  let s1 = 0;
  let s10 = 0;
  let c1 = 0;
  let c10 = 0;
  const byDamage = new Map<string, [number, number]>();
  const misses: string[] = [];
  for (const p of pairs) {
    // without its unit number a query names the building: any unit of it, or the address without a unit
    const building = (text: string | null) => (p.damage === 'no unit' ? (text ?? '').replace(UNIT, '') : text);
    const [target] = await sql<{ owner: string; address: string | null }[]>`
      SELECT p.owner_search AS owner, p.site_address_full AS address FROM core.parcels p
       WHERE p.county_id = (SELECT id FROM core.counties WHERE slug = ${p.county}) AND p.parcel_id = ${p.parcel_id}`;
    if (!target) throw new Error(`quality: no parcel ${p.county} ${p.parcel_id}: rebuild the set for this state`);
    const want =
      p.field === 'owner'
        ? target.owner
        : (await sql<{ t: string }[]>`SELECT core.normalize_text(${building(target.address)}) AS t`)[0]!.t;
    const rank = async (county: string[] | null) => {
      const [page] = await sql<{ hits: { owner_name: string | null; site_address_full: string | null }[] }[]>`
        SELECT hits FROM api.parcel_search_hits(p_query => ${p.query}, p_county => ${county}, p_limit => 10)`;
      const texts = await sql<{ t: string | null }[]>`
        SELECT core.normalize_text(x) AS t
          FROM unnest(${page!.hits.map((h) => (p.field === 'owner' ? h.owner_name : building(h.site_address_full)))}::text[]) AS x`;
      return texts.findIndex((r) => r.t === want);
    };
    const statewide = await rank(null);
    const local = await rank([p.county]);
    if (statewide === 0) s1++;
    if (statewide >= 0) s10++;
    if (local === 0) c1++;
    if (local >= 0) c10++;
    const d = byDamage.get(p.damage) ?? [0, 0];
    byDamage.set(p.damage, [d[0] + (statewide >= 0 ? 1 : 0), d[1] + 1]);
    if (statewide < 0) misses.push(`${p.damage}: ${p.query} (${p.field} ${want})`);
  }
  const n = pairs.length;
  return {
    pairs: n,
    statewide: { at1: s1 / n, at10: s10 / n },
    inCounty: { at1: c1 / n, at10: c10 / n },
    byDamage: Object.fromEntries([...byDamage].map(([k, [hit, all]]) => [k, hit / all])),
    misses,
  };
}

export function readQualitySet(): QualityPair[] {
  return JSON.parse(readFileSync(QUALITY_SET, 'utf8')) as QualityPair[];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { build: { type: 'boolean', default: false } } });
  const sql = postgres(ownerDatabaseUrl(), { max: 1, onnotice: () => {} });
  if (values.build) {
    const pairs = await buildQualitySet(sql);
    writeFileSync(QUALITY_SET, `${JSON.stringify(pairs, null, 1)}\n`);
    console.log(`quality: ${pairs.length} pairs written to ${QUALITY_SET}`);
  } else {
    const result = await measureQuality(sql, readQualitySet());
    console.log(JSON.stringify(result, null, 2));
  }
  await sql.end();
}
