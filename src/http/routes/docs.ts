import { readFileSync } from 'node:fs';
import path from 'node:path';
import express, { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { createRequire } from 'node:module';
import { projectRoot } from '../../lib/paths.js';
import { conditionalDespiteNoCache } from '../conditional.js';
import { methodNotAllowed } from '../errors.js';
import type { OpenApiDocument } from '../openapi.js';
import { validateQuery } from '../validate.js';

// The folder of the swagger-ui-dist package. Its main module would load (and keep in memory)
// the whole Swagger UI bundle just to say where it lives; this resolves the folder only.
const SWAGGER_UI_DIR = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

// The machine-readable description and a human page rendering it. Every asset of the page is
// served from here (Swagger UI from the swagger-ui-dist package): nothing from a CDN, so the
// page works with no internet access.
export function openApiRoute(doc: OpenApiDocument): RequestHandler {
  const body = JSON.stringify(doc);
  return (req, res) => {
    // No parameter, like every /api/v1 path: one sent is a typo or a mistake (400).
    validateQuery(z.object({}), req.query);
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.type('application/json').send(body);
  };
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Luxembourg listings feed API – reference</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
  <noscript><p>This page needs JavaScript. The raw description is at <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.</p></noscript>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>`;

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'", // Swagger UI sets inline styles on its elements
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

// https: whether the service is served over https (PUBLIC_BASE_URL), when the page sends HSTS as
// the other HTML pages do (an outside probe of stop 49 found /docs without it).
export function docsRouter(opts: { https?: boolean } = {}): Router {
  const router = Router();
  const initJs = readFileSync(path.join(projectRoot, 'public/docs-init.js'), 'utf8');
  const pageHeaders: RequestHandler = (_req, res, next) => {
    if (opts.https) res.setHeader('Strict-Transport-Security', 'max-age=31536000');
    res.setHeader('Content-Security-Policy', CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    next();
  };
  router.use(pageHeaders);
  // Only the files the page loads: not the rest of the package (its package.json, the stock
  // Petstore page, source maps of megabytes).
  const assets = new Set(['/swagger-ui.css', '/favicon-32x32.png', '/swagger-ui-bundle.js', '/swagger-ui-standalone-preset.js']);
  // Every address served here is read-only, as the API is: OPTIONS says the methods with no
  // body (Express's own answer was a text/plain "GET, HEAD", where every answer but the HTML
  // pages' is JSON: an outside probe), any other method is 405 with Allow, as on the API.
  // Before, a POST was 404 "No route", and OPTIONS on an asset 404 (an outside probe of stop 47).
  const readOnly: RequestHandler = (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    if (req.method === 'OPTIONS') {
      res.setHeader('Allow', 'GET, HEAD');
      return void res.status(204).end();
    }
    next(methodNotAllowed(req.method, 'the docs page'));
  };
  router.all(['/', '/init.js'], readOnly);
  router.use('/assets', (req, res, next) => (assets.has(req.path) ? readOnly(req, res, next) : next()));
  router.get('/', (_req, res) => {
    res.type('html').send(PAGE);
  });
  router.get('/init.js', (_req, res) => {
    res.type('application/javascript').send(initJs);
  });
  const onlyPageAssets: RequestHandler = (req, _res, next) => (assets.has(req.path) ? next() : next('router'));
  router.use('/assets', onlyPageAssets, conditionalDespiteNoCache, express.static(SWAGGER_UI_DIR, { index: false, maxAge: '1d', fallthrough: true }));
  return router;
}
