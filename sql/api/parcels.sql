-- Parcels: the entry points (search with its total, count, facets, one parcel by id or by parcel id, a query's
-- reading for psql) and the shapes they return. The search engine behind them is the private schema search
-- (sql/search/parcel_*.sql: filter, words, place, postings, paging): one filter builder writes only the predicates a
-- request uses, so every combination of filters gets a plan of its own, and values are quoted with format('%L'):
-- nothing a client sends becomes SQL.

CREATE TYPE api.parcel_hit AS (
  id                    integer,
  parcel_id             text,
  county_slug           text,
  county_name           text,
  owner_name            text,
  site_address_full     text,
  site_city             text,
  site_state            text,
  site_zip              text,
  dor_use_code          text,
  property_use_code     text,
  land_use_description  text,
  just_value            float8,
  assessed_value        float8,
  taxable_value         float8,
  year_built            integer,
  last_sale_date        text,
  last_sale_price       float8,
  centroid_lat          float8,
  centroid_lng          float8,
  geometry              text
);
COMMENT ON TYPE api.parcel_hit IS
  'ParcelHit (interface 2.3) plus the internal id. geometry is a GeoJSON Polygon or MultiPolygon as text, filled only by the single-parcel reads.';

-- One query word and the vocabulary terms it matches, each with a match quality in (0, 1]: 1 for the word itself,
-- 1 - edits / length for a typo, the covered share for a prefix completion.
CREATE TYPE api.query_word AS (word text, terms text[], qualities float8[]);
COMMENT ON TYPE api.query_word IS 'A parcel-search query word and the vocabulary terms (with match qualities) it stands for.';

CREATE FUNCTION api.parcel_query_words(p_query text) RETURNS api.query_word[]
  LANGUAGE plpgsql STABLE PARALLEL SAFE
  SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_words text[] := search.query_words(p_query);
  v_word text;
  v_word_terms record;
  v_held bigint[] := '{}';
  v_cut boolean[] := '{}';
  v_out api.query_word[] := '{}';
  v_wide api.query_word[] := '{}';
BEGIN
  FOREACH v_word IN ARRAY v_words LOOP
    v_word_terms := search.parcel_word_terms(v_word, v_words, false);
    -- a word that matches nothing in the vocabulary cannot narrow the search: it is left out
    IF cardinality((v_word_terms.reading).terms) > 0 THEN
      v_out := v_out || v_word_terms.reading;
      v_held := v_held || v_word_terms.held;
      v_cut := v_cut || (v_word_terms.cut AND v_word_terms.held <= search.ranked_in_full());
    END IF;
  END LOOP;
  -- Few matches: the caps on a rare word's typos kept out spellings that would rank in the first page (MARGARET
  -- DAIRILEY matches 2 parcels through DAIRILEY's 21 terms one edit away, 187 through the 128 closest of its 363
  -- within two). When the words as read are held together by fewer than search.few_matches() parcels, the rare
  -- words (their terms held by at most search.ranked_in_full() parcels, so that counting the matches is cheap too)
  -- are read again wide (search.wide_typo_terms()); common words keep their reading. A rare word whose caps cut
  -- nothing reads the same either way, so the matches are counted only when some rare word was cut (most queries:
  -- none was).
  IF true = ANY (v_cut)
     AND search.parcel_postings_count(search.parcel_postings_match(v_out, NULL, 0, search.few_matches())) < search.few_matches() THEN
    FOR i IN 1 .. cardinality(v_out) LOOP
      v_wide := v_wide || CASE WHEN v_cut[i] THEN (search.parcel_word_terms((v_out[i]).word, v_words, true)).reading
                               ELSE v_out[i] END;
    END LOOP;
    RETURN v_wide;
  END IF;
  RETURN v_out;
