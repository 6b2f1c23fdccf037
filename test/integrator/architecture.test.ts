import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The layering of src/, checked from the source itself (the TypeScript compiler's parser and
// type checker, no extra tool). Dependencies point inward:
//
//   entry points   app.ts, server.ts, cli/, http/ (the JSON API), web/ (the HTML pages)
//   services/      what a route calls when one repository call is not the whole story
//   repositories/  every query of the service; read-model/ (the in-memory index, which loads
//                  itself), ingest/ and demo/ write their own
//   cache/, rate-limit/, auth/, reference/, db/, lib/, domain/: building blocks
//
// Rules:
// 1. Only the entry points import http/ or web/, and http/ and web/ do not import each other.
// 2. repositories/ and read-model/ do not import each other.
// 3. domain/ and lib/ import nothing else of src/ (domain/ may use lib/).
// 4. No import cycle between modules, type-only imports included.
// 5. In http/ and web/, knex is imported for its types only (`import type { Knex }`, to pass a
//    handle along to repositories and services).
// 6. Only repositories/, read-model/, ingest/, demo/ and db/ call knex (a query, db.raw,
//    db.transaction, ...): anywhere else a Knex handle is only passed along (or closed with
//    destroy()). Checked with the type checker: a call whose signature knex's types declare.
// 7. No file of src/ is over MAX_LINES lines: past that, a module holds more than one thing.

// The repository's root, wherever in test/ this file sits.
let ROOT = import.meta.dirname;
while (!existsSync(path.join(ROOT, 'package.json'))) ROOT = path.dirname(ROOT);
const SRC = path.join(ROOT, 'src');

const ENTRY_POINTS = ['app.ts', 'server.ts', 'cli/', 'http/', 'web/'];
const MAY_CALL_KNEX = ['repositories/', 'read-model/', 'ingest/', 'demo/', 'db/'];
const MAX_LINES = 400;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

// A path relative to src/, with forward slashes: 'http/routes/listings.ts'.
const rel = (file: string) => path.relative(SRC, file).split(path.sep).join('/');
const under = (file: string, prefixes: string[]) => prefixes.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p));

interface Import {
  from: string; // importing file, relative to src/
  specifier: string;
  target: string | null; // imported file relative to src/, null for a package
  typeOnly: boolean;
}

