import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';

// The web pages' sessions and the secrets that sign their cookies.

// The table connect-pg-simple keeps the sessions in (migrations/20261122002000_web_sessions.ts).
export const SESSION_TABLE = 'web_sessions';

// connect-pg-simple speaks to a pg.Pool-like `query(text, $n-params)`. This one runs its
// statements through knex, so sessions share the service's pool, statement timeout and
// shutdown instead of opening a second pool.
export function sessionStorePool(db: Knex) {
  return {
    async query(text: string, params: unknown[] = []) {
      const bindings: unknown[] = [];
      const sql = text.replace(/\$(\d+)/g, (_m, n: string) => {
        const v = params[Number(n) - 1];
        bindings.push(v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v);
        return '?';
      });
      return db.raw(sql, bindings as Knex.RawBinding[]);
    },
  };
}

// Takes a session's single-use create-form nonce in one statement: true for exactly one of
// several requests that send the same form at once (each holds its own copy of the session;
// the row is what they share). express-session writes each request's copy afterwards.
export async function takeCreateNonce(db: Knex, sid: string, nonce: string): Promise<boolean> {
  const res = await db.raw(
    `UPDATE ${SESSION_TABLE} SET sess = (sess::jsonb - 'createNonce')::json WHERE sid = ? AND sess::jsonb ->> 'createNonce' = ? RETURNING sid`,
    [sid, nonce],
  );
  return res.rows.length === 1;
}

// The cookie-signing secrets live in the database (newest first), so every instance of the
// service and every restart agree on them without another setting to manage. They also key
// the CSRF tokens (src/web/csrf.ts).
export async function loadWebSecrets(db: Knex): Promise<string[]> {
  await db('web_session_secrets').insert({ id: 1, secret: randomBytes(32).toString('base64url') }).onConflict('id').ignore();
  const rows = await db('web_session_secrets').select('secret').orderBy('id', 'desc');
  return rows.map((r: { secret: string }) => r.secret);
}
