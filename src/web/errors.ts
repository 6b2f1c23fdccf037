import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { isInvalidInputError, unavailableCause, unavailableLogger } from '../db/errors.js';
import { html } from './html.js';
import { backFor, messagePage } from './layout.js';

// The HTML pages answer in HTML, errors included; the JSON API keeps its problem+json.

export const htmlNotFound: RequestHandler = (req, res) => {
  const listing = req.baseUrl === '/listings';
  res
    .status(404)
    .type('html')
    .send(
      messagePage({
        title: listing ? 'Listing not found' : 'Page not found',
        message: listing
          ? 'There is no listing at this address, or it is not available any more: it may have been let or sold, or withdrawn by its agency.'
          : 'There is no page at this address.',
        back: listing ? { href: '/docs', label: 'Search the listings through the API' } : undefined,
      }),
    );
};

export function htmlErrorHandler(logger: Logger): ErrorRequestHandler {
  const logged = unavailableLogger();
  return (err, req, res, _next) => {
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    const e = (err ?? {}) as { code?: unknown; name?: unknown; status?: unknown; statusCode?: unknown; type?: unknown };
    // Back to the page the request was for: the market prices, or the key page.
    const back = backFor(req.originalUrl);
    const send = (status: number, title: string, message: string, extra: Record<string, string> = {}) => {
      for (const [k, v] of Object.entries(extra)) res.setHeader(k, v);
      res.status(status).type('html').send(messagePage({ title, message, back }));
    };
    if (e.code === 'EBADCSRFTOKEN') {
      send(403, 'This form has expired', 'The form was not sent from a page of ours, or it is too old. Reload the page and try again.');
      return;
    }
    const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : 500;
    if (status === 413) {
      send(413, 'Too much data', 'The form sent more data than it should. Go back and try again.');
      return;
    }
    if (status >= 400 && status < 500) {
      // The query parser's own words (its ApiError: a percent-encoding that is not UTF-8) say
      // what was wrong.
      const detail = (err as { detail?: unknown } | null)?.detail;
      send(400, 'Bad request', typeof detail === 'string' && detail !== '' ? `${detail}.` : 'The request could not be understood. Go back and try again.');
      return;
    }
    const requestId = res.locals.requestId ?? '';
    if (isInvalidInputError(err)) {
      logger.warn({ sqlstate: err.code, request_id: requestId }, 'web page: the database refused a value of the request');
      send(400, 'Bad request', 'Something in the request could not be used. Go back and try again.');
      return;
    }
    const cause = unavailableCause(err);
    if (cause) {
      logger.error({ err: logged(err, cause), cause, request_id: requestId }, 'web page: dependency unavailable');
      // A sign-up whose answer was lost to a stalled database may still have made the account
      // (an outside probe of stop 49: the held INSERT committed once the database answered again).
      const signUp = req.method === 'POST' && /\/sign-up\/?$/i.test(req.path);
      const message = signUp
        ? 'The service is briefly unavailable. Your account may have been made all the same: try signing in in a moment, and sign up again if that fails.'
        : 'The service is briefly unavailable. Try again in a moment.';
      send(503, 'Temporarily unavailable', message, { 'Retry-After': '5' });
      return;
    }
    logger.error({ err, request_id: requestId }, 'web page: unhandled error');
    res
      .status(500)
      .type('html')
      .send(
        messagePage({
          title: 'Something went wrong',
          message: html`An error on our side stopped this page. Please try again; if it happens again, quote this reference: <code>${requestId}</code>.`,
        }),
      );
  };
}
