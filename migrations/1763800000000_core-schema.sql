-- Up Migration
-- Stateful objects only: extensions, schemas, tables, indexes. Functions and views live in sql/ and are
-- re-applied after every migration (schema api is rebuilt from sql/api each time).
CREATE EXTENSION IF NOT EXISTS postgis;
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE SCHEMA IF NOT EXISTS core;
CREATE SCHEMA IF NOT EXISTS ingest;

-- The one parcel-id normalization, used by generated columns at load time and by api.* at query time:
-- upper case, every non-alphanumeric removed; letters and leading zeros kept, nothing reordered.
CREATE FUNCTION core.normalize_parcel_id(p_parcel_id text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  RETURN regexp_replace(upper(p_parcel_id), '[^A-Z0-9]', '', 'g');
COMMENT ON FUNCTION core.normalize_parcel_id(text) IS
  'Punctuation-insensitive parcel-id key: upper case, non-alphanumerics removed, letters and leading zeros kept.';

-- Search text normalization: upper case, punctuation to spaces, street suffixes to their USPS abbreviation
-- (DRIVE -> DR ...), unit designators dropped (UNIT 5, APT 5, # 5 -> 5), whitespace collapsed. Applied to stored
-- names and addresses and to queries alike, so "123 OAK DRIVE" and "123 OAK DR" are the same text.
CREATE FUNCTION core.normalize_text(p_text text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  RETURN btrim(regexp_replace(
    regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
    regexp_replace(regexp_replace(regexp_replace(regexp_replace(
      ' ' || regexp_replace(upper(p_text), '[^A-Z0-9&]+', ' ', 'g') || ' ',
      ' (UNIT|APT|APARTMENT|STE|SUITE) ', ' ', 'g'),
      ' DRIVE ', ' DR ', 'g'), ' STREET ', ' ST ', 'g'), ' AVENUE ', ' AVE ', 'g'), ' BOULEVARD ', ' BLVD ', 'g'),
      ' ROAD ', ' RD ', 'g'), ' LANE ', ' LN ', 'g'), ' COURT ', ' CT ', 'g'), ' TERRACE ', ' TER ', 'g'),
      ' PLACE ', ' PL ', 'g'), ' HIGHWAY ', ' HWY ', 'g'),
    '\s+', ' ', 'g'));
COMMENT ON FUNCTION core.normalize_text(text) IS
  'Search form of owner names and addresses: upper case, punctuation to spaces, street suffixes abbreviated (DRIVE -> DR), unit designators dropped, whitespace collapsed.';

CREATE TABLE core.counties (
  id                        smallint PRIMARY KEY CHECK (id BETWEEN 1 AND 67),  -- revenue-department number 01-67
  co_no                     smallint NOT NULL UNIQUE CHECK (co_no = id + 10),   -- FDOR CO_NO 11-77
  name                      text NOT NULL UNIQUE,
  slug                      text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9-]+$'),
  fips                      text NOT NULL UNIQUE CHECK (fips ~ '^12[0-9]{3}$'),
  property_appraiser_url    text,
  tax_collector_url         text,
  tax_certificate_sale_url  text,
  tax_certificate_vendor    text,
  parcel_count              integer NOT NULL DEFAULT 0,
  last_import_at            timestamptz,
  created_at                timestamptz NOT NULL DEFAULT now(),
  updated_at                timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE core.parcels (
  id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  county_id             smallint NOT NULL REFERENCES core.counties(id),
  parcel_id             text NOT NULL,
  parcel_key            text NOT NULL GENERATED ALWAYS AS (core.normalize_parcel_id(parcel_id)) STORED,
  roll_year             smallint,
  owner_name            text,
  owner_address1        text,
  owner_address2        text,
  owner_city            text,
  owner_state           text,
  owner_zip             text,
  site_address_full     text,
  site_city             text,
  site_state            text,
  site_zip              text,
  dor_use_code          text,
  property_use_code     text,
  land_use_description  text,
  just_value            bigint,
  assessed_value        bigint,
  taxable_value         bigint,
  land_value            bigint,
  year_built            smallint,
  effective_year_built  smallint,
  living_area_sqft      integer,
  land_area_sqft        bigint,
  building_count        integer,
  residential_units     integer,
  legal_description     text,
  state_parcel_id       text,
  alt_key               text,
  last_sale_date        date,
  last_sale_price       bigint,
  geom                  geometry(MultiPolygon, 4326),
  centroid              geometry(Point, 4326),
  owner_search          text GENERATED ALWAYS AS (core.normalize_text(owner_name)) STORED,
  address_search        text GENERATED ALWAYS AS (core.normalize_text(site_address_full)) STORED,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  UNIQUE (county_id, parcel_id)
);
CREATE INDEX parcels_county_key_idx ON core.parcels (county_id, parcel_key);
CREATE INDEX parcels_key_idx ON core.parcels (parcel_key);
CREATE INDEX parcels_owner_trgm_idx ON core.parcels USING gin (owner_search gin_trgm_ops);
CREATE INDEX parcels_address_trgm_idx ON core.parcels USING gin (address_search gin_trgm_ops);
CREATE INDEX parcels_geom_idx ON core.parcels USING gist (geom);
CREATE INDEX parcels_centroid_idx ON core.parcels USING gist (centroid);
CREATE INDEX parcels_county_use_value_idx ON core.parcels (county_id, dor_use_code, just_value DESC, id);
CREATE INDEX parcels_just_value_idx ON core.parcels (just_value DESC, id);
CREATE INDEX parcels_last_sale_idx ON core.parcels (last_sale_date DESC, id);
CREATE INDEX parcels_zip_idx ON core.parcels (site_zip);
CREATE INDEX parcels_city_idx ON core.parcels (upper(site_city));

