import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

// The package root (data/, public/): walk up to package.json. Works from src/ (tsx), from
// dist/src/ (a local build) and from /app/src (the container image).
function findRoot(): string {
  let dir = here;
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'data'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the project root (package.json + data/)');
    dir = parent;
  }
}

export const projectRoot = findRoot();
export const dataDir = path.join(projectRoot, 'data');
// Beside the code that runs: migrations/*.ts next to src/, or the compiled migrations/*.js
// next to the compiled src/.
export const migrationsDir = path.resolve(here, '../../migrations');
