import type { Knex } from 'knex';
import { normalizeEmail } from '../domain/email.js';

// Account queries of the web page. Emails are stored, looked up and unique in their
// normalized form (normalizeEmail: any letter case or compatibility spelling of an address
// is the same address), compared by equality.

export interface AccountCredentials {
  id: number;
  email: string;
  password_hash: string | null; // null for accounts made by the admin command line
}

export async function findAccountByEmail(db: Knex, email: string): Promise<AccountCredentials | null> {
  const row = await db('accounts').select('id', 'email', 'password_hash').where({ email: normalizeEmail(email) }).first();
  return (row as AccountCredentials | undefined) ?? null;
}

// Null when the email is taken (checked by the unique index, so two sign-ups racing for one
// address cannot both win).
export async function createAccount(db: Knex, email: string, passwordHash: string): Promise<{ id: number; email: string } | null> {
  const [row] = await db('accounts')
    .insert({ email: normalizeEmail(email), password_hash: passwordHash })
    .onConflict('email')
    .ignore()
    .returning(['id', 'email']);
  return (row as { id: number; email: string } | undefined) ?? null;
}
