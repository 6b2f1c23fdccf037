import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { z } from 'zod';
import { SEES_FLAGGED } from '../../domain/tiers.js';
import { openListingsExport, type ExportRow } from '../../repositories/changes.js';
import type { LiveState } from '../../cache/live-state.js';
import { listApiKeys } from '../../repositories/api-keys.js';
import { invalidKey } from '../auth.js';
import { encodeCursor } from '../changes-cursor.js';
import { dataVersion } from '../data-version.js';
import { ApiError, databaseUnavailable } from '../errors.js';
import { presentListing, writeListing } from '../present.js';
import { validateQuery } from '../validate.js';

// GET /api/v1/listings/export: every listing visible to the key as NDJSON, from one snapshot.
// stallMs: how long the export waits for rows from PostgreSQL while the client is taking what
// it is sent; past that the answer is cut (a frozen server would otherwise hold it, and its
// connection, for as long as it is frozen: the export runs without a statement timeout).
// An export holds a pool connection (and a snapshot) for as long as its client takes to read
// it: one at a time per key in this process (429 rate_limited), at most `maxExports` at once (503
// unavailable: the rest of the pool stays for every other request), and one whose client
// takes nothing for `clientTimeoutMs` is cut. Without these, ten exports left unread took
// every connection of the default pool and every other request got 503.
interface ExportDeps {
  db: Knex;
  baseUrl: string;
  stallMs: number;
  clientTimeoutMs: number;
  maxExports: number;
  logger?: Logger;
  live?: LiveState;
}

export function exportRoute(deps: ExportDeps) {
  // The keys with an export under way (one each), released when its answer ends: an export
  // pipelined or sent right after on the same connection was 429 while the first one's
  // transaction was still being given back (an outside probe). The exports holding a database
  // connection, released once it is back in the pool (at most maxExports).
  const running = new Set<string>();
  let holding = 0;
  return async (req: import('express').Request, res: import('express').Response) => {
    validateQuery(z.object({}), req.query);
    const { tier, id: keyId } = res.locals.apiKey!;
    if (!SEES_FLAGGED[tier]) {
      throw new ApiError({ status: 403, code: 'forbidden_for_tier', detail: 'The export needs a Pro or Enterprise key; other tiers mirror the feed through GET /api/v1/changes' });
    }
    // A HEAD is refused as its GET would be (RFC 9110 §9.3.2; an outside probe of stop 58: 200
    // while the key's export was running and the GET was 429).
    if (running.has(keyId)) {
      throw new ApiError({ status: 429, code: 'rate_limited', detail: 'An export of this key is already running: one at a time per key', headers: { 'Retry-After': '10' } });
    }
    if (holding >= deps.maxExports) {
      throw new ApiError({ status: 503, code: 'unavailable', detail: `This server is running ${holding} exports, the most it takes at once; retry in a moment`, headers: { 'Retry-After': '10' } });
    }
    // HEAD: the headers alone, without reading a single listing; X-Changes-Cursor is the
    // data version as it stands, what a GET begun now would give.
    if (req.method === 'HEAD') {
      res.setHeader('X-Changes-Cursor', encodeCursor({ seq: await dataVersion(res, deps.db) }, 'a'));
      res.status(200).type('application/x-ndjson; charset=utf-8').end();
      return;
    }
    running.add(keyId);
    holding++;
    res.once('close', () => running.delete(keyId));
    try {
      await streamExport(deps, res, keyId);
    } finally {
      // The key's mark went with the answer ('close' above): deleting it here, after the
      // transaction is given back, could take the mark of the key's next export.
      holding--;
    }
  };
}

