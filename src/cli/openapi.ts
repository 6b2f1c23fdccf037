import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config.js';
import { buildOpenApiDocument } from '../http/openapi.js';

// Writes the OpenAPI document (the same one GET /api/v1/openapi.json serves) to a file:
// `tsx src/cli/openapi.ts [FILE]`, default openapi/openapi.json.
const file = process.argv[2] ?? 'openapi/openapi.json';
const doc = buildOpenApiDocument({ serverUrl: loadConfig().PUBLIC_BASE_URL });
mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
writeFileSync(file, JSON.stringify(doc, null, 2) + '\n');
process.stdout.write(`wrote ${file}\n`);
