// The schema's own promises: migrations go up from empty, down and up again; sql/ re-applies cleanly; every api
// object is documented; the API's role can read but not write.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import postgres from 'postgres';
import { runner } from 'node-pg-migrate';
import { applySql } from '../../scripts/db-setup.ts';
import { ownerDatabaseUrl, withDatabase } from '../../src/db-url.ts';
import { PAGE_LIMIT_MAX } from '../../src/schemas/common.ts';
import { AUTOCOMPLETE_LIMIT_MAX, NEAR_RADIUS_MAX_M } from '../../src/schemas/parcels.ts';
import { createTestDatabase } from '../helpers/db.ts';

const MIGRATIONS = join(new URL('../..', import.meta.url).pathname, 'migrations');

t.test('migrations: up from empty, all the way down, up again; sql/ applies twice', async (t) => {
  const name = `test_migrate_${randomBytes(4).toString('hex')}`;
  const admin = postgres(withDatabase(ownerDatabaseUrl(), 'postgres'), { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE "${name}"`);
  const url = withDatabase(ownerDatabaseUrl(), name);
  t.teardown(async () => {
    await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  });
  const migrate = (direction: 'up' | 'down', count = Infinity) =>
    runner({
      databaseUrl: url,
      dir: MIGRATIONS,
      migrationsTable: 'pgmigrations',
      direction,
      count,
      log: () => {},
      checkOrder: true,
    });
  const up = await migrate('up');
  t.ok(up.length >= 5, `${up.length} migrations up`);
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end());
  await applySql(sql);
  await applySql(sql);
  const [fns] = await sql`SELECT count(*)::int AS n FROM pg_proc WHERE pronamespace = 'api'::regnamespace`;
  t.ok((fns?.n ?? 0) > 0, 'api functions exist after two applies');
  // Repeatable objects depend on the tables: going down starts by dropping them, as going up ends by applying them.
  await sql`DROP SCHEMA api CASCADE`;
  const down = await migrate('down');
  t.equal(down.length, up.length, 'every migration goes down');
  const [left] =
    await sql`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname IN ('core', 'accounts', 'meter', 'ingest')`;
  t.equal(left?.n, 0, 'no tables left');
  t.equal((await migrate('up')).length, up.length, 'and up again');
  await applySql(sql);
});

t.test('the api schema is the interface: its functions are the entry points, the helpers live in search', async (t) => {
  const db = await createTestDatabase();
  t.teardown(db.drop);
  const functions = await db.sql<{ name: string }[]>`
    SELECT DISTINCT p.proname AS name FROM pg_proc p WHERE p.pronamespace = 'api'::regnamespace ORDER BY 1`;
  t.same(
    functions.map((f) => f.name),
    [
      'autocomplete_parcels',
      'basemap_tile',
      'certificate_payoff',
      'count_parcel_sales',
      'count_parcels',
      'count_sales',
      'count_tax_delinquencies',
      'count_tax_delinquencies_matching',
      'count_tax_delinquency_sources',
      'facet_parcels',
      'get_account_usage',
      'get_county',
      'get_parcel',
      'get_parcel_by_parcel_id',
      'get_tax_delinquencies_by_parcel',
      'get_tax_delinquency_freshness',
      'list_counties',
      'list_parcel_sales',
      'list_tax_delinquency_sources',
      'list_tax_delinquency_sources_by_county',
      'parcel_certificates',
      'parcel_features',
      'parcel_history',
      'parcel_query_words',
      'parcel_sale_hits',
      'parcel_search_hits',
      'parcel_tile',
      'parcel_tile_zooms',
      'sale_search_hits',
      'search_parcels',
      'search_sales',
      'search_tax_delinquencies',
      'tax_delinquency_search_hits',
      'tax_delinquency_source_hits',
    ],
    '\\df api.* lists the reads the API and psql users call, nothing else',
  );
  const [helpers] = await db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM pg_proc WHERE pronamespace = 'search'::regnamespace`;
  t.ok(helpers!.n > 30, `${helpers!.n} helpers in search`);
});

t.test('every api function and view has a COMMENT ON, and the API role cannot write', async (t) => {
  const db = await createTestDatabase();
  t.teardown(db.drop);
  const undocumented = await db.sql`
    SELECT p.proname AS name FROM pg_proc p WHERE p.pronamespace = 'api'::regnamespace AND obj_description(p.oid, 'pg_proc') IS NULL
    UNION ALL
    SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'api'::regnamespace AND c.relkind IN ('v', 'm') AND obj_description(c.oid, 'pg_class') IS NULL`;
  t.same(
    undocumented.map((r) => r.name),
    [],
    'no api object without a comment',
  );

  const api = postgres(db.apiUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => api.end());
  const counties = await api`SELECT * FROM api.list_counties()`;
  t.ok(Array.isArray(counties), 'the API role reads through api.*');
  for (const write of [
    api`UPDATE core.counties SET name = 'X' WHERE id = 1`,
    api`INSERT INTO accounts.clients (name, email, plan) VALUES ('x', 'x@y.z', 'pro')`,
    api`DELETE FROM meter.ledger`,
    api`SELECT * FROM accounts.api_keys`,
  ]) {
    await t.rejects(write, /permission denied/);
  }
  // the helpers run only inside an entry point, as api_definer
  const [hits] = await api<
    { total: number }[]
  >`SELECT total FROM api.parcel_search_hits(p_query => 'smith', p_limit => 1)`;
  t.ok(hits!.total > 0, 'an entry point runs its helpers');
  await t.rejects(
    api`SELECT search.parcel_where(search.parcel_filter_of(p_query => 'smith'), NULL)`,
    /permission denied/,
  );
  await t.rejects(api`SELECT search.ranked_in_full()`, /permission denied/);
  const [owners] = await db.sql<{ wrong: string[] }[]>`
    SELECT coalesce(array_agg(p.proname), '{}') AS wrong FROM pg_proc p
     WHERE p.pronamespace = 'api'::regnamespace AND NOT (p.prosecdef AND p.proconfig::text LIKE '%search_path=%')`;
  t.same(owners!.wrong, [], 'every entry point runs as its definer with a fixed search_path');
});

t.test('a bound stated by both the HTTP schema and SQL is the same number', async (t) => {
  const db = await createTestDatabase();
  t.teardown(db.drop);
  const [bounds] = await db.sql<{ limit: number; radius: number; suggestions: number }[]>`
    SELECT core.page_limit_max() AS limit, search.near_radius_max_m() AS radius,
           search.autocomplete_limit_max() AS suggestions`;
  t.equal(bounds!.limit, PAGE_LIMIT_MAX, 'page size');
  t.equal(bounds!.suggestions, AUTOCOMPLETE_LIMIT_MAX, 'autocomplete suggestions');
  t.equal(bounds!.radius, NEAR_RADIUS_MAX_M, 'near radius');
});

// PostgreSQL 15 plans a LANGUAGE sql function's body again at every call unless the planner inlines it (a body with
// FROM or a sub-SELECT, a SET clause, STRICT over a body that is not, IMMUTABLE over a STABLE call, a sub-SELECT as an
// argument all prevent it): 100 us to 1 ms a call. Once a session's plans are made, no read should run one.
t.test('the reads run no LANGUAGE sql function that the planner did not inline', async (t) => {
  const db = await createTestDatabase();
  t.teardown(db.drop);
  const reads = (tx: postgres.TransactionSql) => [
    tx`SELECT count(*) FROM api.parcel_search_hits(p_query => ${'SMITH JOHN'}, p_limit => 25, p_offset => 0)`,
    tx`SELECT count(*) FROM api.parcel_search_hits(p_query => ${'MARIA GARCIA'}, p_county => ${['miami-dade']},
                                                  p_limit => 25, p_offset => 0)`,
    tx`SELECT count(*) FROM api.parcel_search_hits(p_near_lat => ${25.772}, p_near_lng => ${-80.19},
                                                  p_radius_m => ${500}, p_limit => 25, p_offset => 0)`,
    tx`SELECT count(*) FROM api.parcel_search_hits(p_bbox => ${[-80.2, 25.76, -80.18, 25.78]}::float8[],
                                                  p_limit => 25, p_offset => 0)`,
    tx`SELECT count(*) FROM api.parcel_search_hits(p_point_lng => ${-80.19055}, p_point_lat => ${25.772025},
                                                  p_limit => 25, p_offset => 0)`,
    tx`SELECT count(*) FROM api.parcel_search_hits(p_county => ${['miami-dade']}, p_dor_use_code => ${['1']},
                                                  p_sort => 'just_value_desc', p_limit => 25, p_offset => 0)`,
    tx`SELECT api.facet_parcels(${['county', 'zip']}, p_county => ${['miami-dade']}) IS NULL`,
    tx`SELECT count(*) FROM api.get_parcel(${323})`,
    tx`SELECT count(*) FROM api.autocomplete_parcels(${'smith jo'}, ${['miami-dade']})`,
    tx`SELECT count(*) FROM api.get_parcel_by_parcel_id(${'miami-dade'}, ${'30-4918-004-1318'})`,
    tx`SELECT count(*) FROM api.list_parcel_sales(${323})`,
    tx`SELECT api.count_parcel_sales(${323})`,
    tx`SELECT count(*) FROM api.search_sales(p_county => ${['miami-dade']})`,
    tx`SELECT api.count_sales(p_county => ${['miami-dade']})`,
    tx`SELECT count(*) FROM api.get_account_usage(${'00000000-0000-0000-0000-000000000000'}::uuid)`,
    tx`SELECT count(*) FROM api.search_tax_delinquencies(p_county => ${['miami-dade']}, p_tax_year => ${2023})`,
    tx`SELECT api.count_tax_delinquencies_matching(p_county => ${['miami-dade']}, p_tax_year => ${2023})`,
    tx`SELECT count(*) FROM api.get_tax_delinquencies_by_parcel(${'01-3132-035-0010'}, ${'miami-dade'})`,
    tx`SELECT count(*) FROM api.count_tax_delinquencies(${'miami-dade'}, ${2023})`,
    tx`SELECT count(*) FROM api.list_counties()`,
    tx`SELECT count(*) FROM api.get_county(${'broward'})`,
    tx`SELECT count(*) FROM api.parcel_features(${[1, 5, 15]}::bigint[])`,
    tx`SELECT length(api.parcel_tile(16, 18168, 27910))`,
    tx`SELECT count(*) FROM api.certificate_payoff(${2}, ${'2026-05-20'}::date)`,
    tx`SELECT count(*) FROM api.parcel_certificates(${323})`,
    tx`SELECT count(*) FROM api.search_tax_delinquencies(p_county => ${['miami-dade']}, p_deed_eligible => true,
                                                        p_sort => 'expires_soonest')`,
  ];
  const sqlCalls = (tx: postgres.TransactionSql) => tx<{ fn: string; calls: number }[]>`
    SELECT p.oid::regprocedure::text AS fn, s.calls::int AS calls
      FROM pg_stat_xact_user_functions s JOIN pg_proc p ON p.oid = s.funcid
     WHERE p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'sql')`;
  const ran = await db.sql.begin(async (tx) => {
    // generic plans, so that the statements are not planned again with their values (which calls IMMUTABLE
    // functions of constants once, at planning)
    await tx`SET LOCAL track_functions = 'all'`;
    await tx`SET LOCAL plan_cache_mode = force_generic_plan`;
    for (const read of reads(tx)) await read;
    const planned = new Map((await sqlCalls(tx)).map((r) => [r.fn, r.calls]));
    for (const read of reads(tx)) await read;
    return (await sqlCalls(tx)).filter((r) => r.calls > (planned.get(r.fn) ?? 0)).map((r) => r.fn);
  });
  t.same(ran, [], 'the second time, every LANGUAGE sql function called was inlined');
});
