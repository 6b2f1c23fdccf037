import type { Knex } from 'knex';
import { classifyPair, clusterNodes, RULE, type DedupNode, type ScoredPair } from './dedup.js';

type Db = Knex | Knex.Transaction;

interface Standing {
  id: string;
  status: 'active' | 'merged';
  merged_into: string | null;
}

interface NodeRow extends DedupNode, Standing {}

const NODE_COLS = (t: string) => `${t}.id, ${t}.source, ${t}.listing_type, ${t}.commune, ${t}.locality, ${t}.lat, ${t}.lng,
  ${t}.area_m2, ${t}.rooms, ${t}.price_eur, jsonb_array_length(${t}.images) AS image_count,
  (${t}.source_url IS NOT NULL) AS has_source_url, ${t}.created_at, ${t}.status, ${t}.merged_into`;

const PROBE_SLICE = 10_000;

// 3 x 3 grid cells around a point (cells are 0.004 deg of latitude by 0.006 deg of
// longitude, about 450 m square here), as offsets of the dedup_cell column.
const CELL_OFFSETS = [-100001, -100000, -99999, -1, 0, 1, 99999, 100000, 100001];

async function setFrontier(trx: Db, ids: string[]): Promise<void> {
  await trx.raw(`TRUNCATE dedup_frontier`);
  for (let i = 0; i < ids.length; i += 20000) {
    await trx.raw(`INSERT INTO dedup_frontier SELECT DISTINCT unnest(?::text[]) ON CONFLICT DO NOTHING`, [ids.slice(i, i + 20000)]);
  }
  await trx.raw(`ANALYZE dedup_frontier`);
}

// Live listings of the frontier and every listing that shares a stored group with one: only
// their standing (the region of a big import holds every listing it touched; their full rows
// are read a slice at a time, when they are probed).
async function loadWithGroups(trx: Db): Promise<Standing[]> {
  const res = await trx.raw(`
    WITH f AS (SELECT l.id, l.merged_into FROM listings l JOIN dedup_frontier x ON x.id = l.id),
         heads AS (SELECT id FROM f UNION SELECT merged_into FROM f WHERE merged_into IS NOT NULL)
    SELECT l.id, l.status, l.merged_into FROM listings l JOIN heads h ON h.id = l.id WHERE l.status IN ('active', 'merged')
    UNION
    SELECT l.id, l.status, l.merged_into FROM listings l JOIN heads h ON h.id = l.merged_into WHERE l.status = 'merged'`);
  return res.rows as Standing[];
}

async function loadNodes(trx: Db): Promise<NodeRow[]> {
  const res = await trx.raw(`SELECT ${NODE_COLS('l')} FROM listings l JOIN dedup_frontier x ON x.id = l.id WHERE l.status IN ('active', 'merged')`);
  return res.rows as NodeRow[];
}

// Candidate pairs by blocking, through the two dedup indexes: same type, a neighbouring
// area bucket, a price within the tolerance, and either the same commune or a neighbouring
// grid cell. The SQL pre-filter mirrors classifyPair's "out" rules so that few rows return.
// One branch per area bucket: an equality on the bucket keeps every branch a narrow index
// range (a single range over three buckets would walk a whole bucket of a big commune).
async function loadCandidates(trx: Db): Promise<{ probe: string; row: NodeRow }[]> {
  const res = await trx.raw(candidateSql(), [CELL_OFFSETS]);
  return (res.rows as (NodeRow & { probe: string })[]).map(({ probe, ...row }) => ({ probe, row: row as NodeRow }));
}

