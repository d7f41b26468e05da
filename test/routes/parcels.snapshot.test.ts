// Fixture regression set: whole response bodies of representative parcel and sale requests, compared with the
// committed snapshots in tap-snapshots/ (regenerate deliberately with TAP_SNAPSHOT=1 after reviewing the diff).
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';

const { get } = await buildTestApp(t);
const REQUESTS = [
  '/v1/parcels/search?query=smith%20john&limit=5',
  '/v1/parcels/search?query=john%20smith&limit=5',
  '/v1/parcels/search?query=smyth&limit=5',
  '/v1/parcels/search?query=garcia%20maria&county=broward&limit=5',
  '/v1/parcels/search?query=sunshine%20holdings&limit=3',
  '/v1/parcels/search?query=revocable%20trust&limit=5',
  '/v1/parcels/search?query=est%20of&limit=5',
  '/v1/parcels/search?query=123%20oak%20drive&limit=3',
  '/v1/parcels/search?query=500%20brickell&limit=5',
  '/v1/parcels/search?query=3000%20n%20ocean%20blvd%205&limit=3',
  '/v1/parcels/search?query=miami-dade%20county&limit=3',
  '/v1/parcels/search?query=wells%20fargo&county=hillsborough',
  '/v1/parcels/search?county=liberty&limit=5',
  '/v1/parcels/search?county=alachua',
  '/v1/parcels/search?county=orange&dor_use_code=1700&sort=just_value_desc&limit=5',
  '/v1/parcels/search?county=miami-dade&dor_use_code=0100&sort=just_value_desc&limit=5&facets=city,zip',
  '/v1/parcels/search?county=broward&dor_use_code=04&sort=last_sale_date_desc&limit=5',
  '/v1/parcels/search?county=palm-beach&sort=taxable_value_asc&limit=5',
  '/v1/parcels/search?county=hillsborough&sort=year_built_desc&limit=5',
  '/v1/parcels/search?city=orlando&sort=assessed_value_desc&limit=5',
  '/v1/parcels/search?zip=33130&limit=5',
  '/v1/parcels/search?just_value_min=4000000&sort=just_value_asc&limit=5',
  '/v1/parcels/search?sale_after=2024-01-01&sort=last_sale_price_desc&limit=5',
  '/v1/parcels/search?sale_before=1999-12-31&sort=last_sale_date_asc&limit=5',
  '/v1/parcels/search?use_code=0404&county=miami-dade&limit=3',
  '/v1/parcels/search?near=25.770135,-80.19985&radius_m=50&limit=5',
  '/v1/parcels/search?point=-80.19985,25.770135',
  '/v1/parcels/search?point=-80.1997,25.770135',
  '/v1/parcels/search?bbox=-80.19997,25.770027,-80.19943,25.770243',
  '/v1/parcels/search?county=liberty,orange&limit=1&facets=county,dor_use_code,property_use_code',
  '/v1/parcels/search?county=broward&limit=5&offset=300',
  '/v1/parcels/1',
  '/v1/parcels/5',
  '/v1/parcels/15',
  '/v1/parcels/99999999',
  '/v1/parcels/by-parcel-id?county=miami-dade&parcel_id=01-3132-035-0010',
  '/v1/parcels/by-parcel-id?county=broward&parcel_id=4942-13-BA-0140',
  '/v1/parcels/by-parcel-id?county=liberty&parcel_id=011S07000000100000',
  '/v1/parcels/by-parcel-id?county=alachua&parcel_id=1',
  '/v1/parcels/1/sales',
  '/v1/parcels/4/sales',
  '/v1/sales/search?county=miami-dade&limit=5',
  '/v1/sales/search?county=broward&sort=price_desc&limit=5',
  '/v1/sales/search?from=2024-01-01&sort=date_oldest&limit=5',
  '/v1/sales/search?county=alachua',
  '/v1/parcels/search?sort=cheapest',
];

for (const url of REQUESTS) {
  t.test(url, async (t) => {
    const res = await get(url);
    const body = JSON.parse(res.body.replace(/req_[a-f0-9]+/g, 'req_SNAPSHOT'));
    t.matchSnapshot({ status: res.statusCode, body }, url);
  });
}
