import { loadConfig } from '../config.js';
import { runMigrations } from '../db/knex.js';
import { openDatabase } from '../db/open.js';

// npm run db:migrate (latest) | npm run db:rollback (undo the last batch)
async function main(): Promise<void> {
  const command = process.argv[2] ?? 'latest';
  if (command !== 'latest' && command !== 'rollback') {
    process.stderr.write('Usage: tsx src/cli/migrate.ts latest|rollback\n');
    process.exit(2);
  }
  const database = await openDatabase(loadConfig(), { role: 'cli', migrate: false });
  try {
    const { batch, files } = await runMigrations(database.db, command);
    process.stdout.write(files.length === 0 ? 'Nothing to do.\n' : `${command === 'latest' ? 'Applied' : 'Rolled back'} batch ${batch}: ${files.join(', ')}\n`);
  } finally {
    await database.close();
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
