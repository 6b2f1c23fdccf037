import type { Request, Response } from 'express';
import Negotiator from 'negotiator';
import onHeaders from 'on-headers';

// HEAD answers with the headers its GET would carry (RFC 9110 §9.3.2). The compression
// middleware leaves HEAD alone (no body to compress), so a HEAD said `Content-Length: 38087`
// and no `Content-Encoding` where the GET it describes is gzip (an outside probe: /communes,
// /changes, /openapi.json, /market, the listing pages). Its GET's choice is made here the way
// compression 1.8 makes it (filter, no-transform, threshold, an encoding already set, the
// client's Accept-Encoding with br then gzip preferred), and said: `Content-Encoding`, and no
// `Content-Length`, as a compressed GET is sent chunked.
const SUPPORTED = ['br', 'gzip', 'deflate', 'identity'];
const PREFERRED = ['br', 'gzip'];
const NO_TRANSFORM = /(?:^|,)\s*?no-transform\s*?(?:,|$)/i;

export function describeCompressedGet(req: Request, res: Response, opts: { threshold: number; filter: (req: Request, res: Response) => boolean }): void {
  onHeaders(res, () => {
    if (!opts.filter(req, res)) return;
    if (NO_TRANSFORM.test(String(res.getHeader('Cache-Control') ?? ''))) return;
    if (Number(res.getHeader('Content-Length')) < opts.threshold) return;
    if ((res.getHeader('Content-Encoding') ?? 'identity') !== 'identity') return;
    if (!req.headers['accept-encoding']) return;
    const method = new Negotiator(req).encoding(SUPPORTED, { preferred: PREFERRED });
    if (!method || method === 'identity') return;
    res.setHeader('Content-Encoding', method);
    res.removeHeader('Content-Length');
  });
}
