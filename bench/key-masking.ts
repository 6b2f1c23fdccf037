// How many random API keys the request log's masking (src/http/logged-path.ts, holdsKeyBody)
// does not recognise, written without their prefix, behind a mistyped one, or a few characters
// short: N random 32-byte secrets per form, the count of those that would be logged as sent.
//   npx tsx bench/key-masking.ts [N, default 200000]
import { randomBytes } from 'node:crypto';
import { holdsKeyBody } from '../src/http/logged-path.js';

const N = Number(process.argv[2] ?? 200_000);
const forms: [string, (s: string) => string][] = [
  ['whole, no prefix', (s) => s],
  ['behind lfk-', (s) => `lfk-${s}`],
  ['2 characters short', (s) => s.slice(2)],
  ['4 short', (s) => s.slice(4)],
  ['6 short', (s) => s.slice(0, -6)],
  ['8 short', (s) => s.slice(8)],
  ['10 short', (s) => s.slice(10)],
];
const secrets = Array.from({ length: N }, () => randomBytes(32).toString('base64url'));
console.log(`${N.toLocaleString('en')} random keys per form; not recognised:`);
for (const [name, form] of forms) {
  let missed = 0;
  for (const s of secrets) if (!holdsKeyBody(form(s))) missed++;
  console.log(`  ${name}: ${missed}`);
}
