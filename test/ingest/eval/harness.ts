import type { Knex } from 'knex';
import supertest from 'supertest';
import { importFeed } from '../../../src/ingest/index.js';
import type { Gazetteer } from '../../../src/reference/gazetteer.js';
import { buildTestApp, createKey } from '../../helpers/factory.js';
import { computeMetrics, groupOf, readStates, visibleToFree, type ListingState, type Metrics } from './metrics.js';

// Runs one evaluation set through the real importer and measures the outcome. The caller
// gives two freshly migrated, empty databases: the feeds go into the first in the set's
// order and into the second in the reverse order, so that the result can be checked not
// to depend on who delivered first.

export interface EvalFeed {
  source: string;
  format: 'openimmo' | 'csv' | 'json';
  // The delivery: bytes, or a file written by the caller.
  input: Buffer | { path: string };
}

export interface EvalInput {
  name: string;
  feeds: EvalFeed[];
  truth: Map<string, string>;
}

export interface EvalResult {
  name: string;
  metrics: Metrics;
  // The same figures after importing in the reverse order.
  reverse: Metrics;
  // Listings whose state (status, merged_into, flags) differs between the two orders, and
  // the first few of them.
  orderDifferences: number;
  orderDifferenceSample: string[];
  importMs: { forward: number; reverse: number };
  // Free-tier visibility as the API serves it (GET /api/v1/listings with a Free key);
  // null when not checked. `agrees`: the API shows exactly the active, unflagged listings.
  api: { visibleListings: number; agrees: boolean } | null;
  rejects: string[];
  // Every listing's end state after the forward import.
  states: Map<string, ListingState>;
}

export const EVAL_NOW = new Date('2026-11-22T08:00:00.000Z');

export async function importAll(db: Knex, feeds: EvalFeed[], gz: Gazetteer, now = EVAL_NOW): Promise<{ ms: number; rejects: string[] }> {
  const t0 = performance.now();
  const rejects: string[] = [];
  for (const f of feeds) {
    const r = await importFeed(db, { source: f.source, format: f.format, input: f.input, now, gazetteer: gz });
    if (r.status !== 'ok') throw new Error(`import of ${f.source} was ${r.status}`);
    for (const x of r.rejects) rejects.push(`${f.source} ${x.external_id ?? x.position}: ${x.reason}`);
  }
  return { ms: performance.now() - t0, rejects };
}

export async function standing(db: Knex): Promise<Map<string, string>> {
  const rows = await db('listings').select('id', 'status', 'merged_into', 'flags');
  return new Map(rows.map((r) => [r.id as string, `${r.status} ${r.merged_into ?? '-'} ${[...(r.flags as string[])].sort().join(',')}`]));
}

export function differences(a: Map<string, string>, b: Map<string, string>): string[] {
  const out: string[] = [];
  for (const id of new Set([...a.keys(), ...b.keys()])) if (a.get(id) !== b.get(id)) out.push(`${id}: ${a.get(id) ?? 'absent'} | reverse: ${b.get(id) ?? 'absent'}`);
  return out.sort();
}

