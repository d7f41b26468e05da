-- Up Migration
-- How owner names and addresses are written, as data: core.search_word_rules holds every rule that makes two
-- spellings the same for search, and core.apply_search_word_rules() writes the functions that apply them (owner and
-- address normalization, a parcel's search terms, a query's words), then recomputes the rows whose stored search
-- columns change. A later change of rules is a migration that edits the rows and calls the procedure again.

CREATE TABLE core.search_word_rules (
  kind      text NOT NULL CHECK (kind IN ('same', 'particle', 'optional')),
  written   text PRIMARY KEY CHECK (written ~ '^[A-Z0-9&]+( [A-Z0-9&]+)*$'),
  reads_as  text CHECK ((kind = 'same') = (reads_as IS NOT NULL) AND reads_as ~ '^([A-Z0-9&]+( [A-Z0-9&]+)*)?$'),
  why       text NOT NULL
);
COMMENT ON TABLE core.search_word_rules IS
  'Search spellings, in normalized text (upper case, punctuation as spaces). same: the words `written` read as '
  '`reads_as` on both sides of a match (empty: dropped). particle: a name particle joined to the next word as an '
  'extra term (MC DONALD also holds MCDONALD; a query MC DONALD reads MCDONALD). optional: a word a query does not '
  'require when it has other words (a suffix such as LLC does not make every LLC a match). Applied by '
  'core.apply_search_word_rules().';

INSERT INTO core.search_word_rules (kind, written, reads_as, why) VALUES
  -- street suffixes to their USPS abbreviation, unit designators dropped
  ('same', 'DRIVE', 'DR', 'USPS street suffix'),
  ('same', 'STREET', 'ST', 'USPS street suffix'),
  ('same', 'AVENUE', 'AVE', 'USPS street suffix'),
  ('same', 'BOULEVARD', 'BLVD', 'USPS street suffix'),
  ('same', 'ROAD', 'RD', 'USPS street suffix'),
  ('same', 'LANE', 'LN', 'USPS street suffix'),
  ('same', 'COURT', 'CT', 'USPS street suffix'),
  ('same', 'TERRACE', 'TER', 'USPS street suffix'),
  ('same', 'PLACE', 'PL', 'USPS street suffix'),
  ('same', 'HIGHWAY', 'HWY', 'USPS street suffix'),
  ('same', 'CIRCLE', 'CIR', 'USPS street suffix'),
  ('same', 'PARKWAY', 'PKWY', 'USPS street suffix'),
  ('same', 'UNIT', '', 'unit designator: the number is what identifies the unit'),
  ('same', 'APT', '', 'unit designator'),
  ('same', 'APARTMENT', '', 'unit designator'),
  ('same', 'STE', '', 'unit designator'),
  ('same', 'SUITE', '', 'unit designator'),
  -- trusts, estates, joint owners: the roll's abbreviations and the words people type
  ('same', 'TRUST', 'TR', 'the roll writes TR'),
  ('same', 'TRUSTS', 'TR', 'the roll writes TR'),
  ('same', 'TRS', 'TR', 'the roll writes TR'),
  ('same', 'TRUSTEE', 'TR', 'the roll writes TR'),
  ('same', 'TRUSTEES', 'TR', 'the roll writes TR'),
  ('same', 'TTEE', 'TR', 'the roll writes TR'),
  ('same', 'TTEES', 'TR', 'the roll writes TR'),
  ('same', 'REVOCABLE', 'REV', 'REV TR, REVOCABLE TRUST'),
  ('same', 'ESTATE OF', 'EST', 'the roll writes EST'),
  ('same', 'EST OF', 'EST', 'the roll writes EST'),
  ('same', 'ESTATE', 'EST', 'the roll writes EST'),
  ('same', 'L E', 'LIFEEST', 'L/E, a life estate'),
  ('same', 'LIFE ESTATE', 'LIFEEST', 'L/E, a life estate'),
  ('same', 'LIFE EST', 'LIFEEST', 'L/E, a life estate'),
  ('same', 'ET AL', 'ETAL', 'and others'),
  ('same', 'ET UX', 'ETUX', 'and wife'),
  ('same', 'ET VIR', 'ETVIR', 'and husband'),
  ('same', 'JT TEN', 'JT', 'joint tenants'),
  ('same', 'JTWROS', 'JT', 'joint tenants with right of survivorship'),
  -- entities
  ('same', 'L L C', 'LLC', 'L.L.C.'),
  ('same', 'L L P', 'LLP', 'L.L.P.'),
  ('same', 'L P', 'LP', 'L.P.'),
  ('same', 'P A', 'PA', 'P.A., professional association'),
  ('same', 'INCORPORATED', 'INC', 'entity suffix'),
  ('same', 'CORPORATION', 'CORP', 'entity suffix'),
  ('same', 'LIMITED', 'LTD', 'entity suffix'),
  ('same', 'COMPANY', 'CO', 'entity suffix'),
  ('same', '&', 'AND', 'SMITH JOHN & MARY'),
  -- names
  ('same', 'SAINT', 'ST', 'ST JOHN = SAINT JOHN'),
  ('particle', 'MC', NULL, 'MC DONALD = MCDONALD'),
  ('particle', 'MAC', NULL, 'MAC ARTHUR = MACARTHUR'),
  ('particle', 'O', NULL, 'O''BRIEN is written O BRIEN'),
  ('particle', 'DE', NULL, 'DE LA CRUZ = DELACRUZ, DE JESUS = DEJESUS'),
  ('particle', 'DEL', NULL, 'DEL RIO = DELRIO'),
  ('particle', 'DELA', NULL, 'DELA CRUZ = DELACRUZ'),
  ('particle', 'DELLA', NULL, 'DELLA ROSA = DELLAROSA'),
  ('particle', 'LA', NULL, 'LA ROSA = LAROSA'),
  ('particle', 'LE', NULL, 'LE BLANC = LEBLANC'),
  ('particle', 'DI', NULL, 'DI MARCO = DIMARCO'),
  ('particle', 'DA', NULL, 'DA SILVA = DASILVA'),
  ('particle', 'DU', NULL, 'DU BOIS = DUBOIS'),
  ('particle', 'DOS', NULL, 'DOS SANTOS = DOSSANTOS'),
  ('particle', 'DAS', NULL, 'DAS NEVES = DASNEVES'),
  ('particle', 'VAN', NULL, 'VAN DYKE = VANDYKE'),
  ('particle', 'VON', NULL, 'VON BRAUN = VONBRAUN'),
  ('particle', 'DER', NULL, 'VAN DER BERG = VANDERBERG'),
  ('particle', 'DEN', NULL, 'VAN DEN BERG = VANDENBERG'),
  ('particle', 'TEN', NULL, 'TEN EYCK = TENEYCK'),
  ('optional', 'TR', NULL, 'trust'),
  ('optional', 'REV', NULL, 'revocable'),
  ('optional', 'EST', NULL, 'estate'),
  ('optional', 'LIFEEST', NULL, 'life estate'),
  ('optional', 'ETAL', NULL, 'and others'),
  ('optional', 'ETUX', NULL, 'and wife'),
  ('optional', 'ETVIR', NULL, 'and husband'),
  ('optional', 'JT', NULL, 'joint tenants'),
  ('optional', 'LLC', NULL, 'entity suffix'),
  ('optional', 'LLP', NULL, 'entity suffix'),
  ('optional', 'LP', NULL, 'entity suffix'),
  ('optional', 'PA', NULL, 'entity suffix'),
  ('optional', 'INC', NULL, 'entity suffix'),
  ('optional', 'CORP', NULL, 'entity suffix'),
  ('optional', 'LTD', NULL, 'entity suffix'),
  ('optional', 'CO', NULL, 'entity suffix'),
  ('optional', 'AND', NULL, 'SMITH JOHN AND MARY'),
  ('optional', 'OF', NULL, 'ESTATE OF, TRUST OF'),
  ('optional', 'THE', NULL, 'THE SMITH FAMILY TRUST');

