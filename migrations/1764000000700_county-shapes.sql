-- Up Migration
-- The explorer's offline base map (docs/formats.md#base-map): where each county is, drawn from our own data.
-- core.county_shapes holds, per county, its seat (a known point, where the name goes until parcels are mapped) and
-- the area its mapped parcels cover, which ingest.refresh_county_shapes recomputes after a load (`make basemap`).
-- core.florida_outline is a coarse outline of the state (land, Lake Okeechobee left out, the Keys as a band), drawn
-- by hand from the state's well-known shape to about 5 km: the land under the counties before any are loaded.
CREATE TABLE core.county_shapes (
  county_id       smallint PRIMARY KEY REFERENCES core.counties(id),
  seat            text NOT NULL,
  seat_point      geometry(Point, 4326) NOT NULL,
  shape           geometry(MultiPolygon, 4326),
  label_point     geometry(Point, 4326) NOT NULL,
  parcels_mapped  integer NOT NULL DEFAULT 0,
  refreshed_at    timestamptz
);
COMMENT ON TABLE core.county_shapes IS
  'Per county: its seat (name and point), the area its mapped parcels cover (shape, NULL while none is mapped), where '
  'its name is drawn (label_point: inside the shape, else the seat) and how many parcels the shape was drawn from. '
  'Written by ingest.refresh_county_shapes; read by api.basemap_tile.';
COMMENT ON COLUMN core.county_shapes.shape IS
  'The union of the 0.01-degree grid cells (about 1 km) holding a mapped parcel''s centroid, gaps up to about 2 km '
  'closed, simplified to 0.002 degrees: a county as its parcels show it, not its legal boundary.';

INSERT INTO core.county_shapes (county_id, seat, seat_point, label_point)
SELECT v.id, v.seat, ST_SetSRID(ST_MakePoint(v.lng, v.lat), 4326), ST_SetSRID(ST_MakePoint(v.lng, v.lat), 4326)
  FROM (VALUES
    (1, 'Gainesville', -82.325, 29.652), (2, 'Macclenny', -82.122, 30.282), (3, 'Panama City', -85.660, 30.159),
    (4, 'Starke', -82.110, 29.944), (5, 'Titusville', -80.808, 28.612), (6, 'Fort Lauderdale', -80.137, 26.122),
    (7, 'Blountstown', -85.048, 30.444), (8, 'Punta Gorda', -82.045, 26.929), (9, 'Inverness', -82.330, 28.836),
    (10, 'Green Cove Springs', -81.678, 29.992), (11, 'East Naples', -81.766, 26.138), (12, 'Lake City', -82.639, 30.190),
    (13, 'Miami', -80.192, 25.762), (14, 'Arcadia', -81.858, 27.216), (15, 'Cross City', -83.125, 29.635),
    (16, 'Jacksonville', -81.656, 30.332), (17, 'Pensacola', -87.217, 30.421), (18, 'Bunnell', -81.258, 29.466),
    (19, 'Apalachicola', -84.983, 29.726), (20, 'Quincy', -84.583, 30.587), (21, 'Trenton', -82.818, 29.613),
    (22, 'Moore Haven', -81.093, 26.833), (23, 'Port St. Joe', -85.303, 29.812), (24, 'Jasper', -82.948, 30.518),
    (25, 'Wauchula', -81.811, 27.547), (26, 'LaBelle', -81.438, 26.762), (27, 'Brooksville', -82.388, 28.555),
    (28, 'Sebring', -81.441, 27.496), (29, 'Tampa', -82.457, 27.951), (30, 'Bonifay', -85.680, 30.792),
    (31, 'Vero Beach', -80.397, 27.639), (32, 'Marianna', -85.227, 30.775), (33, 'Monticello', -83.871, 30.545),
    (34, 'Mayo', -83.175, 30.053), (35, 'Tavares', -81.726, 28.804), (36, 'Fort Myers', -81.872, 26.640),
    (37, 'Tallahassee', -84.281, 30.438), (38, 'Bronson', -82.642, 29.448), (39, 'Bristol', -84.977, 30.432),
    (40, 'Madison', -83.413, 30.469), (41, 'Bradenton', -82.575, 27.499), (42, 'Ocala', -82.140, 29.187),
    (43, 'Stuart', -80.253, 27.197), (44, 'Key West', -81.782, 24.556), (45, 'Fernandina Beach', -81.463, 30.670),
    (46, 'Crestview', -86.571, 30.762), (47, 'Okeechobee', -80.830, 27.244), (48, 'Orlando', -81.379, 28.538),
    (49, 'Kissimmee', -81.408, 28.292), (50, 'West Palm Beach', -80.054, 26.715), (51, 'Dade City', -82.196, 28.365),
    (52, 'Clearwater', -82.800, 27.966), (53, 'Bartow', -81.843, 27.896), (54, 'Palatka', -81.638, 29.648),
    (55, 'St. Augustine', -81.313, 29.901), (56, 'Fort Pierce', -80.326, 27.447), (57, 'Milton', -87.040, 30.632),
    (58, 'Sarasota', -82.531, 27.336), (59, 'Sanford', -81.273, 28.801), (60, 'Bushnell', -82.113, 28.665),
    (61, 'Live Oak', -82.984, 30.295), (62, 'Perry', -83.582, 30.117), (63, 'Lake Butler', -82.339, 30.023),
    (64, 'DeLand', -81.303, 29.028), (65, 'Crawfordville', -84.375, 30.176), (66, 'DeFuniak Springs', -86.116, 30.721),
    (67, 'Chipley', -85.539, 30.782)
  ) AS v(id, seat, lng, lat);

