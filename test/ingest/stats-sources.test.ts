import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { FeedParseError, importFeed } from '../../src/ingest/index.js';
import { useTestContext } from '../helpers/context.js';
import { csvFeed, csvRow, gazetteer } from './helpers.js';

const NOW = new Date('2026-11-22T08:00:00.000Z');

describe('a source becomes public with its first successful import, not before', () => {
  const t = useTestContext({ app: 'api' });

  const stats = async () => {
    const res = await request(t.app).get('/api/v1/stats');
    expect(res).toHaveStatus(200);
    return res.body as { sources: { source: string; status: string; last_import_at: string | null }[]; by_source: { source: string }[] };
  };
  const csv = (source: string, text: string) => importFeed(t.db, { source, format: 'csv', input: { text }, now: NOW, gazetteer: gazetteer() });

  it('a failed first import of a new source name (a typo, an unreadable file) leaves it out of /stats', async () => {
    for (const text of ['not;a;feed\n', '\u0000\u0000binary']) {
      await expect(csv('typo-agency', text)).rejects.toBeInstanceOf(FeedParseError);
    }
    const body = await stats();
    expect(body.sources.map((s) => s.source)).not.toContain('typo-agency');
    // The failed runs are on record for the operator all the same.
    const runs = await t.db('import_runs').where({ source: 'typo-agency' });
    expect(runs.map((r) => r.status)).toEqual(['failed', 'failed']);
    expect(await t.db('sources').where({ name: 'typo-agency' }).first()).toBeUndefined();
  });

  it('a successful import makes it public; a later failure shows as its status', async () => {
    const ok = await csv('new-agency', csvFeed([csvRow({ ref: 'N1', place: 'Mamer', area: '55' })]));
    expect(ok.status).toBe('ok');
    let s = (await stats()).sources.find((x) => x.source === 'new-agency');
    expect(s).toMatchObject({ status: 'ok' });
    expect(s?.last_import_at).toBeTruthy();

    await expect(csv('new-agency', 'not;a;feed\n')).rejects.toBeInstanceOf(FeedParseError);
    s = (await stats()).sources.find((x) => x.source === 'new-agency');
    expect(s).toMatchObject({ status: 'failed' });
  });
});
