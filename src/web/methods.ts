import type { RequestHandler } from 'express';
import { backFor, messagePage } from './layout.js';

// The methods an address of the pages serves, for `router.all(paths, onlyMethods(...))` ahead
// of everything else the route does (body parsing, session, CSRF): OPTIONS is 204 with
// `Allow`, any other method not served a 405 page with `Allow`. Without it a PUT on a form's
// address met the CSRF check (403 "This form has expired") and a POST on /market the 404 page
// (an outside probe of stop 47). HEAD is served wherever GET is.
export function onlyMethods(...served: ('GET' | 'POST')[]): RequestHandler {
  const methods = new Set<string>([...served, 'HEAD']);
  const allow = ['GET', 'HEAD', ...served.filter((m) => m !== 'GET')].join(', ');
  return (req, res, next) => {
    if (methods.has(req.method)) return next();
    res.setHeader('Allow', allow);
    if (req.method === 'OPTIONS') return void res.status(204).end();
    res
      .status(405)
      .type('html')
      .send(
        messagePage({
          title: 'Method not allowed',
          message: `This address answers ${allow} requests, not ${req.method}.`,
          back: backFor(req.originalUrl),
        }),
      );
  };
}