// Every import and re-export of a file, static or dynamic with a literal specifier.
function importsOf(file: string, text = readFileSync(file, 'utf8')): Import[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Import[] = [];
  const add = (specifier: string, typeOnly: boolean) => {
    const target = specifier.startsWith('.') ? rel(path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts')) : null;
    found.push({ from: rel(file), specifier, target, typeOnly });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const c = node.importClause;
      // `import type {…}` or `import { type A, type B }`: erased from the JavaScript.
      const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : null;
      const typeOnly = !!c && (c.isTypeOnly || (!c.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
      add(node.moduleSpecifier.text, typeOnly);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      add(node.arguments[0].text, false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

// The import rules (1 to 5) over a set of imports; one line per violation.
function layeringViolations(imports: Import[]): string[] {
  const out: string[] = [];
  for (const i of imports) {
    const { from, target } = i;
    const edge = `${from} imports ${target ?? i.specifier}`;
    if (target !== null) {
      for (const side of ['http/', 'web/']) {
        if (target.startsWith(side) && !from.startsWith(side) && !under(from, ENTRY_POINTS)) out.push(`${edge}: only the entry points import ${side}`);
      }
      if ((from.startsWith('http/') && target.startsWith('web/')) || (from.startsWith('web/') && target.startsWith('http/'))) {
        out.push(`${edge}: http/ and web/ do not import each other`);
      }
      if ((from.startsWith('repositories/') && target.startsWith('read-model/')) || (from.startsWith('read-model/') && target.startsWith('repositories/'))) {
        out.push(`${edge}: repositories/ and read-model/ do not import each other`);
      }
      if (from.startsWith('domain/') && !target.startsWith('domain/') && !target.startsWith('lib/')) out.push(`${edge}: domain/ depends on nothing but lib/`);
      if (from.startsWith('lib/') && !target.startsWith('lib/')) out.push(`${edge}: lib/ depends on nothing else of src/`);
    } else if (i.specifier === 'knex' && !i.typeOnly && (from.startsWith('http/') || from.startsWith('web/'))) {
      out.push(`${edge}: http/ and web/ import knex for its types only (import type { Knex })`);
    }
  }
  return out.concat(cycles(imports));
}

// Rule 4: each cycle once, as the path around it.
function cycles(imports: Import[]): string[] {
  const graph = new Map<string, string[]>();
  for (const i of imports) if (i.target) graph.set(i.from, [...(graph.get(i.from) ?? []), i.target]);
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const found = new Set<string>();
  const walk = (n: string) => {
    state.set(n, 'open');
    stack.push(n);
    for (const m of graph.get(n) ?? []) {
      if (state.get(m) === 'open') {
        const loop = stack.slice(stack.indexOf(m));
        const start = loop.indexOf([...loop].sort()[0]); // the same cycle always reads the same way
        found.add([...loop.slice(start), ...loop.slice(0, start), loop[start]].join(' -> '));
      } else if (!state.has(m)) walk(m);
    }
    stack.pop();
    state.set(n, 'done');
  };
  for (const n of [...graph.keys()].sort()) if (!state.has(n)) walk(n);
  return [...found].map((c) => `import cycle: ${c}`);
}

// The whole project as TypeScript compiles it (tsconfig.json, as `tsc --noEmit` reads it),
// built once: the type check of `npm test` and rule 6 read the same program (two programs
// cost a core about 20 s here, one about 15 s).
let project: ts.Program | undefined;
function projectProgram(): ts.Program {
  if (project) return project;
  const host: ts.ParseConfigFileHost = {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  };
  const config = ts.getParsedCommandLineOfConfigFile(path.join(ROOT, 'tsconfig.json'), {}, host)!;
  if (config.errors.length) throw new Error(config.errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('\n'));
  project = ts.createProgram({ rootNames: config.fileNames, options: { ...config.options, noEmit: true }, projectReferences: config.projectReferences });
  return project;
}

// Rule 6: calls into knex's API outside the modules that may query.
function knexCalls(files: string[]): string[] {
  const checked = files.filter((f) => !under(rel(f), MAY_CALL_KNEX));
  const program = projectProgram();
  const checker = program.getTypeChecker();
  const knexTypes = `${path.sep}node_modules${path.sep}knex${path.sep}`;
  // One line per source line (a chain of calls is one query): the shortest callee names it.
  const byLine = new Map<string, string>();
  for (const file of checked) {
    const sf = program.getSourceFile(file)!;
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node) || ts.isTaggedTemplateExpression(node)) {
        const decl = checker.getResolvedSignature(node)?.getDeclaration();
        const closesPool = ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'destroy';
        if (decl && !closesPool && path.normalize(decl.getSourceFile().fileName).includes(knexTypes)) {
          const { line } = sf.getLineAndCharacterOfPosition(node.getStart());
          const callee = (ts.isCallExpression(node) ? node.expression : node.tag).getText().replace(/\s+/g, ' ');
          const at = `${rel(file)}:${line + 1}`;
          if (!byLine.has(at) || callee.length < byLine.get(at)!.length) byLine.set(at, callee);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return [...byLine].map(([at, callee]) => `${at} calls knex (${callee}): queries belong in src/repositories/`);
}

describe('the project', () => {
  // What `npm run typecheck` (tsc --noEmit) reports, as tsc words it; `npm test` runs no tsc
  // of its own (scripts/test.mjs). No time limit (0), here and in rule 6: the compiler runs
  // synchronously, so a timer can neither stop it nor catch a hang it cannot have; it only
  // failed a busy machine (stop 59: 187.7 s against a limit of 180 s, two busy loops and three
  // other sessions beside the suite).
  it('type-checks: no diagnostic from the TypeScript compiler over tsconfig.json', { timeout: 0 }, () => {
    const diagnostics = ts.getPreEmitDiagnostics(projectProgram());
    const host: ts.FormatDiagnosticsHost = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' };
    expect(diagnostics.map((d) => ts.formatDiagnostic(d, host).trim())).toEqual([]);
  });
});

describe('the layering of src/', () => {
  const files = sourceFiles(SRC);
  const imports = files.flatMap((f) => importsOf(f));

  it('resolves every relative import to a file of src/', () => {
    const known = new Set(files.map(rel));
    expect(imports.filter((i) => i.target !== null && !known.has(i.target)).map((i) => `${i.from}: ${i.specifier}`)).toEqual([]);
  });

  it('keeps dependencies pointing inward, without cycles (rules 1 to 5)', () => {
    expect(layeringViolations(imports)).toEqual([]);
  });

  it('calls knex only in the modules that own queries (rule 6)', { timeout: 0 }, () => {
    expect(knexCalls(files)).toEqual([]);
  });

  // The rules catch what they are meant to: each of these imports breaks one.
  it('refuses the imports it is meant to refuse', () => {
    const at = (from: string, text: string) => importsOf(path.join(SRC, from), text);
    const bad = [
      at('repositories/listings.ts', `import { ApiError } from '../http/errors.js';`),
      at('read-model/read-model.ts', `import type { PublicListingRow } from '../repositories/listings.js';`),
      at('cache/api-caches.ts', `import type { CachedBody } from '../http/send-cached-body.js';`),
      at('services/listing-search.ts', `import { htmlNotFound } from '../web/errors.js';`),
      at('domain/search.ts', `import type { Gazetteer } from '../reference/gazetteer.js';`),
      at('web/errors.ts', `import { isUnavailable } from '../http/errors.js';`),
      at('http/routes/communes.ts', `import knex from 'knex';`),
      at('web/keys-router.ts', `import { type Knex, knex } from 'knex';`),
    ];
    for (const imports of bad) expect(layeringViolations(imports), imports[0].specifier).toHaveLength(1);
    expect(layeringViolations([...at('app.ts', `import type { WebDeps } from './web/index.js';`), ...at('web/index.ts', `import type { AppDeps } from '../app.js';`)])).toEqual([
      'import cycle: app.ts -> web/index.ts -> app.ts',
    ]);
    expect(layeringViolations(at('http/routes/stats.ts', `import type { Knex } from 'knex';\nimport { type Knex as K } from 'knex';`))).toEqual([]);
  });
});

describe('the size of the modules of src/ (rule 7)', () => {
  const lines = (text: string) => (text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0));

  it(`keeps every file of src/ at ${MAX_LINES} lines or fewer`, () => {
    const over = sourceFiles(SRC)
      .map((f) => ({ file: rel(f), lines: lines(readFileSync(f, 'utf8')) }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.file}: ${f.lines} lines (split it into modules named for what they hold)`);
    expect(over).toEqual([]);
  });

  it('counts lines, a last line without a newline too', () => {
    expect([lines(''), lines('a\n'), lines('a\nb'), lines('a\nb\n'), lines(`${'x\n'.repeat(MAX_LINES + 1)}`)]).toEqual([0, 1, 2, 2, MAX_LINES + 1]);
  });
});