-- Writes the functions the rules define, then recomputes what they change. Normalization is one regular expression
-- and a chain of literal replacements (longest spelling first, so ESTATE OF is read before ESTATE): a few
-- microseconds a value, where a loop over the rules would cost tens.
CREATE PROCEDURE core.apply_search_word_rules()
  LANGUAGE plpgsql
AS $proc$
DECLARE
  v_chain text := $$' ' || regexp_replace(upper(p_text), '[^A-Z0-9&]+', ' ', 'g') || ' '$$;
  v_rule record;
BEGIN
  FOR v_rule IN SELECT written, reads_as FROM core.search_word_rules WHERE kind = 'same'
                 ORDER BY length(written) DESC, written LOOP
    v_chain := format('replace(%s, %L, %L)', v_chain, ' ' || v_rule.written || ' ',
                      CASE WHEN v_rule.reads_as = '' THEN ' ' ELSE ' ' || v_rule.reads_as || ' ' END);
  END LOOP;
  EXECUTE format('CREATE OR REPLACE FUNCTION core.normalize_text(p_text text) RETURNS text
                    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT RETURN btrim(%s)', v_chain);
  COMMENT ON FUNCTION core.normalize_text(text) IS
    'Search form of owner names and addresses: upper case, punctuation to spaces, then every same-spelling rule of '
    'core.search_word_rules (DRIVE -> DR, TRUSTEE -> TR, L E -> LIFEEST, unit designators dropped). Written by '
    'core.apply_search_word_rules().';
  EXECUTE format('CREATE OR REPLACE FUNCTION core.search_particles() RETURNS text[]
                    LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN %L::text[]',
                 (SELECT coalesce(array_agg(written ORDER BY written), '{}') FROM core.search_word_rules WHERE kind = 'particle'));
  COMMENT ON FUNCTION core.search_particles() IS
    'The name particles of core.search_word_rules (MC, DE, VAN, ...). Written by core.apply_search_word_rules().';
  EXECUTE format('CREATE OR REPLACE FUNCTION core.search_optional_words() RETURNS text[]
                    LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN %L::text[]',
                 (SELECT coalesce(array_agg(written ORDER BY written), '{}') FROM core.search_word_rules WHERE kind = 'optional'));
  COMMENT ON FUNCTION core.search_optional_words() IS
    'The words of core.search_word_rules a query does not require (LLC, TR, AND, ...). Written by '
    'core.apply_search_word_rules().';

  -- the stored search columns follow (the term, postings and deletion tables through their triggers); an UPDATE
  -- recomputes only the generated columns of the columns it sets, so it sets both
  UPDATE core.parcels SET owner_name = owner_name, site_address_full = site_address_full
   WHERE owner_search IS DISTINCT FROM core.normalize_text(owner_name)
      OR address_search IS DISTINCT FROM core.normalize_text(site_address_full)
      OR search_terms IS DISTINCT FROM core.search_terms(owner_name, site_address_full);
  UPDATE core.tax_delinquencies SET owner_name = owner_name
   WHERE owner_search IS DISTINCT FROM core.normalize_text(owner_name);
END $proc$;
COMMENT ON PROCEDURE core.apply_search_word_rules() IS
  'Writes core.normalize_text, core.search_particles and core.search_optional_words from core.search_word_rules and '
  'recomputes the parcels and delinquency records whose search columns change. Call it after editing the rules.';

-- A run of particles and the word after it, joined (DE LA CRUZ -> DELACRUZ); a number ends a run.
CREATE FUNCTION core.join_particles(p_words text[]) RETURNS text[]
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT
AS $$
DECLARE
  v_run text := '';
  v_out text[] := '{}';
  v_word text;
BEGIN
  FOREACH v_word IN ARRAY p_words LOOP
    IF v_word = ANY (core.search_particles()) THEN
      v_run := v_run || v_word;
    ELSE
      IF v_run <> '' AND v_word !~ '^[0-9]' THEN v_out := v_out || (v_run || v_word); END IF;
      v_run := '';
    END IF;
  END LOOP;
  RETURN v_out;
END $$;
COMMENT ON FUNCTION core.join_particles(text[]) IS
  'The joined form of each run of name particles (core.search_particles) and the word after it: '
  '{MC,DONALD,JOHN} -> {MCDONALD}; {SMITH,DE,LA,CRUZ} -> {DELACRUZ}.';

-- (PL/pgSQL: each text is normalized once, and only texts holding a particle are scanned for runs)
CREATE OR REPLACE FUNCTION core.search_terms(p_owner text, p_address text) RETURNS text[]
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
  v_owner text[] := coalesce(string_to_array(core.normalize_text(p_owner), ' '), '{}');
  v_address text[] := coalesce(string_to_array(core.normalize_text(p_address), ' '), '{}');
BEGIN
  RETURN array_remove(v_owner || v_address, '')
         || CASE WHEN v_owner && core.search_particles() THEN core.join_particles(v_owner) ELSE '{}' END
         || CASE WHEN v_address && core.search_particles() THEN core.join_particles(v_address) ELSE '{}' END;
END $$;
COMMENT ON FUNCTION core.search_terms(text, text) IS
  'The words of a parcel''s normalized owner name and site address (core.normalize_text), in order, then the joined '
  'form of each run of name particles (MC DONALD also holds MCDONALD): what parcel search matches query words against.';

CALL core.apply_search_word_rules();

-- Down Migration
DROP PROCEDURE core.apply_search_word_rules();
CREATE OR REPLACE FUNCTION core.search_terms(p_owner text, p_address text) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN array_remove(string_to_array(coalesce(core.normalize_text(p_owner), '') || ' '
                                      || coalesce(core.normalize_text(p_address), ''), ' '), '');
DROP FUNCTION core.join_particles(text[]);
DROP FUNCTION core.search_particles();
DROP FUNCTION core.search_optional_words();
CREATE OR REPLACE FUNCTION core.normalize_text(p_text text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  RETURN btrim(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(' ' || regexp_replace(upper(p_text), '[^A-Z0-9&]+', ' ', 'g') || ' ', ' DRIVE ', ' DR '), ' STREET ', ' ST '), ' AVENUE ', ' AVE '), ' BOULEVARD ', ' BLVD '), ' ROAD ', ' RD '), ' LANE ', ' LN '), ' COURT ', ' CT '), ' TERRACE ', ' TER '), ' PLACE ', ' PL '), ' HIGHWAY ', ' HWY '), ' UNIT ', ' '), ' APT ', ' '), ' APARTMENT ', ' '), ' STE ', ' '), ' SUITE ', ' '));
UPDATE core.parcels SET owner_name = owner_name, site_address_full = site_address_full
 WHERE owner_search IS DISTINCT FROM core.normalize_text(owner_name)
    OR address_search IS DISTINCT FROM core.normalize_text(site_address_full)
    OR search_terms IS DISTINCT FROM core.search_terms(owner_name, site_address_full);
UPDATE core.tax_delinquencies SET owner_name = owner_name
 WHERE owner_search IS DISTINCT FROM core.normalize_text(owner_name);
DROP TABLE core.search_word_rules;
