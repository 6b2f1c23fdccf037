import { createHash } from 'node:crypto';
import { Router, type Response } from 'express';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Knex } from 'knex';
import { z } from 'zod';
import type { ApiCaches } from '../../cache/api-caches.js';
import { SEES_FLAGGED } from '../../domain/tiers.js';
import { iso } from '../../repositories/freshness.js';
import { readChanges, type ChangePosition } from '../../repositories/changes.js';
import { lastUpdatedAt } from '../../services/last-updated.js';
import { currentDataVersion } from '../../repositories/data-version.js';
import { decodeCursor, encodeCursor, invalidCursor } from '../changes-cursor.js';
import { ifNoneMatchHits } from '../conditional.js';
import { ApiError, databaseUnavailable } from '../errors.js';
import { presentChange } from '../present.js';
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

// A page of changes is decided by the data version it is read at, the cursor, the limit, the
// view (which listings the key sees) and the base of the listings' urls: its tag names them,
// with the form of the page (CHANGES_PAGE_FORM, to change with the presentation).
const CHANGES_PAGE_FORM = 1;
function changesTag(version: number, since: string | undefined, limit: number, view: string, baseUrl: string): string {
  const hash = createHash('sha256').update(`${CHANGES_PAGE_FORM}\n${version}\n${since ?? ''}\n${limit}\n${view}\n${baseUrl}`).digest('base64url');
  return `W/"c${version}-${hash.slice(0, 22)}"`;
}

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
    // A revalidation answered before the page is read: a 304 is not counted against the quota,
    // and a page of 1,000 listings built only to be thrown away cost about a second of a slot
    // (an outside probe of stop 48: Free keys looping on their tag slowed every mirror). The
    // tag names what decides the page (below), so it is known without reading it. The version is
    // the database's own (one read of one row), not the one its notifications keep in memory,
    // which trails a commit by a moment: its regression probe got 1 in 20 revalidations right
    // after a commit answered 304 for the page before it.
    const noneMatch = res.req.headers['if-none-match'];
    if (noneMatch !== undefined && noneMatch.trim() !== '*') {
      const tag = changesTag(await currentDataVersion(deps.db), q.since, limit, view, deps.baseUrl);
      if (ifNoneMatchHits(noneMatch, tag)) {
        res.setHeader('ETag', tag);
        if (begin()) res.status(304).end();
        return;
      }
    }
    const read = await readChanges(deps.db, { from, limit, includeFlagged: showFlags });
    if (from && from.seq > read.version) throw invalidCursor('since is ahead of this feed: it was not given by this service');
    const last = read.rows.at(-1);
    const next: ChangePosition = read.hasMore
      ? { seq: last!.seq, id: last!.listing_id, floor: read.floor }
      : { seq: Math.max(read.version, from?.seq ?? 0) };
    const body: ApiChangesPage = {
      data: read.rows.map((r) => presentChange(r, { baseUrl: deps.baseUrl, showFlags })),
      meta: { next_cursor: encodeCursor(next, view), has_more: read.hasMore, last_updated: iso(await lastUpdatedAt(deps, read.version)) },
    };
    res.setHeader('ETag', changesTag(read.version, q.since, limit, view, deps.baseUrl));
    if (begin()) res.json(body);
  };
  return router;
}
