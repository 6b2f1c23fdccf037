import type { Knex } from 'knex';
import { CANDIDATE_SQL, NODE_COLS } from './candidates.js';
import { matchComponents } from './components.js';
import { classifyPair, decideMatches, resolveGroups, type DedupNode, type MatchPair, type PlacePoints } from './rule.js';
import { RULE } from './tolerances.js';

type Db = Knex | Knex.Transaction;

// The standing of a listing: what its group decides. Full rows are read a slice at a time:
// when probed, and again for grouping.
interface Standing {
  id: string;
  status: 'active' | 'merged';
  merged_into: string | null;
  flags: string[];
}

interface NodeRow extends DedupNode, Standing {}

const PROBE_SLICE = 10_000;

async function setFrontier(trx: Db, ids: string[]): Promise<void> {
  await trx.raw(`TRUNCATE dedup_frontier`);
  await addToFrontier(trx, ids);
  await trx.raw(`ANALYZE dedup_frontier`);
}

async function addToFrontier(trx: Db, ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 20000) {
    await trx.raw(`INSERT INTO dedup_frontier SELECT DISTINCT unnest(?::text[]) ON CONFLICT DO NOTHING`, [ids.slice(i, i + 20000)]);
  }
}

// The region (every listing whose group is decided again, with its standing before) is a
// table, not a map in memory: a big import touches hundreds of thousands of listings, and
// holding each one's id and standing took the importer's memory past what reading the
// file needs (200,000 new listings: 60 MB more of live heap, 270 MB RSS). What stays in
// memory grows with the listings in a match only (their rows, for grouping).
async function createRegion(trx: Db): Promise<void> {
  await trx.raw(`CREATE TEMP TABLE IF NOT EXISTS dedup_frontier (id text PRIMARY KEY) ON COMMIT DROP`);
  await trx.raw(`CREATE TEMP TABLE IF NOT EXISTS dedup_region (
      id text PRIMARY KEY, status text NOT NULL, merged_into text, possible boolean NOT NULL, probed boolean NOT NULL DEFAULT false
    ) ON COMMIT DROP`);
  // The new standing of the region's listings in a match; the others stand alone.
  await trx.raw(`CREATE TEMP TABLE IF NOT EXISTS dedup_decided (id text PRIMARY KEY, status text NOT NULL, merged_into text, possible boolean NOT NULL) ON COMMIT DROP`);
  await trx.raw(`TRUNCATE dedup_frontier, dedup_region, dedup_decided`);
}

// Adds to the region the live listings of the frontier and every listing that shares a
// stored group with one (those already in it keep their place).
async function growRegion(trx: Db): Promise<void> {
  await trx.raw(`
    INSERT INTO dedup_region (id, status, merged_into, possible)
    WITH f AS (SELECT l.id, l.merged_into FROM listings l JOIN dedup_frontier x ON x.id = l.id),
         heads AS (SELECT id FROM f UNION SELECT merged_into FROM f WHERE merged_into IS NOT NULL)
    SELECT id, status, merged_into, 'possible_duplicate' = ANY (flags) FROM (
      SELECT l.id, l.status, l.merged_into, l.flags FROM listings l JOIN heads h ON h.id = l.id WHERE l.status IN ('active', 'merged')
      UNION
      SELECT l.id, l.status, l.merged_into, l.flags FROM listings l JOIN heads h ON h.id = l.merged_into WHERE l.status = 'merged') s
    ON CONFLICT (id) DO NOTHING`);
}

// Those of these ids that are in the region.
async function inRegion(trx: Db, ids: Iterable<string>): Promise<Set<string>> {
  const all = [...new Set(ids)];
  const found = new Set<string>();
  for (let i = 0; i < all.length; i += 20000) {
    const res = await trx.raw(`SELECT id FROM dedup_region WHERE id = ANY (?::text[])`, [all.slice(i, i + 20000)]);
    for (const r of res.rows as { id: string }[]) found.add(r.id);
  }
  return found;
}