export function candidateSql(): string {
  const p = 1 - RULE.outPrice;
  const common = (t: string) => `${t}.status IN ('active', 'merged') AND ${t}.dedup_area_bucket IS NOT NULL AND ${t}.listing_type = f.listing_type
            AND ${t}.price_eur BETWEEN floor(f.price_eur * ${p})::integer AND ceil(f.price_eur / ${p})::integer`;
  // A probe without coordinates looks at its whole commune; one with coordinates looks at
  // the commune's listings without coordinates (partial index) and at its grid cells.
  const communeBranches = [-1, 0, 1].flatMap((d) => [
    `SELECT ${NODE_COLS('c')} FROM listings c
          WHERE f.lat IS NULL AND ${common('c')} AND c.commune = f.commune AND c.dedup_area_bucket = f.dedup_area_bucket + (${d})`,
    `SELECT ${NODE_COLS('c')} FROM listings c
          WHERE f.lat IS NOT NULL AND ${common('c')} AND c.lat IS NULL AND c.commune = f.commune AND c.dedup_area_bucket = f.dedup_area_bucket + (${d})`,
  ]);
  const cellBranch = `SELECT ${NODE_COLS('c')} FROM listings c
          WHERE f.dedup_cell IS NOT NULL AND ${common('c')} AND c.dedup_cell IS NOT NULL
            AND c.dedup_cell = ANY (ARRAY(SELECT f.dedup_cell + o FROM unnest(?::bigint[]) o))
            AND c.dedup_area_bucket = ANY (ARRAY[f.dedup_area_bucket - 1, f.dedup_area_bucket, f.dedup_area_bucket + 1])`;
  // The outer filter mirrors classifyPair's "unrelated" rules (a superset of its pairs), so
  // that only real pairs travel back.
  return `SELECT f.id AS probe, c.*
       FROM dedup_frontier x JOIN listings f ON f.id = x.id
       CROSS JOIN LATERAL (
         ${communeBranches.join('\n         UNION ALL\n         ')}
         UNION
         ${cellBranch}
       ) c
      WHERE f.status IN ('active', 'merged') AND f.dedup_area_bucket IS NOT NULL
        AND c.source <> f.source
        AND abs(c.area_m2 - f.area_m2) <= ${RULE.outArea} * greatest(c.area_m2, f.area_m2)
        AND abs(c.price_eur - f.price_eur) <= ${RULE.outPrice} * greatest(c.price_eur, f.price_eur)
        AND (c.rooms IS NULL OR f.rooms IS NULL OR c.rooms = f.rooms)
        AND (CASE WHEN c.lat IS NULL OR f.lat IS NULL
                  THEN c.commune = f.commune AND CASE WHEN c.locality IS NULL OR f.locality IS NULL
                    THEN abs(c.area_m2 - f.area_m2) <= ${RULE.mergeAreaNoCoords} * greatest(c.area_m2, f.area_m2)
                     AND abs(c.price_eur - f.price_eur) <= ${RULE.mergePriceNoCoords} * greatest(c.price_eur, f.price_eur)
                    ELSE c.locality = f.locality END
                  ELSE abs(c.lat - f.lat) <= 0.0037 AND abs(c.lng - f.lng) <= 0.0056 END)`;
}

export interface DedupOutcome {
  merged: number;
  newlyFlagged: string[];
  evaluated: number;
}

