import { z } from 'zod';
import { DAILY_QUOTA, SEES_FLAGGED, TIERS } from '../domain/tiers.js';
import { changesQuery } from './routes/changes.js';
import { communesQuery } from './routes/communes.js';
import { statsQuery } from './routes/stats.js';
import { listingsQueryShape } from './schemas/listings.js';
import { marketHistoryQueryShape, marketHistorySchema, marketPricesQuery, marketPricesSchema } from './schemas/market.js';
import {
  changesPageSchema,
  communesSchema,
  healthSchema,
  listingSchema,
  listingsPageSchema,
  problemSchema,
  readinessSchema,
  statsSchema,
} from './schemas/responses.js';
import { queryParamMeta } from './validate.js';

// The OpenAPI 3.1 document, generated from the zod schemas that validate the requests
// (query parameters, with their rules carried as metadata) and shape the responses.

type Schema = Record<string, unknown>;

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const problem = (description: string, codes: string[], headers: Schema = {}) => ({
  description: `${description} (code: ${codes.join(', ')})`,
  headers,
  content: { 'application/problem+json': { schema: ref('Problem') } },
});

const rateLimitHeaders = {
  'RateLimit-Policy': { description: 'Daily quota policy, e.g. 100;w=86400 (Free and Starter keys)', schema: { type: 'string' } },
  'RateLimit-Limit': { description: 'Requests allowed per UTC day', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left today', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the quota resets at 00:00 UTC', schema: { type: 'integer' } },
};
const commonHeaders = {
  'X-Request-Id': { description: 'Id of this request (the client’s own when it sent a sane one)', schema: { type: 'string' } },
  ETag: { description: 'Entity tag (weak); send it back in If-None-Match to get a 304, which does not count against the quota', schema: { type: 'string' } },
};
// A 304 of a keyed path: the same ETag, request id and quota fields as its 200.
function notModified(what = 'If-None-Match matched the ETag') {
  return {
    description: `Not modified (${what}). Not counted against the quota when If-None-Match named a tag; counted for If-None-Match: *`,
    headers: { ...commonHeaders, ...rateLimitHeaders },
  };
}
const retryAfter = { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } };
// While the service starts (the embedded database, the demo data, a start waiting for
// PostgreSQL), every path answers this 503, the health checks too; so does a cluster's worker
// that drains before it stops (src/http/raw-responses.ts: startingListener, stoppingListener).
const notServing = problem('The service is starting, or this server process is stopping: retry after the seconds of Retry-After', ['unavailable'], retryAfter);
// A health answer: never kept (no-store), so no ETag and never a 304 (src/http/routes/health.ts).
const healthHeaders = {
  'X-Request-Id': commonHeaders['X-Request-Id'],
  'Cache-Control': { description: 'no-store', schema: { type: 'string' } },
};

function queryParameters(shape: z.ZodObject<z.ZodRawShape>) {
  return Object.entries(shape.shape).map(([name, field]) => {
    const meta = queryParamMeta(field as z.ZodType);
    return {
      name,
      in: 'query',
      required: !(field instanceof z.ZodOptional),
      ...(meta?.description ? { description: meta.description } : {}),
      schema: meta?.schema ?? { type: 'string' },
      ...(meta?.example !== undefined ? { example: meta.example } : {}),
    };
  });
}

function keyedErrors(extra: Record<string, unknown> = {}) {
  return {
    '400': problem('Invalid or unknown query parameter', ['invalid_parameter', 'unknown_parameter']),
    '401': problem('Missing, malformed, unknown or revoked API key', ['unauthorized', 'invalid_key'], {
      'WWW-Authenticate': { description: 'Bearer realm="api" (with error="invalid_token" for a bad key)', schema: { type: 'string' } },
    }),
    ...extra,
    '429': problem('Daily quota exceeded', ['quota_exceeded'], retryAfter),
    '503': problem('The database is unreachable', ['unavailable'], retryAfter),
    '500': problem('Internal error', ['internal']),
  };
}

function json(description: string, schemaId: string, headers: Schema = {}) {
  return { description, headers: { ...commonHeaders, ...headers }, content: { 'application/json': { schema: ref(schemaId) } } };
}