async function streamExport(deps: ExportDeps, res: import('express').Response, keyId: string): Promise<void> {
  // Opening (BEGIN, the snapshot's settings, the data version) gets the same bound as the rows:
  // a database that stops answering then is a 503, not a request that waits as long as it
  // does (an outside probe: a stall begun 15 ms into an export held it 70 s). An opening that
  // completes after all is released at once.
  const opening = openListingsExport(deps.db, { includeFlagged: true });
  let openTimer: NodeJS.Timeout | undefined;
  const exp = await Promise.race([
    opening,
    new Promise<never>((_, reject) => {
      openTimer = setTimeout(() => reject(databaseUnavailable()), deps.stallMs);
    }),
  ])
    .catch((e: unknown) => {
      if (e instanceof ApiError) {
        deps.logger?.warn({ stall_ms: deps.stallMs }, 'export: PostgreSQL did not answer its opening in time; 503');
        // The cursor's query first, then the transaction (a ROLLBACK sent while the cursor's
        // query runs is one query too many on the connection).
        void opening.then((late) => (late.stream.destroy(), late.release()), () => undefined);
      }
      throw e;
    })
    .finally(() => clearTimeout(openTimer));
  const opts = { baseUrl: deps.baseUrl, showFlags: true };
  res.status(200);
  res.setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
  res.setHeader('X-Changes-Cursor', encodeCursor({ seq: exp.version }, 'a'));
  res.setHeader('Vary', 'Accept-Encoding');
  // Lines are sent in chunks of about 64 KB: one write (and one compression call) per
  // listing would cost more than the listing itself.
  let chunk = '';
  // When a row last came, or the client last asked for more (a client that reads slowly
  // holds the rows back; that is no stall).
  let lastProgress = Date.now();
  const lines = new Transform({
    writableObjectMode: true,
    transform(row: ExportRow, _enc, done) {
      lastProgress = Date.now();
      // The same bytes either way (test/api/listing-json.test.ts holds writeListing to presentListing).
      chunk += (row.public_json !== null ? writeListing({ id: row.id, flags: row.flags_json, fields: row.public_json }, opts) : JSON.stringify(presentListing(row, opts))) + '\n';
      if (chunk.length < 65_536) return done();
      const out = chunk;
      chunk = '';
      done(null, out);
    },
    flush(done) {
      done(null, chunk || undefined);
    },
  });
  // What the client has taken: the bytes handed to the kernel (the socket's count of bytes
  // written, less those still buffered in the process). A client that reads, however
  // slowly, moves it; one that reads nothing does not, once the kernel's buffers are full.
  const taken = () => (res.socket ? res.socket.bytesWritten - res.socket.writableLength : 0);
  let lastTaken = taken();
  let lastTakenAt = Date.now();
  // Cut once (the watchdog may run again before the pipeline has ended).
  let cut = false;
  res.on('drain', () => (lastProgress = Date.now()));
  // The client gone: the rows stop (the cursor closes, the connection goes back to the pool).
  let clientGone = false;
  const onClose = () => {
    if (res.writableFinished) return;
    clientGone = true;
    lines.destroy();
  };
  res.on('close', onClose);
  // The key revoked, or given a tier without the export, while the export runs: the answer is
  // cut, as a revoked key stops working at once (an outside probe: an export read slowly went
  // on 10 s after its key was revoked). Told by the key's notification (src/cache/live-state.ts).
  let keyGone = false;
  const stopWatchingKey = deps.live?.onKeyChange((id) => {
    if (id !== keyId) return;
    void listApiKeys(deps.db, { id }).then(
      ([key]) => {
        if (cut || (key && !key.revoked_at && SEES_FLAGGED[key.tier])) return;
        cut = keyGone = true;
        deps.logger?.warn({ key_id: id }, 'export: its key was revoked or given another tier meanwhile; the answer is cut');
        exp.stream.destroy(new Error('export cut: its key was revoked'));
      },
      () => undefined,
    );
  });
  const watchdog = setInterval(
    () => {
      const now = Date.now();
      const t = taken();
      // The client is waited for only while the answer waits for it to read.
      if (t !== lastTaken || !res.writableNeedDrain) {
        lastTaken = t;
        lastTakenAt = now;
      }
      if (res.writableNeedDrain) {
        lastProgress = now;
        if (now - lastTakenAt > deps.clientTimeoutMs && !cut) {
          cut = true;
          deps.logger?.warn({ client_timeout_ms: deps.clientTimeoutMs }, 'export: the client took nothing in time; the answer is cut');
          exp.stream.destroy(new Error('export stalled: the client stopped reading'));
        }
      } else if (now - lastProgress > deps.stallMs && !cut) {
        cut = true;
        deps.logger?.warn({ stall_ms: deps.stallMs }, 'export: no rows from PostgreSQL in time (its connection lost, or not answering); the answer is cut');
        exp.stream.destroy(new Error('export stalled: no rows from PostgreSQL'));
      }
    },
    // Often enough that a cut comes at most a quarter of a second past its bound.
    Math.min(250, Math.max(50, Math.min(deps.stallMs, deps.clientTimeoutMs) / 4)),
  );
  try {
    // Backpressure end to end: the cursor is read only as fast as the client takes the
    // body (lines.pipe(res) pauses the lines while the response waits to drain). The
    // response is kept out of the pipeline, so that a failure before its first byte leaves it
    // free for a 503 rather than destroyed (an empty reply).
    const body = pipeline(exp.stream, lines);
    lines.pipe(res);
    await body;
    if (!res.writableEnded && !clientGone) await new Promise<void>((resolve) => res.once('finish', resolve).once('close', resolve));
  } catch (e) {
    if (clientGone) {
      // (Or the server, stopping, closed the connection past its drain: an outside probe of stop
      // 52 read "the client went away" then; the drain's own warning precedes this line.)
      deps.logger?.info('export: the connection closed before the end (the client went away, or this process closed it while stopping)');
      return;
    }
    lines.unpipe(res);
    if (!res.headersSent) {
      // Nothing sent yet: a 503 the client can read (an outside probe: a stall before the
      // first row gave an empty reply), or what the error handler makes of the error.
      res.removeHeader('X-Changes-Cursor');
      throw keyGone ? invalidKey('The API key was revoked') : cut ? databaseUnavailable() : e;
    }
    // The body is cut short (no last chunk): the client sees a failed transfer, never a
    // complete-looking export.
    res.destroy();
    if (!cut) deps.logger?.warn({ err: { message: (e as Error)?.message } }, 'export: cut short by an error');
  } finally {
    stopWatchingKey?.();
    clearInterval(watchdog);
    res.off('close', onClose);
    // Cut for a stall: the ROLLBACK waits as long as the database does; the 503 or the cut does
    // not wait for it (an outside probe: the 503 came at 10 s instead of 4).
    const released = exp.release();
    if (!cut) await released;
  }
}