END $$;
COMMENT ON FUNCTION api.parcel_query_words(text) IS
  'How parcel search reads a query: its words (search.query_words: normalized, name particles joined, optional words '
  'such as LLC left out; at most 12), each with the vocabulary terms it '
  'matches (core.parcel_terms): the word itself; unless it is a number or a lone word held by 1,000 parcels or more, '
  'for words of 3 to 20 characters, up to 16 terms within 1 edit (2 for words of 6+ letters with fewer than 16 terms '
  '1 edit away), or up to 64 while they are held by at most 5,000 parcels together, found through the deletion index '
  '(core.parcel_term_deletes); for a last word held by fewer than 1,000 parcels, up to 5 completions. When the words '
  'so read are held together by fewer than 25 parcels, each rare word (its terms held by at most 5,000 parcels) '
  'stands instead for its 128 closest terms within its edits (1, or 2 for 6+ letters; closest: the fewest edits for '
  'the length, as they rank): a page of few matches is filled with the next-closest spellings. A word of the query '
  'is never a typo or completion of another. Words matching nothing are left out. '
  'Example: SELECT * FROM unnest(api.parcel_query_words(''smyth jon''));';

CREATE FUNCTION api.parcel_search_hits(
  p_query text DEFAULT NULL, p_county text[] DEFAULT NULL, p_use_code text[] DEFAULT NULL, p_dor_use_code text[] DEFAULT NULL,
  p_city text DEFAULT NULL, p_zip text DEFAULT NULL,
  p_just_value_min float8 DEFAULT NULL, p_just_value_max float8 DEFAULT NULL,
  p_assessed_min float8 DEFAULT NULL, p_assessed_max float8 DEFAULT NULL,
  p_sale_after date DEFAULT NULL, p_sale_before date DEFAULT NULL,
  p_sale_price_min float8 DEFAULT NULL, p_sale_price_max float8 DEFAULT NULL,
  p_near_lat float8 DEFAULT NULL, p_near_lng float8 DEFAULT NULL, p_radius_m float8 DEFAULT NULL,
  p_bbox float8[] DEFAULT NULL, p_point_lng float8 DEFAULT NULL, p_point_lat float8 DEFAULT NULL,
  p_owner_changed_since integer DEFAULT NULL, p_just_value_change_min float8 DEFAULT NULL,
  p_just_value_change_max float8 DEFAULT NULL,
  p_sort text DEFAULT NULL, p_limit integer DEFAULT 25, p_offset integer DEFAULT 0,
  p_words api.query_word[] DEFAULT NULL,
  OUT total integer, OUT hits json
)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
  SET plan_cache_mode = force_generic_plan  -- the rows by a cached generic plan (see api.search_parcels)
AS $$
DECLARE
  v_ids bigint[];
BEGIN
  SELECT pg.ids, pg.total INTO v_ids, total
    FROM search.parcel_search_page(search.parcel_filter_of(p_query, p_county, p_use_code, p_dor_use_code, p_city, p_zip,
    p_just_value_min, p_just_value_max, p_assessed_min, p_assessed_max, p_sale_after, p_sale_before, p_sale_price_min,
    p_sale_price_max, p_near_lat, p_near_lng, p_radius_m, p_bbox, p_point_lng, p_point_lat, p_owner_changed_since,
    p_just_value_change_min, p_just_value_change_max),
    p_sort, p_limit, p_offset, p_words) pg;
  SELECT coalesce(json_agg(r), '[]') INTO hits FROM search.parcel_rows(v_ids, false) r;
END $$;
COMMENT ON FUNCTION api.parcel_search_hits(text, text[], text[], text[], text, text, float8, float8, float8, float8, date, date, float8, float8, float8, float8, float8, float8[], float8, float8, integer, float8, float8, text, integer, integer, api.query_word[]) IS
  'GET /v1/parcels/search in one call: the exact total (pagination.total) and the page as a JSON array of ParcelHit '
  'objects, in order (the rows of api.search_parcels for the same arguments). Example: '
  'SELECT total, hits FROM api.parcel_search_hits(p_query => ''smith john'', p_limit => 5);';