// Full rows of the frontier's live listings (a slice of probes).
async function loadNodes(trx: Db): Promise<NodeRow[]> {
  const res = await trx.raw(`SELECT ${NODE_COLS('l')} FROM listings l JOIN dedup_frontier x ON x.id = l.id WHERE l.status IN ('active', 'merged')`);
  return (res.rows as NodeRow[]).map(fixRow);
}

// jsonb_array_length is an integer; node-postgres gives it as a number already.
function fixRow(r: NodeRow): NodeRow {
  return { ...r, image_count: Number(r.image_count) };
}

export async function loadPlaces(trx: Db): Promise<PlacePoints> {
  const communes = (await trx.raw(`SELECT name, lat, lng, area_km2 FROM communes`)).rows as { name: string; lat: number; lng: number; area_km2: number | null }[];
  const localities = (await trx.raw(`SELECT commune, locality, kind, lat, lng FROM localities`)).rows as {
    commune: string; locality: string; kind: string; lat: number | null; lng: number | null;
  }[];
  const c = new Map(communes.map((r) => [r.name, { lat: r.lat, lng: r.lng, radiusKm: Math.sqrt((r.area_km2 ?? 20) / Math.PI) }]));
  const l = new Map(
    localities.filter((r) => r.lat !== null && r.lng !== null).map((r) => [`${r.commune}\u0000${r.locality}`, { lat: r.lat!, lng: r.lng! }]),
  );
  const cities = new Set(localities.filter((r) => r.kind.startsWith('quartier')).map((r) => r.commune));
  const byCommune = new Map<string, { lat: number; lng: number }[]>();
  for (const r of localities) if (r.lat !== null && r.lng !== null) byCommune.set(r.commune, [...(byCommune.get(r.commune) ?? []), { lat: r.lat, lng: r.lng }]);
  return {
    localitiesOf: (name) => byCommune.get(name) ?? [],
    commune: (name) => c.get(name) ?? null,
    locality: (commune, name) => l.get(`${commune}\u0000${name}`) ?? null,
    hasQuarters: (name) => cities.has(name),
  };
}

// Candidate pairs by blocking, through the dedup indexes (one price range per grid cell or
// per area bucket, the area window checked inside the index; by rooms and price for a side
// without an area): same type, a price within the widest tolerance, and either a grid cell
// around a located probe or the probe's commune for pairs with an unlocated side. Then the
// agreement classes of classifyPair, written in SQL (candidates.ts), so that only matches
// travel back; classifyPair decides (contradictions, clear matches).
async function loadCandidates(trx: Db): Promise<{ probe: string; row: NodeRow }[]> {
  const res = await trx.raw(CANDIDATE_SQL);
  return (res.rows as (NodeRow & { probe: string })[]).map(({ probe, ...row }) => ({ probe, row: fixRow(row as NodeRow) }));
}


export interface DedupOutcome {
  merged: number;
  separated: number;
  newlyFlagged: string[];
  evaluated: number;
}

