import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { useTestContext } from '../helpers/context.js';

// A database error is logged with what it was doing (its statement), never with the values it
// carried: knex's `bindings`, PostgreSQL's `detail` (an outside probe of stop 48 found a
// sign-up's password hash, emails, session ids and key digests in the log of a stalled database).
const t = useTestContext();

function capture() {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      raw.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  return { logger: createLogger({ LOG_LEVEL: 'info', LOG_PRETTY: false }, stream), raw };
}

describe('the log of a database error', () => {
  it("keeps knex's statement and drops its bindings, and drops PostgreSQL's detail (the row it refused)", async () => {
    const { logger, raw } = capture();
    const timedOut = await t.db.raw('SELECT pg_sleep(2), ?::text AS hash', ['$2b$12$secret-hash-of-a-password']).timeout(50).catch((e: unknown) => e);
    expect((timedOut as { bindings?: unknown }).bindings).toEqual(['$2b$12$secret-hash-of-a-password']);
    logger.error({ err: timedOut }, 'dependency unavailable');
    await t.db.raw('CREATE TEMP TABLE log_probe (email text NOT NULL, hash text NOT NULL)');
    const refused = await t.db.raw('INSERT INTO log_probe (email, hash) VALUES (?, NULL)', ['someone@example.com']).catch((e: unknown) => e);
    expect(String((refused as { detail?: unknown }).detail)).toContain('someone@example.com');
    logger.error({ err: refused }, 'unhandled error');
    logger.error(refused as Error);
    expect(raw).toHaveLength(3);
    const all = raw.join('\n');
    expect(all).not.toContain('secret-hash-of-a-password');
    expect(all).not.toContain('someone@example.com');
    const first = JSON.parse(raw[0]) as { err: { sql: string; bindings: unknown; type: string } };
    expect(first.err).toMatchObject({ sql: 'SELECT pg_sleep(2), $1::text AS hash', bindings: '[redacted]', type: 'KnexTimeoutError' });
  });
});
