import { CONTROL_CHARACTER } from '../lib/text.js';

// Command-line values holding a control character are refused, in every command, as the web
// forms refuse them (src/web/input.ts): they would be stored (a key's name) or echoed back
// to the terminal in messages, where an escape sequence rewrites what the operator sees.
// Returns the problem, naming the option (or the argument's position) and the character.
export function controlCharacterInArguments(values: Record<string, unknown>, positionals: readonly string[]): string | null {
  const found = (s: string) => {
    const c = CONTROL_CHARACTER.exec(s)?.[0];
    return c === undefined ? null : `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  };
  for (const [option, value] of Object.entries(values)) {
    if (typeof value !== 'string') continue;
    const c = found(value);
    if (c) return `--${option} contains a control character (${c}); control characters cannot be used`;
  }
  for (const [i, value] of positionals.entries()) {
    const c = found(value);
    if (c) return `argument ${i + 1} contains a control character (${c}); control characters cannot be used`;
  }
  return null;
}

// A command line the command cannot run: the message and the usage, exit code 2 (`npm run
// keys`, `npm run db:seed`; `npm run ingest` has the importer's IngestUsageError).
export class UsageError extends Error {}
