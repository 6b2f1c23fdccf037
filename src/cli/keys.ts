import { runKeysCli } from './keys-command.js';

// `npm run keys -- …` (the command itself is in keys-command.ts, which the tests run in-process).
const code = await runKeysCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
});
process.exit(code);
