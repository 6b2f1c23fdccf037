import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';

import type { ERROR_CODES } from './schemas/responses.js';

// Stable machine-readable codes (contract section 2), listed once in the response schemas.
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
  method_not_allowed: 'Method not allowed',
  quota_exceeded: 'Daily quota exceeded',
  rate_limited: 'Too many requests',
  unavailable: 'Service unavailable',
  internal: 'Internal server error',
};

// The one error type of the service: anything thrown as an ApiError reaches the client as
// the problem+json body it describes; anything else becomes a bare 500.
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    readonly detail: string,
    readonly errors?: ParamError[],
    readonly headers?: Record<string, string>,
    readonly extra?: Record<string, unknown>,
  ) {
    super(detail);
  }
}

export function sendProblem(res: Response, err: ApiError): void {
  if (err.headers) for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  res
    .status(err.status)
    .type('application/problem+json')
    .send(
      JSON.stringify({
        type: 'about:blank',
        title: TITLES[err.code],
        status: err.status,
        code: err.code,
        detail: err.detail,
        ...(err.errors ? { errors: err.errors } : {}),
        ...(err.extra ?? {}),
        request_id: res.locals.requestId ?? null,
      }),
    );
}

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new ApiError(404, 'not_found', `No route for ${req.method} ${req.path}`));
};

export function errorHandler(logger: Logger): ErrorRequestHandler {
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
      sendProblem(res, new ApiError(400, 'invalid_parameter', 'The request could not be understood'));
      return;
    }
    // SQLSTATE class 22 (data exception: a value PostgreSQL cannot take) is bad input that
    // slipped past validation, not a server fault.
    if (typeof err?.code === 'string' && /^22/.test(err.code)) {
      logger.warn({ err, request_id: res.locals.requestId }, 'data exception from the database');
      sendProblem(res, new ApiError(400, 'invalid_parameter', 'A parameter value could not be used'));
      return;
    }
    if (isUnavailable(err)) {
      logger.error({ err, request_id: res.locals.requestId }, 'dependency unavailable');
      sendProblem(res, new ApiError(503, 'unavailable', 'The service is temporarily unavailable; try again shortly', undefined, { 'Retry-After': '5' }));
      return;
    }
    logger.error({ err, request_id: res.locals.requestId }, 'unhandled error');
    sendProblem(res, new ApiError(500, 'internal', 'An internal error occurred; quote the request id when reporting it'));
  };
}

// A database that cannot be reached (or times out) is a 503, not a 500.
function isUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string; name?: string };
  if (!e) return false;
  if (e.name === 'KnexTimeoutError') return true;
  if (typeof e.code === 'string') {
    if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'].includes(e.code)) return true;
    // SQLSTATE classes: 08 connection exception, 57P01-57P03 admin shutdown / cannot connect now,
    // 53 insufficient resources, 57014 statement timeout (query_canceled).
    if (/^08/.test(e.code) || /^57P0[123]$/.test(e.code) || /^53/.test(e.code) || e.code === '57014') return true;
  }
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(e.message ?? '');
}
