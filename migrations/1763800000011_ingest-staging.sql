-- Up Migration
-- Importer staging: UNLOGGED tables (nothing to WAL, nothing to replicate) that the importers COPY into and the
-- merge functions of sql/ingest read. Every row carries the core.load_history id of its run (load_id) and the
-- line of the source file it came from, so concurrent runs share the tables without seeing each other's rows and
-- rejects can name their line. Columns are already typed: the importers validate every value before COPY, so a
-- bad value is a reject row and never fails the COPY as a whole. No indexes: the merges read one load's rows
-- once, and an index would slow the COPY down.
CREATE UNLOGGED TABLE ingest.nal_stage (
  load_id               bigint NOT NULL,
  line_no               bigint NOT NULL,
  county_id             smallint NOT NULL,
  parcel_id             text NOT NULL,
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
  last_sale_price       bigint
);

CREATE UNLOGGED TABLE ingest.sdf_stage (
  load_id             bigint NOT NULL,
  line_no             bigint NOT NULL,
  county_id           smallint NOT NULL,
  parcel_id           text NOT NULL,
  sale_date           date NOT NULL,
  sale_price          bigint,
  book                text,
  page                text,
  instrument_number   text,
  qualification_code  text,
  vacant_improved     text,
  multi_parcel        boolean,
  sale_id_code        text,
  dor_use_code        text
);

-- wkt is the polygon as ogr2ogr wrote it (already in EPSG:4326); geom is filled by ingest.prepare_geometry.
CREATE UNLOGGED TABLE ingest.geometry_stage (
  load_id    bigint NOT NULL,
  line_no    bigint NOT NULL,
  county_id  smallint NOT NULL,
  parcel_id  text NOT NULL,
  wkt        text NOT NULL,
  geom       geometry(MultiPolygon, 4326)
);

CREATE UNLOGGED TABLE ingest.delinquency_stage (
  load_id                    bigint NOT NULL,
  line_no                    bigint NOT NULL,
  county_id                  smallint NOT NULL,
  parcel_id                  text NOT NULL,
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
  bid_rate                   numeric(5, 2)
);

-- Down Migration
DROP TABLE ingest.delinquency_stage;
DROP TABLE ingest.geometry_stage;
DROP TABLE ingest.sdf_stage;
DROP TABLE ingest.nal_stage;
