// Alachua (the fixtures load nothing there) with six delinquency records and three sources of this file's own, so
// tests of the delinquency surface assert on data that does not move with the fixtures.
import type postgres from 'postgres';

/** Inserts the Alachua records and sources; returns the record ids in insertion order (A1..A6). */
export async function arrangeAlachua(sql: postgres.Sql) {
  await sql`INSERT INTO core.counties (id, co_no, name, slug, fips) VALUES
              (1, 11, 'Alachua', 'alachua', '12001'), (48, 58, 'Orange', 'orange', '12095')
            ON CONFLICT (id) DO NOTHING`;
  const rows = await sql<{ id: string }[]>`
    INSERT INTO core.tax_delinquencies (county_id, parcel_id, tax_year, status, delinquent_amount, total_due,
      certificate_number, certificate_sale_date, owner_name, site_address_full, source_vendor, face_amount,
      certificate_holder, certificate_interest_rate, bid_rate, ingested_at)
    VALUES
      (1, '01234-005-00', 2024, 'certificate_sold', 1000.10, 1500.50, 'AL-2024-0001', '2025-06-01', 'SMITH, JOHN A',
       '100 MAIN ST, GAINESVILLE', 'LienHub', 1200.00, 'ACME CAPITAL LLC', 5.25, 5.25, '2025-07-01T12:00:00Z'),
      (1, '01234-005-00', 2023, 'redeemed', 700, 800, 'AL-2023-0042', '2024-06-01', 'SMITH JOHN A', NULL, 'LienHub',
       750, 'BETA FUND', 0.25, 0.25, '2025-07-01T12:00:00Z'),
      (1, '09999-001-00', 2024, 'delinquent', 1400, 1500.50, NULL, NULL, 'O''NEIL-SMYTHE, MARY', NULL, 'LienHub',
       NULL, NULL, NULL, NULL, '2025-07-01T12:00:00Z'),
      (1, '07777-002-00', 2024, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       '2025-07-01T12:00:00Z'),
      (1, '05555-003-00', 2024, 'struck', 40, 50, 'AL-2024-0900', '2025-06-01', 'JOSÉ GARCÍA', NULL, 'RealTaxLien', 45,
       'ALACHUA COUNTY', 18, NULL, '2025-07-01T12:00:00Z'),
      (1, '06666-004-00', 2022, 'delinquent', 2000, 2500, NULL, NULL, 'DOE JANE', NULL, 'LienHub', NULL, NULL, NULL,
       NULL, '2025-07-01T12:00:00Z')
    RETURNING id::text`;
  await sql`INSERT INTO core.tax_delinquency_sources (county_id, tax_year, vendor, sale_url, download_url, source_kind,
              requires_login, last_checked_at, last_success_at, last_error, active, notes, created_at, updated_at)
            VALUES
              (1, 2024, 'LienHub', 'https://alachua.lienhub.com', NULL, 'cert_sale_portal', true,
               '2025-07-02T00:00:00Z', '2025-07-02T00:00:00Z', NULL, true, 'test feed',
               '2025-01-01T00:00:00Z', '2025-07-02T00:00:00Z'),
              (1, 2023, 'Grant Street Group', 'https://alachua.lienhub.com', 'https://example.test/2023.csv',
               'bulk_download', false, '2024-07-02T00:00:00Z', NULL, 'HTTP 503', false, '',
               '2024-01-01T00:00:00Z', '2024-07-02T00:00:00Z'),
              (1, 2022, 'LienHub', 'https://alachua.lienhub.com', NULL, 'cert_sale_portal', false, NULL, NULL, NULL, true,
               '', '2023-01-01T00:00:00Z', '2023-01-01T00:00:00Z')`;
  return rows.map((r) => r.id) as [string, string, string, string, string, string];
}