// Re-decides the groups that the changed listings belong to, belonged to, or could now
// join. The decision for a region depends only on the live listings in it, never on what
// was decided before, which makes it independent of the import order: the region grows
// until it is closed under matches (merged or possible: a match's competitors are matches
// too), stored group membership, and the stored matches of the listings that changed or
// went. Within it: which matches are clear (decideMatches), the groups and their public
// listings, and possible_duplicate (resolveGroups), all written here. The matches are
// stored (listing_dedup_pairs) so that when a listing changes or goes, the listings it was
// matched with are looked at again.
export async function deduplicate(trx: Db, touched: number, formerCanonicals: string[], now: Date): Promise<DedupOutcome> {
  if (touched === 0 && formerCanonicals.length === 0) return { merged: 0, separated: 0, newlyFlagged: [], evaluated: 0 };
  await createRegion(trx);
  const places = await loadPlaces(trx);

  // The matches found (ids and verdicts only: rows are read again, a component at a time,
  // for grouping).
  const matches = new Map<string, MatchPair & { weak: boolean }>();
  // Listings with more than RULE.crowd candidates not located on both sides: in a place that
  // crowded, weak evidence singles nothing out, and their weak matches are not used.
  const crowded = new Set<string>();

  // The listings paired with these at the previous decision (stored pairs), only the pairs
  // that counted (not those dropped as crowded).
  const partnersOf = async (ids: string[]): Promise<string[]> => {
    if (ids.length === 0) return [];
    await setFrontier(trx, ids);
    return (
      await trx.raw(`
        SELECT p.b AS id FROM listing_dedup_pairs p JOIN dedup_frontier x ON x.id = p.a AND p.kind <> 'crowded'
        UNION SELECT p.a FROM listing_dedup_pairs p JOIN dedup_frontier x ON x.id = p.b AND p.kind <> 'crowded'`)
    ).rows.map((r: { id: string }) => r.id) as string[];
  };

  // Those of these ids that have stored pairs that counted (not dropped as crowded).
  const withCountingPairs = async (ids: string[]): Promise<string[]> => {
    if (ids.length === 0) return [];
    await setFrontier(trx, ids);
    return (
      await trx.raw(`
        SELECT x.id FROM dedup_frontier x
         WHERE EXISTS (SELECT 1 FROM listing_dedup_pairs p WHERE p.a = x.id AND p.kind <> 'crowded')
            OR EXISTS (SELECT 1 FROM listing_dedup_pairs p WHERE p.b = x.id AND p.kind <> 'crowded')`)
    ).rows.map((r: { id: string }) => r.id) as string[];
  };

  // A listing that changed or went: whatever it was paired with is decided again (a crowded
  // listing may have stopped being crowded).
  await trx.raw(`INSERT INTO dedup_frontier SELECT id FROM ingest_touched`);
  await addToFrontier(trx, formerCanonicals);
  await trx.raw(`
    INSERT INTO dedup_frontier
    SELECT p.b FROM listing_dedup_pairs p JOIN ingest_touched t ON t.id = p.a
    UNION SELECT p.a FROM listing_dedup_pairs p JOIN ingest_touched t ON t.id = p.b
    ON CONFLICT DO NOTHING`);
  await trx.raw(`ANALYZE dedup_frontier`);
  await growRegion(trx);
  await trx.raw(`ANALYZE dedup_region`);

  for (let round = 0; round < 1000; round++) {
    const next = new Set<string>();
    // The listings that came into the region with this round, in slices (by id), so that a
    // dense neighbourhood never brings millions of rows back at once.
    for (let after = ''; ; ) {
      const slice = ((await trx.raw(`SELECT id FROM dedup_region WHERE NOT probed AND id > ? ORDER BY id LIMIT ?`, [after, PROBE_SLICE])).rows as { id: string }[]).map((r) => r.id);
      if (slice.length === 0) break;
      after = slice[slice.length - 1];
      await setFrontier(trx, slice);
      const probes = new Map((await loadNodes(trx)).map((r) => [r.id, r]));
      const touchedProbes = new Set(((await trx.raw(`SELECT x.id FROM dedup_frontier x JOIN ingest_touched t ON t.id = x.id`)).rows as { id: string }[]).map((r) => r.id));
      const cands = await loadCandidates(trx);
      const weakRows = new Map<string, number>();
      const found: { probe: string; other: string; weak: boolean }[] = [];
      for (const r of cands) {
        const probe = probes.get(r.probe);
        if (!probe) continue;
        const weak = !(probe.located && r.row.located);
        if (weak) weakRows.set(r.probe, (weakRows.get(r.probe) ?? 0) + 1);
        const [a, b] = r.probe < r.row.id ? [r.probe, r.row.id] : [r.row.id, r.probe];
        found.push({ probe: r.probe, other: r.row.id, weak });
        if (matches.has(`${a}|${b}`)) continue;
        const v = classifyPair(probe, r.row, places);
        if (!v.match) continue;
        matches.set(`${a}|${b}`, { a, b, level: v.match, discrepancy: v.discrepancy, weak });
      }
      const nowCrowded = [...weakRows].filter(([, n]) => n > RULE.crowd).map(([id]) => id);
      for (const id of nowCrowded) crowded.add(id);
      // A listing that is crowded now may not have been: what it counted with before is
      // decided again.
      const partners = await partnersOf(nowCrowded);
      // A listing that appeared or changed counts among the weak candidates of others: one of
      // them that had weak matches that counted may be crowded now, so it is looked at again.
      const weakOfTouched = found.filter((f) => f.weak && touchedProbes.has(f.probe)).map((f) => f.other);
      // Grow through matches, but not through the weak ones of a crowded listing.
      const grown = found
        .filter((f) => matches.has(f.probe < f.other ? `${f.probe}|${f.other}` : `${f.other}|${f.probe}`) && !(f.weak && crowded.has(f.probe)))
        .map((f) => f.other);
      const known = await inRegion(trx, [...partners, ...weakOfTouched, ...grown]);
      for (const id of partners) if (!known.has(id)) next.add(id);
      for (const id of await withCountingPairs([...new Set(weakOfTouched.filter((id) => !known.has(id)))])) next.add(id);
      for (const id of grown) if (!known.has(id)) next.add(id);
    }
    await trx.raw(`UPDATE dedup_region SET probed = true WHERE NOT probed`);
    if (next.size === 0) break;
    const ids = [...next];
    for (let i = 0; i < ids.length; i += PROBE_SLICE) {
      await setFrontier(trx, ids.slice(i, i + PROBE_SLICE));
      await growRegion(trx);
    }
  }
  // Weak matches count only between two listings that are not crowded (both were probed: a
  // weak match of a listing that is not crowded brings the other side in).
  const dropped: { a: string; b: string }[] = [];
  for (const [k, m] of matches) {
    if (!m.weak || !(crowded.has(m.a) || crowded.has(m.b))) continue;
    matches.delete(k);
    dropped.push(m);
  }

  const kept = [...matches.values()];
  matches.clear();

  // The stored pairs of every probed or changed listing are replaced by the pairs found now:
  // the matches with their verdict, and the weak matches dropped as crowded ('crowded'),
  // so that a listing paired with one that changes or goes is decided again. Every listing
  // of the region was probed.
  await trx.raw(`TRUNCATE dedup_frontier`);
  await trx.raw(`INSERT INTO dedup_frontier SELECT id FROM dedup_region UNION SELECT id FROM ingest_touched`);
  await trx.raw(`ANALYZE dedup_frontier`);
  await trx.raw(`DELETE FROM listing_dedup_pairs p WHERE p.a IN (SELECT id FROM dedup_frontier) OR p.b IN (SELECT id FROM dedup_frontier)`);
  await storePairs(trx, dropped.map((p) => ({ a: p.a, b: p.b, kind: 'crowded' as const, discrepancy: -1 })));

  // Grouping, by connected components of the matches within the region (components.ts), a
  // batch of them at a time with their rows read again: holding the rows of every listing
  // in a match took as much memory as the region did (an import that duplicates another
  // source: all of its listings). The standing of each listing in a match goes to
  // dedup_decided; every other one of the region stands alone (active, merged into
  // nothing, no possible_duplicate).
  const known = await inRegion(trx, kept.flatMap((m) => [m.a, m.b]));
  let batch: MatchPair[] = [];
  const decide = async () => {
    const ids = [...new Set(batch.flatMap((m) => [m.a, m.b]))];
    await setFrontier(trx, ids);
    const nodes = new Map<string, DedupNode>((await loadNodes(trx)).map((r) => [r.id, r]));
    const pairs = decideMatches(nodes, batch);
    const { canonical, possibleDuplicate } = resolveGroups(nodes, pairs, (a, b) => classifyPair(a, b, places).contradiction);
    const canon = ids.map((id) => canonical.get(id) ?? id);
    await trx.raw(`INSERT INTO dedup_decided SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::boolean[])`, [
      ids,
      ids.map((id, k) => (canon[k] === id ? 'active' : 'merged')),
      ids.map((id, k) => (canon[k] === id ? null : canon[k])),
      ids.map((id) => possibleDuplicate.has(id)),
    ] as unknown as Knex.RawBinding[]);
    await storePairs(trx, pairs);
    batch = [];
  };
  for (const component of matchComponents(kept.filter((m) => known.has(m.a) && known.has(m.b)))) {
    batch.push(...component);
    if (batch.length >= PROBE_SLICE) await decide();
  }
  if (batch.length > 0) await decide();

  const [outcome] = (
    await trx.raw(
      `WITH target AS (
         SELECT r.id, r.status AS was, r.merged_into AS was_into, r.possible AS was_possible,
                coalesce(d.status, 'active') AS status, d.merged_into, coalesce(d.possible, false) AS possible
           FROM dedup_region r LEFT JOIN dedup_decided d ON d.id = r.id),
       changed AS (
         UPDATE listings l SET status = t.status, merged_into = t.merged_into, updated_at = ?,
                flags = CASE WHEN t.possible THEN array_append(array_remove(l.flags, 'possible_duplicate'), 'possible_duplicate')
                             ELSE array_remove(l.flags, 'possible_duplicate') END
           FROM target t
          WHERE l.id = t.id AND (t.status <> t.was OR t.merged_into IS DISTINCT FROM t.was_into OR t.possible <> t.was_possible)
         RETURNING l.id, t.status, t.was, t.possible, t.was_possible, cardinality(l.flags) AS n)
       SELECT count(*) FILTER (WHERE status = 'merged' AND was <> 'merged')::int AS merged,
              count(*) FILTER (WHERE status = 'active' AND was = 'merged')::int AS separated,
              coalesce(array_agg(id) FILTER (WHERE possible AND n = 1 AND NOT was_possible), '{}') AS flagged,
              (SELECT count(*)::int FROM dedup_region) AS evaluated
         FROM changed`,
      [now],
    )
  ).rows as { merged: number; separated: number; flagged: string[]; evaluated: number }[];

  return { merged: outcome.merged, separated: outcome.separated, newlyFlagged: outcome.flagged, evaluated: outcome.evaluated };
}

