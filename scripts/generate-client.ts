// `make client`: regenerates clients/typescript/schema.d.ts from the routes' OpenAPI document.
import { writeFileSync } from 'node:fs';
import { CLIENT_SCHEMA_PATH, clientSchemaSource, openApiDocument } from './client-schema.ts';

writeFileSync(CLIENT_SCHEMA_PATH, await clientSchemaSource(await openApiDocument()));
console.log(`wrote ${CLIENT_SCHEMA_PATH}`);
