import type { Knex } from 'knex';
import { normalizeEmail } from '../src/domain/email.js';

// Account emails in their normalized form (src/domain/email.ts), unique by equality. The
// previous unique index on lower(email) used PostgreSQL's case mapping, which differs from
// the one the sign-in throttle used (issue 10, item 3); now the application normalizes once
// and the database compares what it stored.
//
// Two existing accounts whose addresses become the same (say ＡLICE@x.lu and alice@x.lu,
// which lower() kept apart): the older one (created first, then lowest id) keeps the
// address; each newer one is renamed `duplicate-<id>:<address>`, which is no valid address,
// so it can no longer sign in on the web page, while its API keys keep working and
// `npm run keys -- list` still shows it. Nothing is deleted or moved between accounts.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX IF EXISTS accounts_email_lower_idx`);
  const rows = (await knex('accounts').select('id', 'email').orderBy([{ column: 'created_at' }, { column: 'id' }])) as { id: number; email: string }[];
  const owner = new Map<string, number>();
  const changes: { id: number; email: string }[] = [];
  const renamed: string[] = [];
  for (const r of rows) {
    const address = normalizeEmail(r.email);
    if (!owner.has(address)) {
      owner.set(address, r.id);
      if (address !== r.email) changes.push({ id: r.id, email: address });
    } else {
      changes.push({ id: r.id, email: `duplicate-${r.id}:${address}` });
      renamed.push(`account ${r.id} (same address as account ${owner.get(address)})`);
    }
  }
  if (changes.length > 0) {
    await knex.raw(
      `UPDATE accounts a SET email = c.email FROM jsonb_to_recordset(?::jsonb) AS c(id integer, email text) WHERE a.id = c.id`,
      [JSON.stringify(changes)],
    );
  }
  if (renamed.length > 0) {
    process.stderr.write(`accounts with the same normalized email: renamed ${renamed.join(', ')} to duplicate-<id>:<email>\n`);
  }
  await knex.raw(`CREATE UNIQUE INDEX accounts_email_key ON accounts (email)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX IF EXISTS accounts_email_key`);
  await knex.raw(`CREATE UNIQUE INDEX accounts_email_lower_idx ON accounts (lower(email))`);
}