// Listings whose rank for their group's public listing changed (their stale or price_outlier
// flag came or went: compareCanonical): those in a group or matched with a look-alike (a stored pair that
// counted) are decided again, as if they had changed. Returns how many.
export async function touchReranked(trx: Db, ids: string[]): Promise<number> {
  await trx.raw(`CREATE TEMP TABLE IF NOT EXISTS ingest_touched (id text PRIMARY KEY) ON COMMIT DROP`);
  let n = 0;
  for (let i = 0; i < ids.length; i += 20000) {
    const res = await trx.raw(
      `INSERT INTO ingest_touched
       SELECT x.id FROM unnest(?::text[]) x (id)
        WHERE EXISTS (SELECT 1 FROM listing_dedup_pairs p WHERE p.a = x.id AND p.kind <> 'crowded')
           OR EXISTS (SELECT 1 FROM listing_dedup_pairs p WHERE p.b = x.id AND p.kind <> 'crowded')
       ON CONFLICT DO NOTHING`,
      [ids.slice(i, i + 20000)],
    );
    n += res.rowCount ?? 0;
  }
  if (n > 0) await trx.raw(`ANALYZE ingest_touched`);
  return n;
}

async function storePairs(trx: Db, stored: { a: string; b: string; kind: 'merge' | 'possible' | 'crowded'; discrepancy: number }[]): Promise<void> {
  for (let i = 0; i < stored.length; i += 20000) {
    const part = stored.slice(i, i + 20000);
    await trx.raw(
      `INSERT INTO listing_dedup_pairs (a, b, kind, score) SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::float8[])
       ON CONFLICT (a, b) DO UPDATE SET kind = excluded.kind, score = excluded.score`,
      [part.map((p) => p.a), part.map((p) => p.b), part.map((p) => p.kind), part.map((p) => p.discrepancy)] as unknown as Knex.RawBinding[],
    );
  }
}