// Re-decides the groups that the changed listings belong to, belonged to, or could now
// join. The decision for a group depends only on the live listings in it and their pairs,
// never on what was decided before, which makes it independent of the import order; the
// region grows until it is closed under merge pairs and stored group membership. The
// pairs of every listing looked at are stored (listing_dedup_pairs), and the
// possible_duplicate flag is then re-decided from the stored pairs for every listing whose
// pairs changed.
export async function deduplicate(trx: Db, touched: string[], formerCanonicals: string[], now: Date): Promise<DedupOutcome> {
  if (touched.length === 0 && formerCanonicals.length === 0) return { merged: 0, newlyFlagged: [], evaluated: 0 };
  await trx.raw(`CREATE TEMP TABLE IF NOT EXISTS dedup_frontier (id text PRIMARY KEY) ON COMMIT DROP`);

  // The region: every listing whose group is decided again, with its current standing.
  const region = new Map<string, Standing>();
  const probed = new Set<string>();
  const pairs = new Map<string, ScoredPair>();
  // Full rows of the listings that are in a pair: the only ones the grouping looks at.
  const paired = new Map<string, NodeRow>();

  let frontier = [...new Set([...touched, ...formerCanonicals])];
  for (let round = 0; frontier.length > 0 && round < 1000; round++) {
    const toProbe: string[] = [];
    for (let i = 0; i < frontier.length; i += PROBE_SLICE) {
      await setFrontier(trx, frontier.slice(i, i + PROBE_SLICE));
      for (const r of await loadWithGroups(trx)) {
        if (region.has(r.id)) continue;
        region.set(r.id, r);
        if (!probed.has(r.id)) toProbe.push(r.id);
      }
    }
    const next = new Set<string>();
    // In slices, so that a dense neighbourhood never brings millions of rows back at once,
    // and a big import never holds the rows of all it touched.
    for (let i = 0; i < toProbe.length; i += PROBE_SLICE) {
      await setFrontier(trx, toProbe.slice(i, i + PROBE_SLICE));
      const probes = new Map((await loadNodes(trx)).map((r) => [r.id, r]));
      for (const r of await loadCandidates(trx)) {
        const probe = probes.get(r.probe);
        if (!probe) continue;
        const c = classifyPair(probe, r.row);
        if (c.kind === 'none') continue;
        const [a, b] = r.probe < r.row.id ? [r.probe, r.row.id] : [r.row.id, r.probe];
        pairs.set(`${a}|${b}`, { a, b, kind: c.kind, score: c.score });
        if (!paired.has(probe.id)) paired.set(probe.id, probe);
        if (!paired.has(r.row.id)) paired.set(r.row.id, r.row);
        if (c.kind === 'merge' && !region.has(r.row.id)) next.add(r.row.id);
      }
    }
    for (const id of toProbe) probed.add(id);
    frontier = [...next];
  }

  // A listing of the region in no merge pair is a group of its own: it is its own canonical.
  const grouped = new Map<string, DedupNode>();
  for (const p of pairs.values()) {
    if (p.kind !== 'merge' || !region.has(p.a) || !region.has(p.b)) continue;
    grouped.set(p.a, paired.get(p.a)!);
    grouped.set(p.b, paired.get(p.b)!);
  }
  const canonical = clusterNodes(grouped, [...pairs.values()]);

  const upd = { id: [] as string[], status: [] as string[], mergedInto: [] as (string | null)[] };
  let merged = 0;
  for (const [id, row] of region) {
    const canon = canonical.get(id) ?? id;
    const status = canon === id ? 'active' : 'merged';
    const mergedInto = canon === id ? null : canon;
    if (status === row.status && mergedInto === row.merged_into) continue;
    if (status === 'merged' && row.status !== 'merged') merged++;
    upd.id.push(id);
    upd.status.push(status);
    upd.mergedInto.push(mergedInto);
  }
  for (let i = 0; i < upd.id.length; i += 20000) {
    const s = (a: unknown[]) => a.slice(i, i + 20000);
    await trx.raw(
      `UPDATE listings l SET status = u.status, merged_into = u.merged_into, updated_at = ?
         FROM unnest(?::text[], ?::text[], ?::text[]) AS u(id, status, merged_into)
        WHERE l.id = u.id`,
      [now, s(upd.id), s(upd.status), s(upd.mergedInto)] as unknown as Knex.RawBinding[],
    );
  }

  // The stored pairs of every probed or changed listing are replaced by the new ones; the
  // listings on the other side of a pair that went away are among those re-flagged.
  const affected = new Set<string>([...probed, ...touched]);
  await setFrontier(trx, [...affected]);
  const dropped = await trx.raw(`
    DELETE FROM listing_dedup_pairs p WHERE p.a IN (SELECT id FROM dedup_frontier) OR p.b IN (SELECT id FROM dedup_frontier)
    RETURNING p.a, p.b`);
  for (const r of dropped.rows as { a: string; b: string }[]) {
    affected.add(r.a);
    affected.add(r.b);
  }
  const list = [...pairs.values()];
  for (let i = 0; i < list.length; i += 20000) {
    const part = list.slice(i, i + 20000);
    await trx.raw(
      `INSERT INTO listing_dedup_pairs (a, b, kind, score) SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::float8[])
       ON CONFLICT (a, b) DO UPDATE SET kind = excluded.kind, score = excluded.score`,
      [part.map((p) => p.a), part.map((p) => p.b), part.map((p) => p.kind), part.map((p) => p.score)] as unknown as Knex.RawBinding[],
    );
    for (const p of part) {
      affected.add(p.a);
      affected.add(p.b);
    }
  }

  await setFrontier(trx, [...affected]);
  const flagged = await trx.raw(
    `WITH sides AS (
       SELECT p.a AS id, p.b AS other, p.kind FROM listing_dedup_pairs p JOIN dedup_frontier x ON x.id = p.a
       UNION ALL
       SELECT p.b, p.a, p.kind FROM listing_dedup_pairs p JOIN dedup_frontier x ON x.id = p.b),
     pd AS (
       SELECT DISTINCT s.id FROM sides s JOIN listings o ON o.id = s.other JOIN listings l ON l.id = s.id
        WHERE o.status IN ('active', 'merged')
          AND (s.kind = 'possible' OR coalesce(o.merged_into, o.id) <> coalesce(l.merged_into, l.id))),
     v AS (
       SELECT l.id, pd.id IS NOT NULL AS pd FROM listings l JOIN dedup_frontier x ON x.id = l.id LEFT JOIN pd ON pd.id = l.id)
     UPDATE listings l
        SET flags = CASE WHEN v.pd AND l.status <> 'inactive' THEN array_append(l.flags, 'possible_duplicate')
                         ELSE array_remove(l.flags, 'possible_duplicate') END,
            updated_at = ?
       FROM v
      WHERE l.id = v.id AND (v.pd AND l.status <> 'inactive') <> ('possible_duplicate' = ANY (l.flags))
     RETURNING l.id, cardinality(l.flags) AS n, 'possible_duplicate' = ANY (l.flags) AS pd`,
    [now],
  );
  const newlyFlagged = (flagged.rows as { id: string; n: number; pd: boolean }[]).filter((r) => r.pd && r.n === 1).map((r) => r.id);
  return { merged, newlyFlagged, evaluated: region.size };
}
