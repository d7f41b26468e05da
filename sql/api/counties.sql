-- Counties: the 67 counties with their offices, certificate-sale vendor and load status.
CREATE OR REPLACE VIEW api.counties AS
SELECT c.id::text                               AS "id",
       c.name                                   AS "countyName",
       c.slug                                   AS "countySlug",
       c.fips                                   AS "countyFips",
       lpad(c.id::text, 2, '0')                 AS "dorCountyNumber",
       c.property_appraiser_url                 AS "propertyAppraiserUrl",
       c.tax_collector_url                      AS "taxCollectorUrl",
       c.tax_certificate_sale_url               AS "taxCertificateSaleUrl",
       c.tax_certificate_vendor                 AS "taxCertificateVendor",
       c.parcel_count                           AS "parcelCount",
       core.iso_utc(c.last_import_at)           AS "lastImportAt",
       core.iso_utc(c.created_at)               AS "createdAt",
       core.iso_utc(c.updated_at)               AS "updatedAt"
  FROM core.counties c;
COMMENT ON VIEW api.counties IS
  'CountyRecord (interface 2.2) for every Florida county. dorCountyNumber is the revenue-department number 01-67 (FDOR CO_NO minus 10).';

CREATE OR REPLACE FUNCTION api.list_counties() RETURNS SETOF api.counties
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN QUERY
  SELECT * FROM api.counties ORDER BY "countyName";
END $$;
COMMENT ON FUNCTION api.list_counties() IS 'All 67 counties as CountyRecord rows, alphabetical by county name. GET /v1/counties.';

CREATE OR REPLACE FUNCTION api.get_county(p_county text) RETURNS SETOF api.counties
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
  RETURN QUERY
  SELECT * FROM api.counties WHERE "countySlug" = lower(p_county);
END $$;
COMMENT ON FUNCTION api.get_county(text) IS
  'One county by slug (case-insensitive), for example get_county(p_county => ''miami-dade''); no row when unknown. GET /v1/counties/{county}.';
