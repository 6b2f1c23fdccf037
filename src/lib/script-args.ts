import { parseArgs, type ParseArgsConfig } from 'node:util';

// The options of a benchmark or evaluation script (bench/, test/ingest/eval/run.ts): `--help`
// or `-h` prints its usage and exits 0; an unknown or malformed option prints what is wrong and
// the usage, and exits 2, as the CLI's usage errors do (an outside probe of stop 61: a stack
// trace and exit 1).
export function scriptArgs<T extends Omit<ParseArgsConfig, 'args'>>(config: T, usage: string): ReturnType<typeof parseArgs<T>>['values'] {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  try {
    return parseArgs({ ...config, args: argv }).values as ReturnType<typeof parseArgs<T>>['values'];
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${usage}\n`);
    process.exit(2);
  }
}
