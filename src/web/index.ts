import { Router, type RequestHandler } from 'express';
import type { Store } from 'express-rate-limit';
import helmet from 'helmet';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { DEFAULT_PAGES_RATE_LIMIT_PER_MINUTE, type Config } from '../config.js';
import type { LiveState } from '../cache/live-state.js';
import type { StoreHealth } from '../rate-limit/store.js';
import type { Gazetteer } from '../reference/gazetteer.js';
import { onlyMethods } from './methods.js';
import { ASSETS_MOUNT, assetsRouter, COPY_SCRIPT_PATH, STYLE_PATH } from './assets.js';
import { htmlNotFound } from './errors.js';
import { keysRouter } from './keys-router.js';
import { listingPagesRouter } from './listing-page.js';
import { marketPageRouter } from './market-page.js';
import { webOptions, type WebOptions } from './options.js';
import { pagesLimit } from './throttle.js';

// Security headers for the HTML pages only (the JSON API under /api/v1 keeps its own):
// a strict Content-Security-Policy (no inline script or style, nothing from elsewhere but
// the listing photos), no framing, no Referer (a key page's address never leaks).
function pageHeaders(opts: { https: boolean; externalImages: boolean }): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: opts.externalImages ? ["'self'", 'https:'] : ["'self'"],
        fontSrc: ["'self'"],
        connectSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        ...(opts.https ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: opts.https ? { maxAge: 31_536_000, includeSubDomains: false } : false,
    xFrameOptions: { action: 'deny' },
    crossOriginEmbedderPolicy: false,
  });
}

// What the pages need of the app's dependencies (src/app.ts passes its own).
export interface WebDeps {
  config: Pick<Config, 'PUBLIC_BASE_URL'> & Partial<Pick<Config, 'PAGES_RATE_LIMIT_PER_MINUTE'>>;
  db: Knex;
  redis: Redis | null;
  logger: Logger;
  clock: () => Date;
  redisPrefix: string;
  // Shared with the API: the store health its metrics report, and the daily quota's store,
  // whose counts the key page shows.
  storeHealth: StoreHealth;
  quotaStore: Store;
  // Bcrypt cost, sign-in throttling limits, session lifetime (tests tune them).
  web?: Partial<WebOptions>;
  // The /market page: commune names, and the data version held in memory when there is one.
  gazetteer: Gazetteer;
  live?: LiveState;
}

// The HTML side of the service: /api-keys (accounts and keys), /listings/:id (the public
// page of a listing), /market (market prices and their history) and /web/* (the stylesheet
// and the copy-button script).
export function webRouter(deps: WebDeps): Router {
  const options = webOptions(deps.web);
  const https = deps.config.PUBLIC_BASE_URL.startsWith('https:');
  const strict = pageHeaders({ https, externalImages: false });
  const limit = pagesLimit({
    redis: deps.redis,
    redisPrefix: deps.redisPrefix,
    storeHealth: deps.storeHealth,
    logger: deps.logger,
    options,
    perMinute: deps.config.PAGES_RATE_LIMIT_PER_MINUTE ?? DEFAULT_PAGES_RATE_LIMIT_PER_MINUTE,
  });
  const r = Router();
  // (Their methods here: the layout that the 405 page uses imports the assets' paths.)
  r.all([STYLE_PATH, COPY_SCRIPT_PATH], onlyMethods('GET'));
  r.use(ASSETS_MOUNT, strict, assetsRouter(), htmlNotFound);
  r.use('/listings', pageHeaders({ https, externalImages: true }), limit, listingPagesRouter(deps));
  r.use('/market', strict, limit, marketPageRouter(deps));
  r.use(
    '/api-keys',
    strict,
    limit,
    keysRouter({
      db: deps.db,
      logger: deps.logger,
      clock: deps.clock,
      baseUrl: deps.config.PUBLIC_BASE_URL,
      secureCookie: https,
      quotaStore: deps.quotaStore,
      redis: deps.redis,
      redisPrefix: deps.redisPrefix,
      storeHealth: deps.storeHealth,
      options,
    }),
  );
  return r;
}
