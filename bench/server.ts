// The benchmarks' API process: src/main.ts plus the floor routes under /bench (floor-routes.ts).
import { loadConfig } from '../src/config.ts';
import { serve } from '../src/server.ts';
import floorRoutes from './floor-routes.ts';

await serve(loadConfig(), [floorRoutes]);