CREATE FUNCTION api.search_parcels(
  p_query text DEFAULT NULL, p_county text[] DEFAULT NULL, p_use_code text[] DEFAULT NULL, p_dor_use_code text[] DEFAULT NULL,
  p_city text DEFAULT NULL, p_zip text DEFAULT NULL,
  p_just_value_min float8 DEFAULT NULL, p_just_value_max float8 DEFAULT NULL,
  p_assessed_min float8 DEFAULT NULL, p_assessed_max float8 DEFAULT NULL,
  p_sale_after date DEFAULT NULL, p_sale_before date DEFAULT NULL,
  p_sale_price_min float8 DEFAULT NULL, p_sale_price_max float8 DEFAULT NULL,
  p_near_lat float8 DEFAULT NULL, p_near_lng float8 DEFAULT NULL, p_radius_m float8 DEFAULT NULL,
  p_bbox float8[] DEFAULT NULL, p_point_lng float8 DEFAULT NULL, p_point_lat float8 DEFAULT NULL,
  p_owner_changed_since integer DEFAULT NULL, p_just_value_change_min float8 DEFAULT NULL,
  p_just_value_change_max float8 DEFAULT NULL,
  p_sort text DEFAULT NULL, p_limit integer DEFAULT 25, p_offset integer DEFAULT 0,
  p_words api.query_word[] DEFAULT NULL
) RETURNS SETOF api.parcel_hit
  LANGUAGE plpgsql STABLE PARALLEL SAFE
  -- the page's rows by a cached generic plan: the same few index lookups whatever the ids, where a custom plan (chosen
  -- for short pages, whose estimate looks cheaper) costs more to plan than to run
  SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
  RETURN QUERY SELECT * FROM search.parcel_rows((search.parcel_search_page(search.parcel_filter_of(p_query, p_county, p_use_code, p_dor_use_code, p_city, p_zip,
    p_just_value_min, p_just_value_max, p_assessed_min, p_assessed_max, p_sale_after, p_sale_before, p_sale_price_min,
    p_sale_price_max, p_near_lat, p_near_lng, p_radius_m, p_bbox, p_point_lng, p_point_lat, p_owner_changed_since,
    p_just_value_change_min, p_just_value_change_max),
    p_sort, p_limit, p_offset, p_words, p_with_total => false)).ids, false);
END $$;
COMMENT ON FUNCTION api.search_parcels(text, text[], text[], text[], text, text, float8, float8, float8, float8, date, date, float8, float8, float8, float8, float8, float8[], float8, float8, integer, float8, float8, text, integer, integer, api.query_word[]) IS
  'GET /v1/parcels/search. Owner/address search (p_query: every word must match a word of the owner name or site address exactly, by a typo or, for the last word, as a prefix, see api.parcel_query_words; ranked by score, then an owner or address equal to the query, then id; beyond search.ranked_in_full() (5,000) matches paged tier by tier: exact text, every word exact (each by id), every word matched at least as well as the lowest quality level that bounds them to that number (by score), the rest (by id)), county slugs, use codes, city, zip, value and last-sale bounds, p_near_lat/p_near_lng/p_radius_m (metres, at most search.near_radius_max_m(): 50000), p_bbox {minLng,minLat,maxLng,maxLat}, p_point_lng/p_point_lat (parcels containing the point). p_sort: relevance (default with a query), distance (default with near), id (default otherwise), or just_value, assessed_value, taxable_value, last_sale_date, last_sale_price, year_built with _asc/_desc (parcels without the value last; ties broken by id in the sort''s direction). geometry is null. p_words: the query''s reading as api.parcel_query_words(p_query) returns it, for a caller that runs search, count and facets of one query and reads it once (NULL: read here). Example: SELECT * FROM api.search_parcels(p_query => ''smith john'', p_county => ''{miami-dade}'');';

