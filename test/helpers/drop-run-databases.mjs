// Drops the databases of finished test runs, in a process of its own that the run does not
// wait for (global-setup.ts starts it detached). A DROP DATABASE makes PostgreSQL 15 take a
// checkpoint: quick on a quiet server, but with a CPU hog beside it dropping the 60-odd
// databases of a run took a minute and a half after the last test had passed.
//
//   node drop-run-databases.mjs <server url> run <template>   the run's databases, then its template
//   node drop-run-databases.mjs <server url> stale           those of earlier runs on this machine
//                                                             whose process is gone (killed runs)
// A database another process is dropping at the same moment is skipped; errors are ignored
// (the next run's 'stale' pass tries again).
import pg from 'pg';

const [base, mode, template] = process.argv.slice(2);
const RUN = /^listings_(?:tpl|test)_(\d+)_([0-9a-z]+)(?:_[0-9a-f]+)?$/;
const HOUR = 3_600_000;

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

async function query(sql, params = []) {
  const c = new pg.Client({ connectionString: `${base}/postgres` });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end().catch(() => {});
  }
}

const drop = (name) => query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`).catch(() => {});

const names = (await query(`SELECT datname FROM pg_database WHERE datname LIKE 'listings\\_t%'`)).map((r) => r.datname);
let doomed;
if (mode === 'run') {
  const prefix = `listings_test_${template.replace(/^listings_tpl_/, '')}_`;
  doomed = names.filter((n) => n.startsWith(prefix));
} else {
  // A run's process is gone and it started over an hour ago (the time is in the name, base 36).
  doomed = names.filter((n) => {
    const m = RUN.exec(n);
    return m && !alive(Number(m[1])) && Date.now() - parseInt(m[2], 36) > HOUR;
  });
  // Templates last: a test database is cloned from one.
  doomed.sort((a, b) => Number(a.startsWith('listings_tpl_')) - Number(b.startsWith('listings_tpl_')));
}
// A few at a time: they share their checkpoints, and the server's connections are shared.
for (let i = 0; i < doomed.length; i += 8) await Promise.all(doomed.slice(i, i + 8).map(drop));
if (mode === 'run') await drop(template);
