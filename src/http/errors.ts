import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { isInvalidInputError, unavailableCause, unavailableLogger } from '../db/errors.js';
import { BARE_PERCENT } from '../lib/text.js';
import type { ERROR_CODES } from './schemas/responses.js';

// Stable machine-readable codes (docs/spec/contract.md section 2), listed once in ERROR_CODES
// (src/http/schemas/responses.ts).
export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ParamError {
  param: string;
  message: string;
}

const TITLES: Record<ErrorCode, string> = {
  invalid_parameter: 'Invalid query parameter',
  unknown_parameter: 'Unknown query parameter',
  unauthorized: 'Authentication required',
  invalid_key: 'Invalid API key',
  forbidden_for_tier: 'Not available for this tier',
  not_found: 'Not found',
  invalid_cursor: 'Invalid cursor',
  method_not_allowed: 'Method not allowed',
  quota_exceeded: 'Daily quota exceeded',
  rate_limited: 'Too many requests',
  unavailable: 'Service unavailable',
  internal: 'Internal server error',
};

// What a problem+json answer says: `errors` lists the parameters at fault, `headers` are set
// on the answer (Retry-After, WWW-Authenticate, Allow), `extensions` are further members of
// the body (RFC 9457 §3.2: suggestions, allowed_parameters).
export interface ApiErrorInit {
  status: number;
  code: ErrorCode;
  detail: string;
  errors?: ParamError[];
  headers?: Record<string, string>;
  extensions?: Record<string, unknown>;
  // Instead of the code's own title (a status the codes do not name: 416).
  title?: string;
}

// The one error type of the service: anything thrown as an ApiError reaches the client as
// the problem+json body it describes; anything else becomes a bare 500.
export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly detail: string;
  readonly errors?: ParamError[];
  readonly headers?: Record<string, string>;
  readonly extensions?: Record<string, unknown>;
  readonly title?: string;

  constructor(init: ApiErrorInit) {
    super(init.detail);
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.errors = init.errors;
    this.headers = init.headers;
    this.extensions = init.extensions;
    this.title = init.title;
  }
}

// The problem document (RFC 9457) of an error, as sent.
export function problemJson(err: ApiError, requestId: string | null): string {
  return JSON.stringify({
    type: 'about:blank',
    title: err.title ?? TITLES[err.code],
    status: err.status,
    code: err.code,
    detail: err.detail,
    ...(err.errors ? { errors: err.errors } : {}),
    ...(err.extensions ?? {}),
    request_id: requestId,
  });
}

export function sendProblem(res: Response, err: ApiError): void {
  if (err.headers) for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  res.status(err.status).type('application/problem+json').send(problemJson(err, res.locals.requestId ?? null));
}

// The 503 of a database that cannot be reached or does not answer in time.
export function databaseUnavailable(): ApiError {
  return new ApiError({ status: 503, code: 'unavailable', detail: 'The service is temporarily unavailable; try again shortly', headers: { 'Retry-After': '5' } });
}

// The 405 of a read-only address (`what`: "the API", "the docs page"), naming the methods served.
export function methodNotAllowed(method: string, what: string): ApiError {
  return new ApiError({ status: 405, code: 'method_not_allowed', detail: `${method} is not supported: ${what} is read-only`, headers: { Allow: 'GET, HEAD' } });
}

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  // The path as sent (a router's req.path drops its mount point: "/api/v1" was "/").
  const path = req.originalUrl.split('?')[0];
  next(new ApiError({ status: 404, code: 'not_found', detail: `No route for ${req.method} ${path.length > 200 ? `${path.slice(0, 200)}…` : path}` }));
};

export function errorHandler(logger: Logger): ErrorRequestHandler {
  const logged = unavailableLogger();
  return (err, req, res, _next) => {
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    if (err instanceof ApiError) {
      sendProblem(res, err);
      return;
    }
    // Errors from body parsers or Express itself carry a 4xx status (e.g. a malformed URI).
    const status = typeof err?.status === 'number' ? err.status : typeof err?.statusCode === 'number' ? err.statusCode : 500;
    if (status >= 400 && status < 500) {
      sendProblem(res, clientProblem(err, status, req.originalUrl, res));
      return;
    }
    // A value PostgreSQL refuses is bad input that slipped past validation, not a server
    // fault: 400, and a warning with its SQLSTATE (no stack: nothing to debug on our side).
    if (isInvalidInputError(err)) {
      logger.warn({ sqlstate: err.code, request_id: res.locals.requestId }, 'the database refused a value of the request');
      sendProblem(res, new ApiError({ status: 400, code: 'invalid_parameter', detail: 'A parameter value could not be used' }));
      return;
    }
    const cause = unavailableCause(err);
    if (cause) {
      logger.error({ err: logged(err, cause), cause, request_id: res.locals.requestId }, 'dependency unavailable');
      sendProblem(res, databaseUnavailable());
      return;
    }
    logger.error({ err, request_id: res.locals.requestId }, 'unhandled error');
    sendProblem(res, new ApiError({ status: 500, code: 'internal', detail: 'An internal error occurred; quote the request id when reporting it' }));
  };
}

// The answer to an error of Express, a body parser or the docs' static files that carries a 4xx
// status. A static file's refusal comes after its validators and caching were set: an error is
// not the file, and no cache may keep it as such (an outside probe: a day, public).
function clientProblem(err: unknown, status: number, url: string, res: Response): ApiError {
  for (const h of ['ETag', 'Last-Modified', 'Cache-Control']) res.removeHeader(h);
  res.setHeader('Cache-Control', 'no-store');
  // If-Match or If-Unmodified-Since that does not hold for a static file (the docs' assets).
  if (status === 412) return new ApiError({ status: 412, code: 'invalid_parameter', title: 'Precondition failed', detail: 'If-Match or If-Unmodified-Since does not hold for this file' });
  if (status === 416) {
    // A Range past the end of a static file (the docs' assets): said as such, with the file's
    // length in Content-Range as RFC 9110 asks.
    const contentRange = (err as { headers?: Record<string, string> }).headers?.['Content-Range'];
    const headers = contentRange ? { 'Content-Range': contentRange } : undefined;
    return new ApiError({ status: 416, code: 'invalid_parameter', title: 'Range not satisfiable', detail: 'The Range header asks for bytes the file does not have', headers });
  }
  // A path segment that is not percent-encoded UTF-8 ("/listings/%FF"): Express's router fails
  // to decode it. A "%" not followed by two hexadecimal digits says so, as in the query string
  // (an outside probe: "/listings/%ZZ" was said not to be UTF-8).
  const path = url.split('?')[0];
  const detail = !(err instanceof URIError)
    ? 'The request could not be understood'
    : BARE_PERCENT.test(path)
      ? 'The path holds a "%" not followed by two hexadecimal digits: write a literal % as %25'
      : 'The path holds a percent-encoding that is not UTF-8';
  return new ApiError({ status: 400, code: 'invalid_parameter', title: 'Bad request', detail });
}