CREATE FUNCTION api.count_parcels(
  p_query text DEFAULT NULL, p_county text[] DEFAULT NULL, p_use_code text[] DEFAULT NULL, p_dor_use_code text[] DEFAULT NULL,
  p_city text DEFAULT NULL, p_zip text DEFAULT NULL,
  p_just_value_min float8 DEFAULT NULL, p_just_value_max float8 DEFAULT NULL,
  p_assessed_min float8 DEFAULT NULL, p_assessed_max float8 DEFAULT NULL,
  p_sale_after date DEFAULT NULL, p_sale_before date DEFAULT NULL,
  p_sale_price_min float8 DEFAULT NULL, p_sale_price_max float8 DEFAULT NULL,
  p_near_lat float8 DEFAULT NULL, p_near_lng float8 DEFAULT NULL, p_radius_m float8 DEFAULT NULL,
  p_bbox float8[] DEFAULT NULL, p_point_lng float8 DEFAULT NULL, p_point_lat float8 DEFAULT NULL,
  p_owner_changed_since integer DEFAULT NULL, p_just_value_change_min float8 DEFAULT NULL,
  p_just_value_change_max float8 DEFAULT NULL,
  p_words api.query_word[] DEFAULT NULL
) RETURNS integer
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN search.parcel_count(search.parcel_filter_of(p_query, p_county, p_use_code, p_dor_use_code, p_city, p_zip,
    p_just_value_min, p_just_value_max, p_assessed_min, p_assessed_max, p_sale_after, p_sale_before, p_sale_price_min,
    p_sale_price_max, p_near_lat, p_near_lng, p_radius_m, p_bbox, p_point_lng, p_point_lat, p_owner_changed_since,
    p_just_value_change_min, p_just_value_change_max),
    search.parcel_words_of(p_query, p_words));
END $$;
COMMENT ON FUNCTION api.count_parcels(text, text[], text[], text[], text, text, float8, float8, float8, float8, date, date, float8, float8, float8, float8, float8, float8[], float8, float8, integer, float8, float8, api.query_word[]) IS
  'The exact number of parcels search_parcels matches for the same filters (pagination.total). p_words: as in search_parcels.';

CREATE FUNCTION api.facet_parcels(
  p_facets text[],
  p_query text DEFAULT NULL, p_county text[] DEFAULT NULL, p_use_code text[] DEFAULT NULL, p_dor_use_code text[] DEFAULT NULL,
  p_city text DEFAULT NULL, p_zip text DEFAULT NULL,
  p_just_value_min float8 DEFAULT NULL, p_just_value_max float8 DEFAULT NULL,
  p_assessed_min float8 DEFAULT NULL, p_assessed_max float8 DEFAULT NULL,
  p_sale_after date DEFAULT NULL, p_sale_before date DEFAULT NULL,
  p_sale_price_min float8 DEFAULT NULL, p_sale_price_max float8 DEFAULT NULL,
  p_near_lat float8 DEFAULT NULL, p_near_lng float8 DEFAULT NULL, p_radius_m float8 DEFAULT NULL,
  p_bbox float8[] DEFAULT NULL, p_point_lng float8 DEFAULT NULL, p_point_lat float8 DEFAULT NULL,
  p_owner_changed_since integer DEFAULT NULL, p_just_value_change_min float8 DEFAULT NULL,
  p_just_value_change_max float8 DEFAULT NULL,
  p_words api.query_word[] DEFAULT NULL
) RETURNS jsonb
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN search.parcel_facets(p_facets, search.parcel_filter_of(p_query, p_county, p_use_code, p_dor_use_code, p_city, p_zip,
    p_just_value_min, p_just_value_max, p_assessed_min, p_assessed_max, p_sale_after, p_sale_before, p_sale_price_min,
    p_sale_price_max, p_near_lat, p_near_lng, p_radius_m, p_bbox, p_point_lng, p_point_lat, p_owner_changed_since,
    p_just_value_change_min, p_just_value_change_max),
    search.parcel_words_of(p_query, p_words));
