import { parseArgs, type ParseArgsConfig } from 'node:util';

// The options of a benchmark or evaluation script (bench/, test/ingest/eval/run.ts), with
// `--help` / `-h` added as `npm run ingest` has it: the usage and exit 0. An unknown or malformed
// option prints what is wrong and the usage, and exits 2, as the CLI's usage errors do (an outside
// probe of stop 61: a stack trace and exit 1).
export function scriptArgs<T extends Omit<ParseArgsConfig, 'args'>>(config: T, usage: string): ReturnType<typeof parseArgs<T>>['values'] {
  let parsed;
  try {
    parsed = parseArgs({ ...config, options: { ...config.options, help: { type: 'boolean', short: 'h', default: false } } });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${usage}\n`);
    process.exit(2);
  }
  const { help, ...values } = parsed.values as Record<string, unknown>;
  if (help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  return values as ReturnType<typeof parseArgs<T>>['values'];
}
