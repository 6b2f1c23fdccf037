import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/lib/paths.js';

// Issue 10, item 14: README pointed at a feed-formats document outside the repository, which a
// clone does not have. Every relative link of the documentation must name a file of the repository.
// Issue 11: the documentation moved from README into docs/ and bench/README.md, and comments
// cite files of the repository (docs/feed-formats.md, docs/spec/contract.md, ...), never the
// documents the project was given outside it.

// Folders that are not part of the source: dependencies, build output, local data.
const NOT_SOURCE = new Set(['node_modules', '.git', '.data', 'dist', 'coverage', 'test-output', 'tmp', 'db-cache']);

function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(projectRoot, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (!NOT_SOURCE.has(entry.name)) out.push(...filesUnder(rel, keep));
    } else if (keep(entry.name)) out.push(rel);
  }
  return out;
}

const markdown = filesUnder('', (f) => f.endsWith('.md')).sort();
const read = (file: string) => readFileSync(path.join(projectRoot, file), 'utf8');

// Markdown links and images: [text](target) and ![alt](target), outside code spans is not
// distinguished (a code sample with such a pattern would be checked too, which is fine).
function relativeLinks(md: string): string[] {
  return [...md.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]).filter((target) => !/^(?:[a-z][a-z0-9+.-]*:|#)/i.test(target));
}

it('finds the documentation (README, docs/, bench/README.md)', () => {
  expect(markdown).toEqual(expect.arrayContaining(['README.md', 'bench/README.md', 'docs/integrators.md', 'docs/feed-operators.md', 'docs/feed-formats.md', 'docs/operations.md', 'docs/decisions.md', 'docs/spec/contract.md']));
});

// The anchors a Markdown heading gets on GitHub (github-slugger): lower case, punctuation
// dropped, spaces to hyphens, a repeated heading numbered.
function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of md.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const base = m[1].toLowerCase().replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

describe.each(markdown)('%s', (file) => {
  const md = read(file);

  it('links only to files inside the repository that exist', () => {
    for (const target of relativeLinks(md)) {
      const resolved = path.resolve(path.dirname(path.join(projectRoot, file)), decodeURI(target.split('#')[0]));
      expect(path.relative(projectRoot, resolved).startsWith('..'), `${target} leaves the repository`).toBe(false);
      expect(existsSync(resolved), `${target} does not exist`).toBe(true);
    }
  });

  it('links to headings that exist', () => {
    for (const target of [...md.matchAll(/\]\(([^)\s]*#[^)\s]+)\)/g)].map((m) => m[1]).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t))) {
      const [where, fragment] = target.split('#');
      const doc = where ? path.join(path.dirname(file), decodeURI(where)) : file;
      if (!doc.endsWith('.md') || !existsSync(path.join(projectRoot, doc))) continue; // the test above reports it
      expect([...anchors(read(doc))], `${target} names no heading of ${doc}`).toContain(decodeURIComponent(fragment));
    }
  });

  it('names no path outside the repository (the shared/ folder is not part of it)', () => {
    expect(md).not.toMatch(/(?:^|[\s`(])(?:\.\.\/)*shared\//m);
  });
});

it('README links the feed formats, copied into docs/', () => {
  expect(relativeLinks(read('README.md'))).toContain('docs/feed-formats.md');
});

it('README links every guide of docs/ and the benchmark', () => {
  const links = relativeLinks(read('README.md')).map((l) => l.split('#')[0]);
  const guides = readdirSync(path.join(projectRoot, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  for (const guide of [...guides, 'bench/README.md']) expect(links, guide).toContain(guide);
});

// Source files whose comments may cite documents: code, scripts, SQL and the notes beside them.
const SOURCE_DIRS = ['src', 'test', 'bench', 'migrations', 'scripts', 'client', 'public', 'seeds', '.ci'];
const sources = SOURCE_DIRS.filter((d) => existsSync(path.join(projectRoot, d)))
  .flatMap((d) => filesUnder(d, (f) => /\.(?:[cm]?[jt]s|sql|sh|md)$/.test(f) || d === '.ci'))
  .filter((f) => f !== 'test/integrator/docs-links.test.ts' && !f.startsWith('bench/results/') && !f.startsWith('test/fixtures/'));

it('comments cite files of the repository, not documents outside it', () => {
  expect(sources.length).toBeGreaterThan(50);
  const problems: string[] = [];
  for (const file of sources) {
    read(file)
      .split('\n')
      .forEach((line, i) => {
        const at = `${file}:${i + 1}: ${line.trim()}`;
        // The project's own copies: docs/feed-formats.md, docs/spec/service-spec.md, docs/spec/contract.md.
        if (/\bFORMATS\.md\b|\.\.\/shared\b|\/work\/shared\b/.test(line)) problems.push(`names a document outside the repository: ${at}`);
        if (/(?<!docs\/spec\/)\b(?:service-spec|contract)\.md\b/.test(line)) problems.push(`cites the spec or contract without its path (docs/spec/): ${at}`);
        if (/\b(?<!docs\/spec\/)contract section \d|\bspec \d+\.\d/i.test(line)) problems.push(`cites the spec or contract without its path (docs/spec/): ${at}`);
        for (const m of line.matchAll(/(?<![\w./-])docs\/[\w./-]+\.md\b/g)) {
          if (!existsSync(path.join(projectRoot, m[0]))) problems.push(`cites ${m[0]}, which does not exist: ${at}`);
        }
      });
  }
  expect(problems).toEqual([]);
});
