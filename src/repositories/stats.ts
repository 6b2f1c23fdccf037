import type { Knex } from 'knex';

// The outcome of a source's latest finished import run (the check constraint of import_runs
// allows running, ok, failed and refused), or never.
export type ImportOutcome = 'ok' | 'failed' | 'refused' | 'never';

export interface Stats {
  total_active: number;
  flagged: number;
  by_source: { source: string; active: number }[];
  by_commune: { commune: string; active: number }[];
  sources: { source: string; last_import_at: Date | null; status: ImportOutcome }[];
}

// Public statistics: every active listing counts, flagged or not (docs/spec/contract.md section 9).
export async function computeStats(db: Knex): Promise<Stats> {
  const [totals, bySource, byCommune, sources] = await Promise.all([
    db('listings')
      .where('status', 'active')
      .select(db.raw('count(*)::int AS total_active'), db.raw('count(*) FILTER (WHERE flagged)::int AS flagged'))
      .first(),
    db('listings').where('status', 'active').select('source', db.raw('count(*)::int AS active')).groupBy('source'),
    db('listings').where('status', 'active').select('commune', db.raw('count(*)::int AS active')).groupBy('commune'),
    db.raw(`
      SELECT s.name AS source,
             (SELECT max(r.finished_at) FROM import_runs r WHERE r.source = s.name AND r.status = 'ok') AS last_import_at,
             coalesce((SELECT r.status FROM import_runs r WHERE r.source = s.name AND r.status <> 'running'
                       ORDER BY r.started_at DESC, r.id DESC LIMIT 1), 'never') AS status,
             (SELECT max(p.updated_at) FROM native_posts p WHERE s.name = 'native') AS native_updated_at
      FROM sources s`),
  ]);
  const byCount = <T extends { active: number }>(key: (x: T) => string) => (a: T, b: T) => b.active - a.active || key(a).localeCompare(key(b));
  return {
    total_active: totals?.total_active ?? 0,
    flagged: totals?.flagged ?? 0,
    by_source: (bySource as { source: string; active: number }[]).sort(byCount((x) => x.source)),
    by_commune: (byCommune as { commune: string; active: number }[]).sort(byCount((x) => x.commune)),
    sources: (sources.rows as { source: string; last_import_at: Date | null; status: ImportOutcome; native_updated_at: Date | null }[])
      .map((s) => {
        // Native posts are live: their freshness is the latest change to a post.
        const last = [s.last_import_at, s.native_updated_at].filter((d): d is Date => d !== null).sort((a, b) => b.getTime() - a.getTime())[0] ?? null;
        return { source: s.source, last_import_at: last, status: s.source === 'native' && s.status === 'never' && last ? 'ok' : s.status };
      })
      .sort((a, b) => a.source.localeCompare(b.source)),
  };
}
