import { parseArgs } from 'node:util';
import { z } from 'zod';
import { controlCharacterInArguments, UsageError } from './args.js';
import { loadConfig } from '../config.js';
import { openDatabase, runningServer } from '../db/open.js';
import { normalizeEmail } from '../domain/email.js';
import { KEY_NAME_MAX_CHARS, KEY_NAME_MAX_CODE_POINTS, parseKeyName } from '../domain/key-name.js';
import { TIERS } from '../domain/tiers.js';
import { findOrCreateAccount, newAccountEmailProblem } from '../repositories/accounts.js';
import { createApiKey, listApiKeys, revokeApiKey, setApiKeyTier } from '../repositories/api-keys.js';

const USAGE = `Usage:
  npm run keys -- create --email E --tier free|starter|pro|enterprise [--name N] [--json]
  npm run keys -- list [--email E] [--json]
  npm run keys -- revoke ID [--json]
  npm run keys -- set-tier ID free|starter|pro|enterprise [--json]
  npm run keys -- --help`;

// Where the command writes and what it reads: the process's own streams and environment
// when run as `npm run keys`, buffers in the tests.
export interface KeysCliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
}

const TIER_CHOICES = `${TIERS.slice(0, -1).join(', ')} or ${TIERS.at(-1)}`;
const tier = z.enum(TIERS, { error: (issue) => `unknown tier ${JSON.stringify(issue.input)}: use ${TIER_CHOICES}` });
// Checked in the form the account is stored under (normalizeEmail), as the web page does.
const email = z.string().transform(normalizeEmail).pipe(z.email({ error: (issue) => `${JSON.stringify(issue.input)} is not a valid email address` }));

// The human form of `list`: a header row, then one row per key, in aligned columns.
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return [header, ...rows].map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ')).join('\n');
}

// `npm run keys -- …`: the exit code (0 done, 1 no such key or a failure, 2 usage error).
export async function runKeysCli(argv: string[], io: KeysCliIo): Promise<number> {
  try {
    return await run(argv, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`${err.message}\n\n${USAGE}\n`);
      return 2;
    }
    io.stderr(`${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

async function run(argv: string[], io: KeysCliIo): Promise<number> {
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
  if (values.help || command === 'help') {
    io.stdout(USAGE + '\n');
    return 0;
  }
  const control = controlCharacterInArguments(values, positionals);
  if (control) throw new UsageError(control);
  if (!command) throw new UsageError('a command is needed');
  const check = <T>(schema: z.ZodType<T>, v: unknown): T => {
    const r = schema.safeParse(v);
    if (!r.success) throw new UsageError(r.error.issues[0].message);
    return r.data;
  };
  // Validate before touching the database, and name every problem at once.
  let keyName: string | undefined;
  if (command === 'create') {
    const problems: string[] = [];
    if (values.email === undefined) problems.push('--email is required');
    else if (!email.safeParse(values.email).success) problems.push(`--email: ${email.safeParse(values.email).error!.issues[0].message}`);
    if (values.tier === undefined) problems.push(`--tier is required: ${TIER_CHOICES}`);
    else if (!tier.safeParse(values.tier).success) problems.push(`--tier: ${tier.safeParse(values.tier).error!.issues[0].message}`);
    if (values.name !== undefined) {
      const name = parseKeyName(values.name);
      if (name.ok) keyName = name.name;
      else
        problems.push(
          name.problem === 'too_long'
            ? `--name: at most ${KEY_NAME_MAX_CHARS} characters`
            : name.problem === 'too_many_code_points'
              ? `--name: at most ${KEY_NAME_MAX_CODE_POINTS} Unicode code points (a character built of several, accents stacked on a letter or joined emoji, counts each)`
              : name.problem === 'control_character'
                ? '--name: visible characters only (no control or text-direction characters)'
                : '--name: give a name, or leave --name out',
        );
    }
    if (rest.length) problems.push(`create takes no positional argument (got ${rest.map((a) => JSON.stringify(a)).join(' ')})`);
    if (problems.length) throw new UsageError(problems.join('\n'));
  } else if (command === 'revoke') {
    if (rest.length !== 1) throw new UsageError('revoke takes one key id');
  } else if (command === 'set-tier') {
    if (rest.length !== 2) throw new UsageError('set-tier takes a key id and a tier');
    check(tier, rest[1]);
  } else if (command !== 'list') {
    throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }

  const config = loadConfig(io.env);
  // Without DATABASE_URL and with no `npm start` on the embedded PostgreSQL, the command starts
  // that database for itself: said, since a server run with DATABASE_URL will not know these keys
  // (an outside probe of stop 51 made a key no running server served, without a word).
  if (!config.DATABASE_URL && !runningServer(config)) {
    io.stderr(`note: DATABASE_URL is not set and no \`npm start\` runs on the embedded PostgreSQL: using the embedded database in ${config.EMBEDDED_PG_DIR}, which a server serves only when it starts without DATABASE_URL\n`);
  }
  const database = await openDatabase(config, { role: 'cli' });
  const { db } = database;
  const out = (human: string, json: unknown) => io.stdout((values.json ? JSON.stringify(json) : human) + '\n');
  try {
    switch (command) {
      case 'create': {
        // A new account's address fits RFC 5321's and RFC 1035's lengths; an account made before
        // that rule keeps getting keys (the regression check of stop 52).
        const tooLong = await newAccountEmailProblem(db, values.email!);
        if (tooLong) throw new UsageError(`--email: ${JSON.stringify(normalizeEmail(values.email!))} is not a valid email address: ${tooLong}`);
        const accountId = await findOrCreateAccount(db, values.email!);
        const { record, key } = await createApiKey(db, { accountId, tier: check(tier, values.tier), name: keyName });
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
            : table(
                ['ID', 'TIER', 'KEY', 'EMAIL', 'NAME', 'LAST USED', 'STATE'],
                rows.map((r) => [r.id, r.tier, r.key, r.email, r.name || '-', r.last_used_at ?? 'never', r.revoked_at ? `revoked ${r.revoked_at}` : 'active']),
              );
        out(human, rows);
        return 0;
      }
      case 'revoke': {
        const ok = await revokeApiKey(db, rest[0], new Date());
        if (!ok) {
          io.stderr(`No active key with id ${rest[0]}\n`);
          return 1;
        }
        out(`Revoked ${rest[0]}`, { id: rest[0], revoked: true });
        return 0;
      }
      case 'set-tier': {
        const t = check(tier, rest[1]);
        const ok = await setApiKeyTier(db, rest[0], t);
        if (!ok) {
          io.stderr(`No active key with id ${rest[0]}\n`);
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
