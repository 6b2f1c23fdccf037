import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { Router, type Response } from 'express';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { ApiCaches } from '../../cache/api-caches.js';
import { SEES_FLAGGED } from '../../domain/tiers.js';
import { iso } from '../../repositories/freshness.js';
import { openListingsExport, readChanges, type ChangePosition } from '../../repositories/changes.js';
import type { PublicListingRow } from '../../repositories/listings.js';
import { lastUpdatedAt } from '../../services/last-updated.js';
import type { LiveState } from '../../cache/live-state.js';
import { listApiKeys } from '../../repositories/api-keys.js';
import { invalidKey } from '../auth.js';
import { decodeCursor, encodeCursor, invalidCursor } from '../changes-cursor.js';
import { dataVersion } from '../data-version.js';
import { ApiError, databaseUnavailable } from '../errors.js';
import { presentChange, presentListing } from '../present.js';
import type { ApiChangesPage } from '../schemas/responses.js';
import { intParam, opaqueParam, validateQuery } from '../validate.js';

export const changesQuery = z.object({
  since: opaqueParam(200, {
    description: 'The next_cursor of the previous page (or the X-Changes-Cursor of an export). Absent: from the beginning. A malformed cursor is 400 invalid_cursor.',
  }).optional(),
  limit: intParam(1, 1000, { description: 'Changes per page.', default: 100 }).optional(),
});

// Pages of changes built at once per process. A page of 1,000 listings is about 1 MB of JSON
// with its rows and compression state: 50 clients asking at once took the process to 343 MB
// (bench scenario 11 at 1,000,000 listings). The others wait their turn; the work is the same,
// the CPU being the limit either way. With 4 at once a process whose caches were full from
// other traffic still reached 307-315 MB; with 3, 289 MB at 59 pages a second (60 with 4).
export const CHANGES_PAGES_AT_ONCE = 3;
// How long a slot stays held once its page is written, waiting for the client to take it
// (each connection has one page in flight at most: src/http/one-answer-at-a-time.ts; 16
// connections that read nothing held the slots 2 s each with a longer hold: an outside probe).
const SLOT_HOLD_AFTER_SEND_MS = 250;
// Requests of one key waiting behind the one being answered: one more is 429 at once. A client
// that gives up on its page cannot be told from one that has only closed its sending side (both
// send a FIN; the second still reads its answer), so a page given up on is still built, and 90
// of them, sent one after the other by a client that timed out and asked again, held that key's
// next request for the whole bound and had it answered 429 (an outside probe of stop 47). Eight:
// mirrors that share a key each have one in hand (its regression probe ran six and eight).
const WAITING_PER_KEY = 8;

// A cursor given in the other view: another key's (a cursor does not say whose it is), or this
// key's before it changed tier. What came into view or went out of it with a change of tier is
// not in the feed after the cursor.
const otherView = (sawFlagged: boolean) =>
  `since was given to a key that saw ${sawFlagged ? 'flagged listings too (Pro or Enterprise)' : 'only unflagged listings (Free or Starter)'}, and this key ` +
  `sees ${sawFlagged ? 'only unflagged ones' : 'flagged ones too'} (another key's cursor, or this key's tier changed since): the listings one view has and the other has not are not in the feed, ` +
  'so start a new walk without since';

// A request that waited the whole bound behind its own key's earlier requests: 429, not
// counted, and not the service's fault.
const keyBusy = () =>
  new ApiError({
    status: 429,
    code: 'rate_limited',
    detail: "This key's earlier requests to /changes are still being answered: pages are built one at a time per key, so read them one after the other",
    headers: { 'Retry-After': '5' },
  });

