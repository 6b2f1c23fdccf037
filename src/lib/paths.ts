import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Works from src/ (tsx) and from dist/src/ (compiled): walk up to the package root.
function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'migrations'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the project root (package.json + migrations/)');
    dir = parent;
  }
}

export const projectRoot = findRoot();
export const dataDir = path.join(projectRoot, 'data');
export const migrationsDir = path.join(projectRoot, 'migrations');
