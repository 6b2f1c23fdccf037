import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/lib/paths.js';

// Issue 10, item 14: README pointed at shared/feeds/FORMATS.md, which is not in the
// repository. Every relative link of the documentation must name a file of the repository.

const docs = ['README.md', ...readdirSync(path.join(projectRoot, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

// Markdown links and images: [text](target) and ![alt](target), outside code spans is not
// distinguished (a code sample with such a pattern would be checked too, which is fine).
function relativeLinks(md: string): string[] {
  return [...md.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]).filter((target) => !/^(?:[a-z][a-z0-9+.-]*:|#)/i.test(target));
}

describe.each(docs)('%s', (file) => {
  const md = readFileSync(path.join(projectRoot, file), 'utf8');

  it('links only to files inside the repository that exist', () => {
    for (const target of relativeLinks(md)) {
      const resolved = path.resolve(path.dirname(path.join(projectRoot, file)), decodeURI(target.split('#')[0]));
      expect(path.relative(projectRoot, resolved).startsWith('..'), `${target} leaves the repository`).toBe(false);
      expect(existsSync(resolved), `${target} does not exist`).toBe(true);
    }
  });

  it('names no path outside the repository (the shared/ folder is not part of it)', () => {
    expect(md).not.toMatch(/(?:^|[\s`(])(?:\.\.\/)*shared\//m);
  });
});

it('README links the feed formats, copied into docs/', () => {
  const readme = readFileSync(path.join(projectRoot, 'README.md'), 'utf8');
  expect(relativeLinks(readme)).toContain('docs/feed-formats.md');
});
