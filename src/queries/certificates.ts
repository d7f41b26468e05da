// Certificate arithmetic: the only TypeScript that calls api.certificate_payoff and api.parcel_certificates.
import type { Sql } from '../plugins/db.ts';
import type { CertificatePayoff, ParcelCertificates } from '../schemas/certificates.ts';

/** One certificate's payoff on a day (default today in Florida); undefined when no record has that id. */
export async function getCertificatePayoff(
  sql: Sql,
  id: number,
  asOf: string | undefined,
): Promise<CertificatePayoff | undefined> {
  const [row] = await sql<CertificatePayoff[]>`
    SELECT * FROM api.certificate_payoff(p_id => ${id}::bigint, p_as_of => ${asOf ?? null}::date)`;
  return row;
}

/** A parcel's open certificates with their payoffs, and its unsold delinquent taxes; undefined for an unknown parcel. */
export async function getParcelCertificates(
  sql: Sql,
  id: number,
  asOf: string | undefined,
): Promise<ParcelCertificates | undefined> {
  const [row] = await sql<ParcelCertificates[]>`
    SELECT * FROM api.parcel_certificates(p_id => ${id}::bigint, p_as_of => ${asOf ?? null}::date)`;
  return row;
}
