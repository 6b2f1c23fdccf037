import bcrypt from 'bcrypt';

export const MIN_PASSWORD_LENGTH = 12;
// bcrypt reads only the first 72 bytes of a password: longer ones are refused rather than
// silently cut.
export const MAX_PASSWORD_BYTES = 72;

// The most common passwords of public breach lists that are long enough to pass the length
// rule, and the words people most often pad with digits or symbols to get there
// ("Password2024!", "iloveyou1234"). Compared in lower case.
const COMMON_PASSWORDS = new Set([
  '123456789012', '1234567890123', '12345678901234', '123123123123', '111111111111', '000000000000',
  '123456123456', '112233445566', '123qweasdzxc', '1q2w3e4r5t6y', '1qaz2wsx3edc', 'zaq12wsxcde3',
  'qwertyuiopasdfghjkl', 'qwertyuiop123', 'qwerty123456', 'qwertyqwerty', 'asdfghjkl123', 'azertyuiop12',
  'passwordpassword', 'password1234', 'password12345', 'password123456', 'passw0rdpassw0rd', 'p@ssw0rd1234',
  'iloveyouiloveyou', 'iloveyou1234', 'abc123abc123', 'abcd1234abcd', 'letmeinletmein', 'welcomewelcome',
  'changeme1234', 'correcthorsebatterystaple', 'trustno1trustno1', 'administrator', 'administrator1',
  'football1234', 'baseball1234', 'princess1234', 'sunshine1234', 'superman1234', 'starwars1234',
]);
const COMMON_STEMS = new Set([
  'password', 'passw0rd', 'p@ssw0rd', 'p@ssword', 'qwerty', 'qwertyuiop', 'azerty', 'azertyuiop', 'asdfgh', 'asdfghjkl',
  'iloveyou', 'letmein', 'welcome', 'admin', 'administrator', 'changeme', 'secret', 'monkey', 'dragon', 'master',
  'shadow', 'sunshine', 'princess', 'football', 'baseball', 'soccer', 'superman', 'batman', 'starwars', 'trustno',
  'whatever', 'freedom', 'michael', 'jennifer', 'charlie', 'computer', 'internet', 'luxembourg', 'letzebuerg',
  'summer', 'winter', 'spring', 'autumn', 'hello', 'hellohello', 'loveme', 'mypassword', 'yourpassword',
]);
const SEQUENCES = ['abcdefghijklmnopqrstuvwxyz', '01234567890', '09876543210', 'qwertyuiopasdfghjklzxcvbnm', 'azertyuiopqsdfghjklmwxcvbn'];

// The guess estimator of zxcvbn (@zxcvbn-ts/core, with its common-password, name and keyboard
// dictionaries): it sees through what the rules below miss, variants of common words joined or
// padded ("password1password", "p@ssw0rdp@ssw0rd", "monkeymonkey", "1234567890ab": an outside
// probe of stop 49). Loaded at the first sign-up, not at start (about 24 MB, 60 ms).
let estimator: Promise<(password: string, inputs: string[]) => number> | null = null;
function guessScore(password: string, inputs: string[]): Promise<number> {
  estimator ??= Promise.all([import('@zxcvbn-ts/core'), import('@zxcvbn-ts/language-common')]).then(([{ ZxcvbnFactory }, common]) => {
    const z = new ZxcvbnFactory({ dictionary: { ...common.dictionary }, graphs: common.adjacencyGraphs });
    return (p: string, userInputs: string[]) => z.check(p, userInputs).score;
  });
  return estimator.then((score) => score(password, inputs));
}
// zxcvbn's scores run 0-4; 3 is "safely unguessable" (about 10^8 guesses and more).
const MIN_GUESS_SCORE = 3;

const TOO_COMMON = 'This password is too common: it is among the first that attackers try. A few unrelated words make a strong password that is easy to remember.';
// (Its regression probe: "apple river river" was refused as "too common", which it is not.)
const EASY_TO_GUESS =
  'This password is too easy to guess: it repeats words or characters, or follows a pattern or words that attackers try first. A few unrelated words make a strong password that is easy to remember.';

// What is wrong with a password for a new account, or null when it is acceptable.
export async function passwordProblem(password: string, email: string): Promise<string | null> {
  const rule = passwordRuleProblem(password, email);
  if (rule) return rule;
  const inputs = [...new Set(emailWords(email))].filter((w) => w.length > 0);
  if ((await guessScore(password.normalize('NFC'), [...inputs, 'listings', 'luxembourg'])) < MIN_GUESS_SCORE) return EASY_TO_GUESS;
  return null;
}

// The email's local part, its parts joined and its parts ("jean.muller": jean.muller, jeanmuller, jean,
// muller): a password built on them is refused (its regression probe: "jeanmuller1985" was accepted
// for jean.muller@…). The parts are joined only when there are two or more (its re-check:
// "_info@x.lu" made "info" alone refuse every password holding it).
function emailWords(email: string): [string, string, ...string[]] {
  const local = email.trim().toLowerCase().split('@')[0] ?? '';
  const parts = local.split(/[._+-]+/).filter((p) => p.length > 0);
  return [local, parts.length >= 2 ? parts.join('') : '', ...parts];
}

// The rules: length, common lists, repeats, runs and the email.
function passwordRuleProblem(password: string, email: string): string | null {
  const p = password.normalize('NFC');
  if ([...p].length < MIN_PASSWORD_LENGTH) return `Use at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (Buffer.byteLength(p, 'utf8') > MAX_PASSWORD_BYTES) return `Use at most ${MAX_PASSWORD_BYTES} characters (fewer with accented letters or emoji).`;
  const lower = p.toLowerCase();
  const stem = lower.replace(/^[^\p{L}]+|[^\p{L}]+$/gu, '');
  const tooCommon =
    COMMON_PASSWORDS.has(lower) ||
    COMMON_STEMS.has(stem) ||
    /^(.{1,4})\1+$/su.test(lower) || // one to four characters repeated: "aaaaaaaaaaaa", "abcabcabcabc"
    SEQUENCES.some((s) => s.includes(lower) || (s + s).includes(lower));
  if (tooCommon) return TOO_COMMON;
  const [local, joined] = emailWords(email);
  const squeezed = lower.replace(/[^\p{L}\p{N}]+/gu, '');
  if (lower === email.trim().toLowerCase() || (local.length >= 4 && lower.includes(local)) || (joined.length >= 4 && squeezed.includes(joined))) return 'Do not use your email address in your password.';
  return null;
}

export async function hashPassword(password: string, cost: number): Promise<string> {
  return bcrypt.hash(password.normalize('NFC'), cost);
}

export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  // Longer input could only match by bcrypt's truncation: refuse it outright.
  if (Buffer.byteLength(password.normalize('NFC'), 'utf8') > MAX_PASSWORD_BYTES) {
    await bcrypt.compare('', hash); // same time as a real check
    return false;
  }
  return bcrypt.compare(password.normalize('NFC'), hash);
}

// The work factor a stored hash was made with ("$2b$12$..." -> 12).
export function hashCost(hash: string): number {
  return Number(/^\$2[aby]\$(\d{2})\$/.exec(hash)?.[1] ?? NaN);
}