CREATE TABLE core.sales (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  county_id           smallint NOT NULL REFERENCES core.counties(id),
  parcel_id           text NOT NULL,
  parcel_key          text NOT NULL GENERATED ALWAYS AS (core.normalize_parcel_id(parcel_id)) STORED,
  sale_date           date NOT NULL,
  sale_price          bigint,
  book                text,
  page                text,
  instrument_number   text,
  deed_code           text,
  qualification_code  text,
  vacant_improved     text,
  multi_parcel        boolean,
  sale_id_code        text,
  grantor             text,
  grantee             text,
  dor_use_code        text,
  source              text NOT NULL DEFAULT 'sdf',
  created_at          timestamptz NOT NULL DEFAULT now(),
  -- natural key of an FDOR sale, so a re-imported file changes nothing
  UNIQUE NULLS NOT DISTINCT (county_id, parcel_id, sale_date, book, page, instrument_number, sale_price)
);
CREATE INDEX sales_parcel_idx ON core.sales (county_id, parcel_key, sale_date DESC, id DESC);
CREATE INDEX sales_date_idx ON core.sales (sale_date DESC, id DESC);
CREATE INDEX sales_county_date_idx ON core.sales (county_id, sale_date DESC, id DESC);
CREATE INDEX sales_price_idx ON core.sales (sale_price DESC, id);

CREATE TABLE core.tax_delinquency_sources (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  county_id        smallint NOT NULL REFERENCES core.counties(id),
  tax_year         smallint NOT NULL,
  vendor           text NOT NULL,
  sale_url         text NOT NULL,
  download_url     text,
  source_kind      text NOT NULL,
  requires_login   boolean NOT NULL DEFAULT false,
  last_checked_at  timestamptz,
  last_success_at  timestamptz,
  last_error       text,
  active           boolean NOT NULL DEFAULT true,
  notes            text NOT NULL DEFAULT '',
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (county_id, tax_year)
);

CREATE TABLE core.tax_delinquencies (
  id                         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  county_id                  smallint NOT NULL REFERENCES core.counties(id),
  parcel_id                  text NOT NULL,
  parcel_key                 text NOT NULL GENERATED ALWAYS AS (core.normalize_parcel_id(parcel_id)) STORED,
  tax_year                   smallint,
  status                     text,
  delinquent_amount          numeric(14, 2),
  total_due                  numeric(14, 2),
  certificate_number         text,
  certificate_sale_date      date,
  owner_name                 text,
  site_address_full          text,
  source_vendor              text,
  face_amount                numeric(14, 2),
  certificate_holder         text,
  certificate_interest_rate  numeric(5, 2),
  bid_rate                   numeric(5, 2),
  owner_search               text GENERATED ALWAYS AS (core.normalize_text(owner_name)) STORED,
  ingested_at                timestamptz NOT NULL DEFAULT now(),
  created_at                 timestamptz NOT NULL DEFAULT now(),
  updated_at                 timestamptz NOT NULL DEFAULT now(),
  UNIQUE NULLS NOT DISTINCT (county_id, tax_year, parcel_key, certificate_number)
);
CREATE INDEX tax_delinquencies_county_year_status_idx ON core.tax_delinquencies (county_id, tax_year, status);
CREATE INDEX tax_delinquencies_key_idx ON core.tax_delinquencies (parcel_key, county_id);
CREATE INDEX tax_delinquencies_owner_trgm_idx ON core.tax_delinquencies USING gin (owner_search gin_trgm_ops);
CREATE INDEX tax_delinquencies_certificate_idx ON core.tax_delinquencies (certificate_number);
CREATE INDEX tax_delinquencies_due_idx ON core.tax_delinquencies (total_due DESC NULLS LAST, id);
CREATE INDEX tax_delinquencies_year_idx ON core.tax_delinquencies (tax_year DESC NULLS LAST, id);

-- One row per import run: what was loaded, from which file, with what outcome.
CREATE TABLE core.load_history (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  county_id      smallint REFERENCES core.counties(id),
  kind           text NOT NULL,
  file_name      text NOT NULL,
  file_sha256    text,
  status         text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
  rows_read      bigint NOT NULL DEFAULT 0,
  rows_loaded    bigint NOT NULL DEFAULT 0,
  rows_rejected  bigint NOT NULL DEFAULT 0,
  message        text,
  started_at     timestamptz NOT NULL DEFAULT now(),
  finished_at    timestamptz
);

-- Down Migration
DROP TABLE core.load_history;
DROP TABLE core.tax_delinquencies;
DROP TABLE core.tax_delinquency_sources;
DROP TABLE core.sales;
DROP TABLE core.parcels;
DROP TABLE core.counties;
DROP FUNCTION core.normalize_text(text);
DROP FUNCTION core.normalize_parcel_id(text);
-- CASCADE: the repeatable helpers of sql/core and sql/ingest live in these schemas too.
DROP SCHEMA ingest CASCADE;
DROP SCHEMA core CASCADE;