END $$;
COMMENT ON FUNCTION api.facet_parcels(text[], text, text[], text[], text[], text, text, float8, float8, float8, float8, date, date, float8, float8, float8, float8, float8, float8[], float8, float8, integer, float8, float8, api.query_word[]) IS
  'p_words: as in search_parcels. Counts per value over the whole filtered result (not a page) for each facet of p_facets (county, dor_use_code, property_use_code, city, zip): {"county": [{"value": "miami-dade", "count": 12}, ...]}, most frequent first, at most 100 values per facet, null for parcels without a value.';

CREATE FUNCTION api.get_parcel(p_id bigint) RETURNS SETOF api.parcel_hit
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN QUERY
  SELECT * FROM search.parcel_rows(ARRAY[p_id], true);
END $$;
COMMENT ON FUNCTION api.get_parcel(bigint) IS 'GET /v1/parcels/{id}: one parcel by internal id, with its polygon as GeoJSON text; no row when unknown.';

CREATE FUNCTION api.get_parcel_by_parcel_id(p_county text, p_parcel_id text) RETURNS SETOF api.parcel_hit
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  -- resolved first, on its own: inside the query an unknown county would raise only if the plan evaluated it, and a
  -- plan that finds no parcel by its id first never does (a 404 where a typo deserves its 400)
  v_county_ids smallint[] := core.county_ids(ARRAY[p_county]);
BEGIN
  -- (the id joined laterally, not passed as ARRAY(SELECT ...): a function whose argument is a sub-SELECT is not
  -- inlined, and parcel_rows would be planned again at every call)
  RETURN QUERY
  SELECT r.* FROM (SELECT p.id FROM core.parcels p
                    WHERE p.county_id = ANY (v_county_ids)
                      AND p.parcel_key = core.normalize_parcel_id(p_parcel_id)
                    ORDER BY p.id LIMIT 1) x
   CROSS JOIN LATERAL search.parcel_rows(ARRAY[x.id], true) r;
END $$;
COMMENT ON FUNCTION api.get_parcel_by_parcel_id(text, text) IS
  'GET /v1/parcels/by-parcel-id: a parcel by county slug and county-assigned parcel id, punctuation-insensitive (01-3132-035-0010 = 0131320350010; letters and leading zeros kept). Unknown county: 22023.';

CREATE FUNCTION api.autocomplete_parcels(p_query text, p_county text[] DEFAULT NULL, p_limit integer DEFAULT 10)
RETURNS TABLE (id integer, label text, owner_name text, site_address_full text, site_city text, county text)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  IF p_query IS NULL THEN PERFORM core.bad_input('q: is required'); END IF;
  PERFORM search.parcel_filter_of(p_query => p_query, p_county => p_county);  -- the query's and counties' checks
  IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND search.autocomplete_limit_max() THEN
    PERFORM core.bad_input(format('limit: must be between 1 and %s', search.autocomplete_limit_max()));
  END IF;
  -- (sql/search/autocomplete.sql: precomputed for one word of 1 to 3 characters, else live)
  RETURN QUERY
  SELECT p.id::int, CASE WHEN s.by_address THEN concat_ws(', ', p.site_address_full, p.site_city) ELSE p.owner_name END,
         p.owner_name, p.site_address_full, p.site_city, c.slug
    FROM search.autocomplete_ranked(p_query, search.parcel_postings_counties(p_county), p_limit) WITH ORDINALITY AS s(id, by_address, n)
    JOIN core.parcels p ON p.id = s.id
    JOIN core.counties c ON c.id = p.county_id
   ORDER BY s.n;
END $$;
COMMENT ON FUNCTION api.autocomplete_parcels(text, text[], integer) IS
  'GET /v1/parcels/autocomplete: suggestions for a search box as the user types. Every word but the last is read as '
  'parcel search reads it (typos included), the last as a prefix (search.autocomplete_reading); p_county: slugs; '
  'p_limit 1-20. Suggestions come best first: the side (address or owner name) the words match best, whole words '
  'before completions, an address before an owner name on a tie; label is the address with its city when the '
  'address matches at least as well, else the owner name. Example: SELECT * FROM api.autocomplete_parcels(''123 oak'');';