export function buildOpenApiDocument(opts: { serverUrl: string; version?: string }) {
  // Every response schema carries a zod `id` (see schemas/responses.ts); the global registry
  // turns them into components with $refs between them.
  void [listingSchema, listingsPageSchema, changesPageSchema, marketPricesSchema, marketHistorySchema, statsSchema, communesSchema, problemSchema, healthSchema, readinessSchema];
  const generated = z.toJSONSchema(z.globalRegistry, {
    target: 'draft-2020-12',
    io: 'output',
    unrepresentable: 'any',
    uri: (id: string) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Schema> };
  const schemas: Record<string, Schema> = {};
  for (const [name, s] of Object.entries(generated.schemas)) {
    const { id: _id, ...rest } = s; // zod's own `id` keyword at the top of each component
    schemas[name] = tidy(rest) as Schema;
  }

  const tierLines = TIERS.map(
    (t) => `| ${t[0].toUpperCase()}${t.slice(1)} | ${DAILY_QUOTA[t] === null ? 'unlimited' : DAILY_QUOTA[t]!.toLocaleString('en')} | ${SEES_FLAGGED[t] ? 'yes' : 'no'} |`,
  );
  const description = [
    'One clean, read-only feed of the property listings of Luxembourg: agency feeds and native posts, normalized and deduplicated across sources.',
    '',
    'Authenticate with `Authorization: Bearer <key>` (keys are created on the /api-keys page). Every endpoint except /stats, /openapi.json and the health checks needs a key.',
    '',
    '| tier | requests per UTC day | flagged data |',
    '|---|---|---|',
    ...tierLines,
    '',
    'Quotas count per key and per UTC day and reset at 00:00 UTC. Every request counts, errors too, except those answered 405 (refused before the key is read), 429, 503 when the key could not be checked (the database unreachable), and 304 to an If-None-Match naming a tag found current (revalidating the copy you hold costs nothing). A 304 to If-None-Match: * counts; If-Modified-Since alone never makes a JSON answer 304 (it is answered and counted). A key over quota gets 429 for conditional requests too. Free and Starter responses carry RateLimit-Policy, RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset. Over quota: 429 quota_exceeded with Retry-After (seconds until midnight UTC).',
    '',
    'Errors are RFC 9457 problem details (application/problem+json) with a stable `code`.',
    '',
    // The guide is a file of the repository, not a page of this server: named, not linked.
    'The integrators\' guide, docs/integrators.md in the project\'s repository, says the same in prose with examples: every endpoint and error, caching with ETag and 304, quotas, flagged data, paging and the typed client.',
  ].join('\n');

  const keyed = [{ bearerAuth: [] as string[] }];
  const doc = {
    openapi: '3.1.0',
    info: {
      title: 'Luxembourg listings feed API',
      version: opts.version ?? '1.0.0',
      description,
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      contact: { name: 'API support', email: 'support@listings-feed.example' },
    },
    servers: [{ url: opts.serverUrl }],
    security: keyed,
    tags: [
      { name: 'listings', description: 'Listings, filterable and searchable by radius' },
      { name: 'market', description: 'Live market prices per commune, and their history' },
      { name: 'reference', description: 'Reference data' },
      { name: 'stats', description: 'Public statistics' },
      { name: 'operations', description: 'Health checks and the API description' },
    ],
    paths: {
      '/api/v1/listings': {
        get: {
          operationId: 'listListings',
          tags: ['listings'],
          summary: 'A page of active listings',
          description:
            'Filters combine. A partial geo triple is 400 naming the missing parameters. Free and Starter keys never see flagged listings. The Link header (RFC 8288) gives first, prev, next and last pages.',
          parameters: queryParameters(listingsQueryShape),
          responses: {
            '200': json('A page of listings', 'ListingsPage', {
              ...rateLimitHeaders,
              Link: { description: 'first, prev, next and last pages (RFC 8288)', schema: { type: 'string' } },
            }),
            '304': notModified(),
            ...keyedErrors({ '403': problem('The flagged parameter needs a Pro or Enterprise key', ['forbidden_for_tier']) }),
          },
        },
      },
      '/api/v1/listings/{id}': {
        get: {
          operationId: 'getListing',
          tags: ['listings'],
          summary: 'One active listing',
          parameters: [
            {
              name: 'id',
              in: 'path',
              required: true,
              description: 'An id as the API gives it. Any other text is 404, as an unknown id is',
              schema: { type: 'string' },
              example: 'lst_3f9a0c1d2e4b5a6c7d8e',
            },
          ],
          responses: {
            '200': json('The listing', 'Listing', rateLimitHeaders),
            '304': notModified(),
            ...keyedErrors({
              '404': problem(
                'No such active listing (or flagged, for a tier that does not see flagged data). A listing merged into another says where it went in merged_into; a withdrawn one says when in withdrawn_at',
                ['not_found'],
              ),
            }),
          },
        },
      },
      '/api/v1/listings/export': {
        get: {
          operationId: 'exportListings',
          tags: ['listings'],
          summary: 'Every listing visible to the key, as NDJSON from one snapshot (Pro and Enterprise)',
          description:
            'One Listing (as GET /listings/{id} shows it) a line, in no particular order, streamed from one consistent database snapshot; gzip or br when the client accepts it. X-Changes-Cursor is the cursor from which GET /changes continues exactly after that snapshot. Counts as one request.',
          responses: {
            '200': {
              description: 'The listings, one JSON object a line',
              headers: {
                'X-Request-Id': commonHeaders['X-Request-Id'],
                'X-Changes-Cursor': { description: 'Pass it as since to GET /api/v1/changes to continue from this snapshot', schema: { type: 'string' } },
              },
              content: { 'application/x-ndjson': { schema: ref('Listing') } },
            },
            ...keyedErrors({ '403': problem('The export needs a Pro or Enterprise key', ['forbidden_for_tier']) }),
            '429': problem('Daily quota exceeded, or an export of this key is still running (one at a time per key)', ['quota_exceeded', 'rate_limited'], retryAfter),
            '503': problem('The database is unreachable, or the server runs as many exports as it takes (half its pool)', ['unavailable'], retryAfter),
          },
        },
      },
      '/api/v1/changes': {
        get: {
          operationId: 'listChanges',
          tags: ['listings'],
          summary: 'What changed after a cursor: upserts and deletes, for mirrors',
          description:
            'Follow meta.next_cursor while meta.has_more is true; then store it and start from it next time. Exact even while imports commit: no change is skipped, none is lost. A listing appears at most once a page, in its latest state. Without since, the feed starts from the beginning (deletes of listings you never received are left out). Each page counts as one request. Free and Starter keys never receive a flagged listing: it comes as a delete with reason hidden, and back as an upsert when the flag goes.',
          parameters: queryParameters(changesQuery),
          responses: {
            '200': json('A page of changes', 'ChangesPage', rateLimitHeaders),
            '304': notModified('If-None-Match matched the ETag: nothing changed on this page'),
            ...keyedErrors({ '400': problem('A malformed or foreign cursor, or a bad limit', ['invalid_cursor', 'invalid_parameter', 'unknown_parameter']) }),
            '429': problem("Daily quota exceeded, or the key's earlier pages kept this one waiting 12 s, or nine of the key's requests are in hand (pages are built one at a time per key)", ['quota_exceeded', 'rate_limited'], retryAfter),
          },
        },
      },
      '/api/v1/market/prices': {
        get: {
          operationId: 'getMarketPrices',
          tags: ['market'],
          summary: 'Average, median and quartiles of rent (or sale price) and price per m² by commune, live',
          description:
            'From active, unflagged listings of one type (default RENT), optionally of one number of rooms (5: 5 or more). Money in whole euros, per-m² figures in cents; medians and quartiles are percentile_cont. Fewer than 3 listings: the figures are null and the counts stay; fewer than 10: low_sample is true. SALE records carry avg_price_eur, median_price_eur, p25_price_eur, p75_price_eur in place of the rent fields. A named commune with no such listings gives one record with listings 0 and null figures.',
          parameters: queryParameters(marketPricesQuery),
          responses: { '200': json('Market prices', 'MarketPrices', rateLimitHeaders), '304': notModified(), ...keyedErrors() },
        },
      },
      '/api/v1/market/history': {
        get: {
          operationId: 'getMarketHistory',
          tags: ['market'],
          summary: 'The market figures of a commune over time, per week or month, from daily snapshots',
          description:
            'The service takes a snapshot of the /market/prices figures every day (and after each import that changes data). A period’s figures are those of the last snapshot taken in it, within from..to; periods without a snapshot are left out. Same figures, suppression and low_sample as /market/prices.',
          parameters: queryParameters(marketHistoryQueryShape),
          responses: { '200': json('Market history', 'MarketHistory', rateLimitHeaders), '304': notModified(), ...keyedErrors() },
        },
      },
      '/api/v1/communes': {
        get: {
          operationId: 'listCommunes',
          tags: ['reference'],
          summary: 'The 100 communes with names, canton, centroid and localities',
          parameters: queryParameters(communesQuery),
          responses: { '200': json('The communes', 'Communes', rateLimitHeaders), '304': notModified(), ...keyedErrors() },
        },
      },
      '/api/v1/stats': {
        get: {
          operationId: 'getStats',
          tags: ['stats'],
          summary: 'Public statistics (no key)',
          description: 'Limited per client IP (default 60 a minute). Cache-Control: public, max-age=60.',
          security: [],
          parameters: queryParameters(statsQuery),
          responses: {
            '200': json('Statistics', 'Stats', {
              'Cache-Control': { description: 'public, max-age=60', schema: { type: 'string' } },
              'RateLimit-Policy': { description: 'The per-IP limit, e.g. 60;w=60', schema: { type: 'string' } },
              'RateLimit-Limit': { description: 'Requests allowed per minute from this IP', schema: { type: 'integer' } },
              'RateLimit-Remaining': { description: 'Requests left in this minute', schema: { type: 'integer' } },
              'RateLimit-Reset': { description: 'Seconds until the minute ends', schema: { type: 'integer' } },
            }),
            '304': { description: 'Not modified (If-None-Match matched the ETag)', headers: commonHeaders },
            '400': problem('Unknown query parameter', ['unknown_parameter']),
            '429': problem('Too many requests from this address', ['rate_limited'], retryAfter),
            '503': problem('The database is unreachable', ['unavailable'], retryAfter),
            '500': problem('Internal error', ['internal']),
          },
        },
      },
      '/api/v1/openapi.json': {
        get: {
          operationId: 'getOpenApi',
          tags: ['operations'],
          summary: 'This document (no key)',
          security: [],
          responses: {
            '200': { description: 'The OpenAPI 3.1 document', headers: { ETag: { description: 'Entity tag (weak)', schema: { type: 'string' } } }, content: { 'application/json': { schema: { type: 'object' } } } },
            '304': { description: 'Not modified (If-None-Match matched the ETag)', headers: { 'X-Request-Id': commonHeaders['X-Request-Id'], ETag: { description: 'Entity tag (weak)', schema: { type: 'string' } } } },
            '400': problem('A query parameter (this path takes none), or a percent-encoding that is not UTF-8', ['unknown_parameter', 'invalid_parameter']),
            '503': notServing,
          },
        },
      },
      '/healthz': {
        get: {
          operationId: 'getHealth',
          tags: ['operations'],
          summary: 'Liveness: the process is up (checks no dependency)',
          security: [],
          responses: {
            '200': { description: 'Alive', headers: healthHeaders, content: { 'application/json': { schema: ref('Health') } } },
            '503': notServing,
          },
        },
      },
      '/readyz': {
        get: {
          operationId: 'getReadiness',
          tags: ['operations'],
          summary: 'Readiness: the database and Redis are reachable',
          security: [],
          responses: {
            '200': { description: 'Ready', headers: healthHeaders, content: { 'application/json': { schema: ref('Readiness') } } },
            '503': {
              description:
                'Not ready. application/json: a dependency is down, checks says which. application/problem+json (code: unavailable, with Retry-After): the service is starting, or this server process is stopping',
              headers: { ...healthHeaders, ...retryAfter },
              content: { 'application/json': { schema: ref('Readiness') }, 'application/problem+json': { schema: ref('Problem') } },
            },
          },
        },
      },
    },
    components: {
      schemas,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'lfk_ API key', description: 'Authorization: Bearer lfk_…' },
      },
    },
  };
  // Every operation: 405 for any other method (the API is read-only), with the methods served.
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item) as { responses: Record<string, unknown> }[]) {
      op.responses['405'] ??= problem('A method other than GET or HEAD (OPTIONS is the CORS preflight): the API is read-only', ['method_not_allowed'], {
        Allow: { description: 'GET, HEAD', schema: { type: 'string' } },
      });
    }
  }
  return doc;
}

// JSON Schema details that are noise in an API description: zod's safe-integer bounds on
// every integer and the per-schema $id/$schema.
function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if ((k === 'minimum' || k === 'maximum') && Math.abs(v as number) === Number.MAX_SAFE_INTEGER) continue;
    if (k === '$schema' || k === '$id') continue;
    out[k] = tidy(v);
  }
  return out;
}

export type OpenApiDocument = ReturnType<typeof buildOpenApiDocument>;