// GET /api/v1/changes: what changed after a cursor, for mirrors.
// `waitMs`: the longest a request waits for a slot, the bound of a database statement (while
// the database stops answering, the slots' requests take that long each to fail, and the ones
// queued behind them must not wait for them in turn: 503 instead).
export function changesRouter(deps: { db: Knex; baseUrl: string; caches: ApiCaches; pagesAtOnce?: number; waitMs?: number }): Router {
  const router = Router();
  const slot = pLimit(deps.pagesAtOnce ?? CHANGES_PAGES_AT_ONCE);
  // One page at a time per key: a key's next request waits for its previous one before it asks
  // for a slot, so one key holds one slot at most, however many connections it opens (an
  // outside probe: 60 connections of one Pro key that read nothing left an Enterprise key 6
  // answers in 65 s, half of them 503). A mirror reads its pages one after the other anyway.
  const perKey = new Map<string, LimitFunction>();
  const ofKey = (id: string) => {
    let limit = perKey.get(id);
    if (!limit) perKey.set(id, (limit = pLimit(1)));
    return limit;
  };
  // When the client of the request holding a key's turn went away before its answer: the key's
  // requests behind it wait from then on for the service (its read), not for their key (a
  // regression probe of stop 46: a client that gave up and asked again during a stall was 429).
  const goneAt = new Map<string, number>();
  router.get('/', async (req, res) => {
    const q = validateQuery(changesQuery, req.query);
    const waiting = perKey.get(res.locals.apiKey!.id);
    if (waiting && waiting.activeCount + waiting.pendingCount > WAITING_PER_KEY) throw keyBusy();
    let gaveUp = false;
    // Whether the request's key has its turn (its earlier requests answered): past the bound
    // before that, it waited for its own key's pages, not for the service (a probe of stop 44:
    // 15 connections of one key got a 503 that blamed the service).
    // And when: a request that got its turn in the second half of the bound spent most of it
    // behind its own key too (an outside probe of stop 46: 1-2 of 40 pages of one key were 503,
    // counted, their turn having come just before the bound), so it is 429 as well.
    let keysTurn = false;
    let ownEnd = 0; // when the wait that counts against the key ended
    const arrivedAt = performance.now();
    const keyId = res.locals.apiKey!.id;
    const ownUntil = (t: number) => {
      const gone = goneAt.get(keyId);
      return gone === undefined ? t : Math.max(arrivedAt, Math.min(gone, t));
    };
    let timer: NodeJS.Timeout | undefined;
    // Set before the slot is asked for, so that a slot given at once clears it.
    const waited =
      deps.waitMs === undefined
        ? null
        : new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              gaveUp = true;
              const ownKeysPart = (keysTurn ? ownEnd : ownUntil(performance.now())) - arrivedAt;
              reject(ownKeysPart * 2 < deps.waitMs! ? databaseUnavailable() : keyBusy());
            }, deps.waitMs);
          });
    waited?.catch(() => undefined); // (settled by the race below, or never looked at)
    // A slot is held from the read until the answer has left (or the client has gone).
    const mine = ofKey(keyId);
    let holding = false;
    const served = mine(() => {
      keysTurn = holding = true;
      ownEnd = ownUntil(performance.now());
      goneAt.delete(keyId);
      res.once('close', () => holding && !res.writableFinished && goneAt.set(keyId, performance.now()));
      return res.destroyed || gaveUp
        ? undefined
        : slot(async () => {
            if (res.destroyed || gaveUp) return; // the client left, or was answered 503, while it waited
            // The bound runs on until the answer begins: a page that waited its turn and then reads
            // from a database that stopped answering is 503 within the bound from its arrival, not
            // the bound after its turn came (a faults probe of stop 45: 20.3 s under a table lock).
            await sendPage(res, q, () => {
              clearTimeout(timer);
              return !gaveUp && !res.destroyed;
            });
            // Until the page has left, but not for a client that does not read it: three such
            // clients held every slot and /changes was 503 for everyone (an outside probe).
            if (!res.writableFinished && !res.destroyed) {
              await new Promise<void>((resolve) => {
                const t = setTimeout(resolve, SLOT_HOLD_AFTER_SEND_MS);
                res.once('close', () => (clearTimeout(t), resolve()));
              });
            }
          });
    }).finally(() => {
      holding = false;
      clearTimeout(timer);
      if (mine.activeCount === 0 && mine.pendingCount === 0 && perKey.get(keyId) === mine) {
        perKey.delete(keyId);
        goneAt.delete(keyId);
      }
    });
    // An answer begun is never given up: the timer is cleared when the answer begins.
    await (waited ? Promise.race([served, waited]) : served);
  });
  // `begin()`: called once the page is read, before anything is written; false when the request
  // was answered meanwhile (503 past the bound) or its client left: nothing is written then.
  const sendPage = async (res: Response, q: z.infer<typeof changesQuery>, begin: () => boolean) => {
    const showFlags = SEES_FLAGGED[res.locals.apiKey!.tier];
    const limit = q.limit ?? 100;
    const view = showFlags ? 'a' : 'u';
    // No cursor: a first walk from the beginning (see readChanges).
    const from = q.since !== undefined ? decodeCursor(q.since) : null;
    if (from?.view !== undefined && from.view !== view) throw invalidCursor(otherView(from.view === 'a'));
    const read = await readChanges(deps.db, { from, limit, includeFlagged: showFlags });
    if (from && from.seq > read.version) throw invalidCursor('since is ahead of this feed: it was not given by this service');
    const last = read.rows.at(-1);
    const next: ChangePosition = read.hasMore
      ? { seq: last!.seq, id: last!.listing_id, floor: read.floor }
      : { seq: Math.max(read.version, from?.seq ?? 0) };
    const body: ApiChangesPage = {
      data: read.rows.map((r) => presentChange(r, { baseUrl: deps.baseUrl, showFlags })),
      meta: { next_cursor: encodeCursor(next, view), has_more: read.hasMore, last_updated: iso(await lastUpdatedAt(deps, await dataVersion(res, deps.db))) },
    };
    if (begin()) res.json(body);
  };
  return router;
}

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
    // HEAD: the headers alone, without reading a single listing; X-Changes-Cursor is the
    // data version as it stands, what a GET begun now would give.
    if (req.method === 'HEAD') {
      res.setHeader('X-Changes-Cursor', encodeCursor({ seq: await dataVersion(res, deps.db) }, 'a'));
      res.status(200).type('application/x-ndjson; charset=utf-8').end();
      return;
    }
    if (running.has(keyId)) {
      throw new ApiError({ status: 429, code: 'rate_limited', detail: 'An export of this key is already running: one at a time per key', headers: { 'Retry-After': '10' } });
    }
    if (holding >= deps.maxExports) {
      throw new ApiError({ status: 503, code: 'unavailable', detail: `This server is running ${holding} exports, the most it takes at once; retry in a moment`, headers: { 'Retry-After': '10' } });
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
    transform(row: PublicListingRow, _enc, done) {
      lastProgress = Date.now();
      chunk += JSON.stringify(presentListing(row, opts)) + '\n';
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
      deps.logger?.info('export: the client went away before the end');
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
