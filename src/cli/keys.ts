import { parseArgs } from 'node:util';
import { z } from 'zod';
import { loadConfig } from '../config.js';
import { openDatabase } from '../db/open.js';
import { normalizeEmail } from '../domain/email.js';
import { TIERS } from '../domain/tiers.js';
import { createApiKey, findOrCreateAccount, listApiKeys, revokeApiKey, setApiKeyTier } from '../repositories/api-keys.js';

const USAGE = `Usage:
  npm run keys -- create --email E --tier free|starter|pro|enterprise [--name N] [--json]
  npm run keys -- list [--email E] [--json]
  npm run keys -- revoke ID [--json]
  npm run keys -- set-tier ID free|starter|pro|enterprise [--json]`;

class UsageError extends Error {}

const tier = z.enum(TIERS, `tier must be one of ${TIERS.join(', ')}`);
// Checked in the form the account is stored under (normalizeEmail), as the web page does.
const email = z.string('email must be a valid address').transform(normalizeEmail).pipe(z.email('email must be a valid address'));

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        email: { type: 'string' },
        tier: { type: 'string' },
        name: { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    process.stdout.write(USAGE + '\n');
    return command ? 0 : 2;
  }
  const check = <T>(schema: z.ZodType<T>, v: unknown): T => {
    const r = schema.safeParse(v);
    if (!r.success) throw new UsageError(r.error.issues[0].message);
    return r.data;
  };
  // Validate before touching the database.
  if (command === 'create') {
    check(email, values.email);
    check(tier, values.tier);
  } else if (command === 'revoke') {
    if (rest.length !== 1) throw new UsageError('revoke takes one key id');
  } else if (command === 'set-tier') {
    if (rest.length !== 2) throw new UsageError('set-tier takes a key id and a tier');
    check(tier, rest[1]);
  } else if (command !== 'list') {
    throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }

  const config = loadConfig();
  const database = await openDatabase(config, { role: 'cli' });
  const { db } = database;
  const out = (human: string, json: unknown) => process.stdout.write((values.json ? JSON.stringify(json) : human) + '\n');
  try {
    switch (command) {
      case 'create': {
        const accountId = await findOrCreateAccount(db, values.email!);
        const { record, key } = await createApiKey(db, { accountId, tier: check(tier, values.tier), name: values.name });
        out(
          `Created key ${record.id} (${record.tier}) for ${record.email}\n\n  ${key}\n\nStore it now: it is not shown again.`,
          { id: record.id, key, tier: record.tier, email: record.email, name: record.name, created_at: record.created_at },
        );
        return 0;
      }
      case 'list': {
        if (values.email) check(email, values.email);
        const keys = await listApiKeys(db, { email: values.email });
        const rows = keys.map((k) => ({
          id: k.id,
          email: k.email,
          name: k.name,
          tier: k.tier,
          key: `${k.prefix}…${k.last4}`,
          created_at: k.created_at.toISOString(),
          last_used_at: k.last_used_at?.toISOString() ?? null,
          revoked_at: k.revoked_at?.toISOString() ?? null,
        }));
        const human =
          rows.length === 0
            ? 'No keys.'
            : rows.map((r) => `${r.id}  ${r.tier.padEnd(10)} ${r.key}  ${r.email}  ${r.name || '-'}  ${r.revoked_at ? 'revoked ' + r.revoked_at : 'active'}`).join('\n');
        out(human, rows);
        return 0;
      }
      case 'revoke': {
        const ok = await revokeApiKey(db, rest[0], new Date());
        if (!ok) {
          process.stderr.write(`No active key with id ${rest[0]}\n`);
          return 1;
        }
        out(`Revoked ${rest[0]}`, { id: rest[0], revoked: true });
        return 0;
      }
      case 'set-tier': {
        const t = check(tier, rest[1]);
        const ok = await setApiKeyTier(db, rest[0], t);
        if (!ok) {
          process.stderr.write(`No key with id ${rest[0]}\n`);
          return 1;
        }
        out(`Key ${rest[0]} is now ${t}`, { id: rest[0], tier: t });
        return 0;
      }
    }
    return 2;
  } finally {
    await database.close();
  }
}

main(process.argv.slice(2))
  .then((code) => process.exit(code))
  .catch((err) => {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