CREATE TABLE core.florida_outline (
  id    smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  geom  geometry(MultiPolygon, 4326) NOT NULL
);
COMMENT ON TABLE core.florida_outline IS
  'One row: a coarse outline of Florida''s land (about 5 km; Lake Okeechobee left out, the Keys as a band), the land '
  'of the offline base map (api.basemap_tile, layer florida).';

INSERT INTO core.florida_outline (geom)
SELECT ST_Multi(ST_CollectionExtract(ST_MakeValid(ST_Difference(ST_Union(mainland, keys), okeechobee)), 3))
  FROM (SELECT
    ST_GeomFromText('POLYGON((-87.60 31.00, -85.00 31.00, -85.03 30.85, -84.86 30.71, -82.21 30.57, -82.04 30.37,
      -82.02 30.50, -81.94 30.70, -81.65 30.73, -81.45 30.71, -81.43 30.50, -81.39 30.30, -81.35 30.05, -81.28 29.88,
      -81.15 29.50, -81.00 29.20, -80.90 28.95, -80.72 28.70, -80.54 28.47, -80.58 28.20, -80.45 27.90, -80.33 27.50,
      -80.20 27.20, -80.08 26.95, -80.03 26.60, -80.07 26.30, -80.10 26.00, -80.12 25.80, -80.15 25.65, -80.30 25.40,
      -80.40 25.22, -80.55 25.20, -80.90 25.13, -81.10 25.13, -81.15 25.35, -81.35 25.70, -81.70 25.93, -81.82 26.15,
      -81.92 26.40, -82.05 26.50, -82.18 26.70, -82.28 26.90, -82.42 27.05, -82.55 27.30, -82.70 27.50, -82.75 27.70,
      -82.84 27.90, -82.82 28.15, -82.70 28.50, -82.73 28.75, -82.70 28.90, -82.82 29.05, -83.05 29.15, -83.20 29.35,
      -83.40 29.65, -83.60 29.90, -83.95 30.05, -84.20 30.08, -84.35 29.95, -84.60 29.85, -84.90 29.70, -85.30 29.68,
      -85.40 29.85, -85.60 30.05, -85.80 30.20, -86.20 30.35, -86.50 30.38, -86.90 30.38, -87.15 30.33, -87.45 30.29,
      -87.52 30.28, -87.60 30.40, -87.60 31.00))', 4326) AS mainland,
    ST_Buffer(ST_GeomFromText('LINESTRING(-80.33 25.30, -80.45 25.08, -80.63 24.92, -80.90 24.77, -81.09 24.71,
      -81.37 24.66, -81.58 24.59, -81.80 24.55)', 4326), 0.02, 'quad_segs=4') AS keys,
    ST_Buffer(ST_SetSRID(ST_MakePoint(-80.83, 26.95), 4326), 0.17, 'quad_segs=8') AS okeechobee) AS parts;

-- Down Migration
DROP TABLE core.florida_outline;
DROP TABLE core.county_shapes;
