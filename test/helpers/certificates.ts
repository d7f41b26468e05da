// Records of this folder's own in Alachua (the fixtures load nothing there), so the worked cases do not move with
// the fixtures: one certificate per rule of docs/certificates.md, all dated 2024-06-01 with a $1,000.00 face.
import type postgres from 'postgres';

export const CASES = ['six', 'eighteen', 'zero', 'county', 'redeemed', 'unsold', 'cancelled'] as const;
export type Ids = Record<(typeof CASES)[number], string> & { parcel: number; parcelOther: string };

export async function arrangeCertificates(sql: postgres.Sql): Promise<Ids> {
  await sql`INSERT INTO core.counties (id, co_no, name, slug, fips) VALUES (1, 11, 'Alachua', 'alachua', '12001')
            ON CONFLICT (id) DO NOTHING`;
  const rows = await sql<{ id: string }[]>`
    INSERT INTO core.tax_delinquencies (county_id, parcel_id, tax_year, status, total_due, certificate_number,
      certificate_sale_date, face_amount, certificate_holder, certificate_interest_rate, bid_rate, county_purchase_date)
    VALUES
      (1, 'W-100', 2023, 'certificate_sold', 1000, 'W-6', '2024-06-01', 1000, 'ACME LLC', 6, 6, NULL),
      (1, 'W-200', 2023, 'certificate_sold', 1000, 'W-18', '2024-06-01', 1000, 'ACME LLC', 18, 18, NULL),
      (1, 'W-300', 2023, 'certificate_sold', 1000, 'W-0', '2024-06-01', 1000, 'ACME LLC', 0, 0, NULL),
      (1, 'W-400', 2023, 'struck', 1000, 'W-C', '2024-06-01', 1000, 'COUNTY HELD', 18, NULL, '2024-10-10'),
      (1, 'W-500', 2023, 'redeemed', 1000, 'W-R', '2024-06-01', 1000, 'ACME LLC', 6, 6, NULL),
      (1, 'W-200', 2024, 'delinquent', 812.5, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
      (1, 'W-600', 2023, 'cancelled', 1000, 'W-X', '2024-06-01', 1000, 'ACME LLC', 6, 6, NULL),
      (1, 'W-200', 2024, 'certificate_sold', 500, 'W-18B', '2025-06-01', 500, 'BETA FUND', 12, 12, NULL)
    RETURNING id::text`;
  const [parcel] = await sql<{ id: number }[]>`
    INSERT INTO core.parcels (county_id, parcel_id, owner_name) VALUES (1, 'W-200', 'WORKED CASE') RETURNING id::int`;
  const ids = Object.fromEntries(CASES.map((c, i) => [c, rows[i]!.id])) as unknown as Ids;
  ids.parcel = parcel!.id;
  ids.parcelOther = rows[7]!.id;
  return ids;
}