// Every listing a Free key can page through, by id. A Free key has 100 requests a day:
// a fresh key is taken every 90 pages.
export async function freeVisibleViaApi(db: Knex): Promise<Set<string>> {
  const app = await buildTestApp(db);
  const ids = new Set<string>();
  let key = '';
  for (let page = 1; ; page++) {
    if ((page - 1) % 90 === 0) key = (await createKey(db, 'free')).key;
    const res = await supertest(app).get(`/api/v1/listings?per_page=100&page=${page}&sort=price`).set('Authorization', `Bearer ${key}`);
    if (res.status !== 200) throw new Error(`GET /api/v1/listings page ${page}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    const data = res.body.data as { id: string }[];
    for (const d of data) ids.add(d.id);
    if (data.length < 100) break;
  }
  return ids;
}

export async function evaluate(
  input: EvalInput,
  dbs: { forward: Knex; reverse: Knex },
  gz: Gazetteer,
  opts: { checkApi?: boolean } = {},
): Promise<EvalResult> {
  const fwd = await importAll(dbs.forward, input.feeds, gz);
  const rev = await importAll(dbs.reverse, [...input.feeds].reverse(), gz);
  const states = await readStates(dbs.forward, input.truth);
  const metrics = computeMetrics(input.truth, states);
  const reverse = computeMetrics(input.truth, await readStates(dbs.reverse, input.truth));
  const diffs = differences(await standing(dbs.forward), await standing(dbs.reverse));
  let api: EvalResult['api'] = null;
  if (opts.checkApi) {
    const seen = await freeVisibleViaApi(dbs.forward);
    const expected = new Set([...states.values()].filter(visibleToFree).map((s) => s.id));
    const agrees = seen.size === expected.size && [...seen].every((id) => expected.has(id));
    api = { visibleListings: seen.size, agrees };
  }
  return { name: input.name, metrics, reverse, orderDifferences: diffs.length, orderDifferenceSample: diffs.slice(0, 5), importMs: { forward: fwd.ms, reverse: rev.ms }, api, rejects: fwd.rejects, states };
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

export function formatTable(results: EvalResult[]): string {
  const cols = [
    'set', 'properties', 'listings', 'multi-listed', 'recall (merged to one)', 'recall within 2 m2 and 3 %', 'lost (wrong merge)', 'pair precision', 'pair recall',
    'Free visibility', 'shown twice', 'possible_duplicate (on unmerged dup / other)', 'hidden: wrong merge / poss. dup / outlier / other',
    'order-independent', 'rejected', 'import s (fwd / rev)',
  ];
  const rows = results.map((r) => {
    const m = r.metrics;
    const rev = r.reverse;
    const both = (a: string, b: string) => (a === b ? a : `${a} (rev ${b})`);
    return [
      r.name,
      String(m.properties),
      String(m.listings),
      String(m.multiListed),
      both(`${m.recall.toFixed(3)} (${m.mergedToOne}/${m.multiListed})`, `${rev.recall.toFixed(3)} (${rev.mergedToOne}/${rev.multiListed})`),
      both(`${m.within.recall.toFixed(3)} (${m.within.mergedToOne}/${m.within.multiListed})`, `${rev.within.recall.toFixed(3)} (${rev.within.mergedToOne}/${rev.within.multiListed})`),
      both(`${pct(m.lostShare)} (${m.lost})`, `${pct(rev.lostShare)} (${rev.lost})`),
      `${m.pairs.precision.toFixed(3)} (${m.pairs.fp} wrong)`,
      m.pairs.recall.toFixed(3),
      both(`${pct(m.freeVisibility)}`, `${pct(rev.freeVisibility)}`) + (r.api ? (r.api.agrees ? ' (API agrees)' : ' (API DISAGREES)') : ''),
      String(m.shownTwice),
      `${m.possibleDuplicate.flagged} (${m.possibleDuplicate.onUnmergedDuplicates} / ${m.possibleDuplicate.onOthers})`,
      `${m.hiddenBy.wrongMerge} / ${m.hiddenBy.possibleDuplicate} / ${m.hiddenBy.priceOutlier} / ${m.hiddenBy.stale + m.hiddenBy.other + m.hiddenBy.rejected}`,
      r.orderDifferences === 0 ? 'yes' : `NO (${r.orderDifferences} listings differ)`,
      String(m.rejected),
      `${(r.importMs.forward / 1000).toFixed(1)} / ${(r.importMs.reverse / 1000).toFixed(1)}`,
    ];
  });
  // Transposed: one row per figure, one column per set (the names are long).
  const width = Math.max(...cols.map((c) => c.length));
  const lines: string[] = [];
  const widths = rows.map((r) => Math.max(...r.map((s) => s.length)));
  lines.push(`| ${'figure'.padEnd(width)} | ${rows.map((r, i) => r[0].padEnd(widths[i])).join(' | ')} |`);
  lines.push(`|${'-'.repeat(width + 2)}|${rows.map((_, i) => '-'.repeat(widths[i] + 2)).join('|')}|`);
  for (let c = 1; c < cols.length; c++) lines.push(`| ${cols[c].padEnd(width)} | ${rows.map((r, i) => r[c].padEnd(widths[i])).join(' | ')} |`);
  return lines.join('\n');
}

// One line per hand-made case: what the truth says and what the importer did.
export function caseReport(
  cases: { id: string; comment: string; listings: { source: string; property: string; record: { ref: string } }[] }[],
  states: Map<string, ListingState>,
): { lines: string[]; failed: string[] } {
  const lines: string[] = [];
  const failed: string[] = [];
  const idOf = new Map<string, string>();
  for (const c of cases) for (const x of c.listings) idOf.set(states.get(`${x.source}\u0000${x.record.ref}`)?.id ?? '', `${x.source}:${x.record.ref}`);
  for (const c of cases) {
    const got = c.listings.map((x) => {
      const s = states.get(`${x.source}\u0000${x.record.ref}`);
      return { x, s, group: s ? groupOf(s) : null };
    });
    const problems: string[] = [];
    for (let i = 0; i < got.length; i++)
      for (let j = i + 1; j < got.length; j++) {
        const a = got[i];
        const b = got[j];
        const together = a.group !== null && a.group === b.group;
        const same = a.x.property === b.x.property;
        if (same && !together) problems.push(`missed ${a.x.record.ref} = ${b.x.record.ref}`);
        if (!same && together) problems.push(`wrong merge ${a.x.record.ref} + ${b.x.record.ref}`);
      }
    const flagged = got.filter((g) => g.s?.status === 'active' && g.s.flags.includes('possible_duplicate')).map((g) => g.x.record.ref);
    const hidden = [...new Set(got.map((g) => g.x.property))].filter((p) => !got.some((g) => g.x.property === p && g.s && visibleToFree(g.s)));
    const verdict = problems.length ? `FAIL (${problems.join('; ')})` : 'ok';
    if (problems.length) failed.push(c.id);
    const state = got
      .map((g) => `${g.x.source}:${g.x.record.ref}[${g.x.property.split(':')[1]}] ${g.s ? (g.s.status === 'merged' ? `-> ${idOf.get(g.s.mergedInto!) ?? g.s.mergedInto}` : g.s.status) : 'REJECTED'}${g.s?.flags.length ? ` {${g.s.flags.join(',')}}` : ''}`)
      .join(', ');
    lines.push(`${c.id} ${verdict}${flagged.length ? `; possible_duplicate on ${flagged.join(', ')}` : ''}${hidden.length ? `; hidden from Free: ${hidden.join(', ')}` : ''}`);
    lines.push(`    ${c.comment}`);
    lines.push(`    ${state}`);
  }
  return { lines, failed };
}
