import type { Knex } from 'knex';
import { emailLengthProblem, normalizeEmail } from '../domain/email.js';

// Accounts. Emails are stored, looked up and unique in their normalized form (normalizeEmail:
// any letter case or compatibility spelling of an address is the same address), compared by
// equality.

export interface AccountCredentials {
  id: number;
  email: string;
  password_hash: string | null; // null for accounts made by the admin command line
}

export async function findAccountByEmail(db: Knex | Knex.Transaction, email: string): Promise<AccountCredentials | null> {
  const row = await db('accounts').select('id', 'email', 'password_hash').where({ email: normalizeEmail(email) }).first();
  return (row as AccountCredentials | undefined) ?? null;
}

// What keeps an address from a new account (emailLengthProblem), or null. The address of an
// account made before that rule (the regression check of stop 52) is no new account's: null.
export async function newAccountEmailProblem(db: Knex | Knex.Transaction, email: string): Promise<string | null> {
  const problem = emailLengthProblem(normalizeEmail(email));
  return problem && !(await findAccountByEmail(db, email)) ? problem : null;
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

// The account of an address in any spelling, made (without a password) when there is none.
export async function findOrCreateAccount(db: Knex | Knex.Transaction, email: string): Promise<number> {
  const existing = await findAccountByEmail(db, email);
  if (existing) return existing.id;
  const [row] = await db('accounts').insert({ email: normalizeEmail(email) }).onConflict('email').ignore().returning('id');
  if (row) return row.id as number;
  // Made by another request between the lookup and the insert.
  return (await findAccountByEmail(db, email))!.id;
}
