// Counties: the only TypeScript that calls api.list_counties / api.get_county.
import type { Sql } from '../plugins/db.ts';
import type { CountyRecord } from '../schemas/counties.ts';

export const listCounties = (sql: Sql) => sql<CountyRecord[]>`SELECT * FROM api.list_counties()`;

export async function getCounty(sql: Sql, county: string): Promise<CountyRecord | undefined> {
  const [row] = await sql<CountyRecord[]>`SELECT * FROM api.get_county(p_county => ${county})`;
  return row;
}
