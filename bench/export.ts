import http from 'node:http';
import { createGunzip } from 'node:zlib';

// Scenario 11: one whole GET /api/v1/listings/export, timed from the request to the last
// byte, the body decompressed and its lines counted as a client would read them, and the
// server's RSS read just before (the peak is sampled by the runner meanwhile).
export async function measureExport(base: string, key: string, path: string, serverRssMb: () => number) {
  const rssBeforeMb = serverRssMb();
  const started = performance.now();
  const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
    http.get(base + path, { headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip' } }, resolve).on('error', reject),
  );
  let bytes = 0;
  let lines = 0;
  res.on('data', (c: Buffer) => (bytes += c.length));
  const body = res.headers['content-encoding'] === 'gzip' ? res.pipe(createGunzip()) : res;
  for await (const chunk of body) for (const b of chunk as Buffer) if (b === 10) lines++;
  const seconds = (performance.now() - started) / 1000;
  return { status: res.statusCode ?? 0, seconds, lines, mb: bytes / 1024 / 1024, rssBeforeMb };
}

// Scenario 12: a mirror's walk through GET /api/v1/changes with pages of 1,000, one request
// after the other as a client does, from `since` (or from the beginning) until has_more is
// false: the requests it takes and how long.
export async function measureWalk(base: string, key: string, since?: string) {
  const started = performance.now();
  let cursor = since;
  let requests = 0;
  let changes = 0;
  const pageMs: number[] = [];
  for (;;) {
    const t = performance.now();
    const res = await fetch(`${base}/api/v1/changes?limit=1000${cursor ? `&since=${cursor}` : ''}`, { headers: { authorization: `Bearer ${key}` } });
    if (res.status !== 200) throw new Error(`GET /changes answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    const page = (await res.json()) as { data: unknown[]; meta: { next_cursor: string; has_more: boolean } };
    pageMs.push(performance.now() - t);
    requests++;
    changes += page.data.length;
    cursor = page.meta.next_cursor;
    if (!page.meta.has_more) break;
  }
  pageMs.sort((a, b) => a - b);
  return { requests, changes, cursor: cursor!, seconds: (performance.now() - started) / 1000, p50: pageMs[Math.floor(pageMs.length / 2)], p99: pageMs[Math.min(pageMs.length - 1, Math.ceil(pageMs.length * 0.99) - 1)] };
}
