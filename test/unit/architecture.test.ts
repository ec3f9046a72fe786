/** The house rules of docs/architecture.md, checked on the source tree: layers, SQL only in the store, the simulator apart. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SRC = join(ROOT, 'src');
const SANDBOX = join(ROOT, 'sandbox');
const BENCH = join(ROOT, 'bench');

/**
 * What each part of src/ may import besides itself (docs/architecture.md, "Layers"). A part not
 * listed here fails the test: a new folder gets its place in the table and in the document.
 */
/** What the commands may import: every layer below them. */
const CLI_MAY_IMPORT = [
  'decimal',
  'errors',
  'domain',
  'log',
  'util',
  'config',
  'http',
  'rules',
  'report',
  'store',
  'sources',
  'workflow',
  'stages',
  'pipeline',
  'fleet',
  'schedule',
  'webhooks',
] as const;

export const MAY_IMPORT: Record<string, readonly string[]> = {
  // ground floor
  decimal: [],
  errors: [],
  domain: ['decimal'],
  log: [],
  util: ['decimal', 'errors', 'domain', 'log'],
  config: ['decimal', 'errors', 'domain', 'util'],
  // pure logic and the HTTP client
  http: ['decimal', 'errors', 'domain', 'log', 'util', 'config'],
  rules: ['decimal', 'domain', 'util'],
  report: ['decimal', 'errors', 'domain', 'log', 'util', 'config', 'http', 'rules'],
  // the only SQL, and nothing else: reads into and writes from the domain's types
  store: ['decimal', 'errors', 'domain', 'log', 'util', 'config', 'http'],
  // the two APIs
  sources: ['decimal', 'errors', 'domain', 'log', 'util', 'config', 'http', 'store'],
  // the break workflow: pure decisions (what an acknowledgement holds: the rules' descriptors), and the transactions
  // that read through the store, decide and write through it; the store never imports it
  workflow: ['decimal', 'errors', 'domain', 'util', 'rules', 'store'],
  // what the orchestrator calls
  stages: CLI_MAY_IMPORT.slice(0, CLI_MAY_IMPORT.indexOf('stages')),
  // the orchestrator, the scheduler, the webhook server
  pipeline: ['decimal', 'errors', 'domain', 'log', 'util', 'config', 'http', 'store', 'stages'],
  // the job queue (pg-boss): the batch driver's steps as jobs, worked by any number of workers
  fleet: ['decimal', 'errors', 'domain', 'log', 'util', 'config', 'store', 'stages', 'pipeline'],
  schedule: ['decimal', 'errors', 'domain', 'log', 'util', 'config', 'store', 'stages', 'pipeline', 'fleet'],
  webhooks: ['decimal', 'errors', 'domain', 'log', 'util', 'config', 'http', 'store', 'sources'],
  // the commands
  cli: CLI_MAY_IMPORT,
  // src/index.ts, the product's public entry point for a program that drives it in process (the demo): it re-exports
  // from every layer, and no part lists it, so nothing in src/ imports it
  index: [...CLI_MAY_IMPORT, 'cli'],
};

/** Relative import specifiers of a file resolved to the .ts files they name. */
function importedFiles(file: string, text: string): string[] {
  return importsOf(text)
    .filter(({ spec }) => spec.startsWith('.'))
    .map(({ spec }) => resolve(dirname(file), spec).replace(/\.js$/, '.ts'));
}

/** The import loops among `graph`'s files (strongly connected components of more than one file, or a self-import). */
export function importLoops(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const loop: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      loop.push(w);
    } while (w !== v);
    if (loop.length > 1 || (graph.get(v) ?? []).includes(v)) loops.push(loop.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return loops;
}

/**
 * One import loop named file by file, `a -> b -> c -> a`: the shortest way from the loop's first file back to itself,
 * and, when the loop holds more files than that way passes, how many more.
 */
export function loopName(loop: readonly string[], graph: ReadonlyMap<string, readonly string[]>): string {
  const inLoop = new Set(loop);
  const start = loop[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  let last: string | undefined;
  for (let i = 0; i < queue.length && last === undefined; i += 1) {
    const v = queue[i]!;
    for (const w of graph.get(v) ?? []) {
      if (w === start) {
        last = v;
        break;
      }
      if (!inLoop.has(w) || cameFrom.has(w)) continue;
      cameFrom.set(w, v);
      queue.push(w);
    }
  }
  const path = [start];
  for (let v = last; v !== undefined && v !== start; v = cameFrom.get(v)) path.splice(1, 0, v);
  path.push(start);
  const more = loop.length - (path.length - 1);
  return `${path.join(' -> ')}${more > 0 ? ` (and ${more} more file${more === 1 ? '' : 's'} in the same loop)` : ''}`;
}

/** Source text without its comments (a rule code or a regex named in a comment is documentation). */
export function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** A rule code as a string literal: 'P_FEE_USD', "E_STALE", `S_COVERAGE`. */
export const RULE_LITERAL = /(['"`])[PXES]_[A-Z][A-Z0-9]*(_[A-Z0-9]+)*\1/;

/**
 * A regular expression run over a break's message (its words), in a file that handles breaks: what a break is about
 * is said by its rule and stored with it (an error's message is another matter).
 */
export const MESSAGE_REGEX = [
  /\.(test|exec)\([^)]*\.message\b/,
  /\.message\b[^;\n]*\.(match|matchAll|replace|replaceAll|search|split)\(\s*\//,
];
export const HANDLES_BREAKS = /\b(Break|ReportedBreak|DetectedBreak|BreakRow|StoredBreak|LateBreak)\b/;

export function readsBreakMessage(text: string): boolean {
  const code = withoutComments(text);
  return HANDLES_BREAKS.test(code) && MESSAGE_REGEX.some((re) => re.test(code));
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** `src/store/runs/runs.ts` -> `store`; `src/errors.ts` -> `errors`. */
function partOf(path: string): string {
  const rel = relative(SRC, path);
  return (rel.split('/')[0] ?? rel).replace(/\.[jt]s$/, '');
}

/** Relative import specifiers of a file, static and dynamic, with whether each is type-only or dynamic. */
function importsOf(text: string): { spec: string; typeOnly: boolean; dynamic: boolean }[] {
  const found: { spec: string; typeOnly: boolean; dynamic: boolean }[] = [];
  for (const m of text.matchAll(/^\s*(import|export)\s+(type\s+)?[^'";]*?from\s+'([^']+)'/gm))
    found.push({ spec: m[3]!, typeOnly: Boolean(m[2]), dynamic: false });
  for (const m of text.matchAll(/^\s*import\s+'([^']+)'/gm))
    found.push({ spec: m[1]!, typeOnly: false, dynamic: false });
  for (const m of text.matchAll(/import\(\s*'([^']+)'\s*\)/g))
    found.push({ spec: m[1]!, typeOnly: false, dynamic: true });
  return found;
}

const files = filesUnder(SRC);
const sources = new Map(files.map((f) => [f, readFileSync(f, 'utf8')]));
/** The code beside the product that the test also reads: the simulator (and its demo) and the bench. */
const outside = [...filesUnder(SANDBOX), ...filesUnder(BENCH)];
const outsideSources = new Map(outside.map((f) => [f, readFileSync(f, 'utf8')]));

/**
 * The product's public entry points (docs/architecture.md, "Import rules"): the simulator takes exact decimals from
 * decimal/, which imports nothing; the demo drives the product through src/index.ts. Paths from the checkout's root;
 * one ending in `/` is a folder.
 */
export const PUBLIC_ENTRY_POINTS = { simulator: ['src/decimal/'], demo: ['src/index.ts'] } as const;
/** The simulator's own public entry point: what the product, the demo and the bench import of sandbox/. */
export const SIMULATOR_ENTRY = 'sandbox/index.ts';

/** The rules on sandbox/, bench/ and rules/, in the words docs/architecture.md states them ("Import rules"). */
export const STATED = {
  loops: 'no import loop in src/, sandbox/ or bench/',
  simulator:
    'sandbox/ imports the product only through its public entry points: src/decimal/ for the simulator, src/index.ts for the demo (sandbox/demo/)',
  simulatorEntry:
    'src/, bench/ and the demo import the simulator only through sandbox/index.ts, and src/ only in cli/commands/sandbox.ts, on demand',
  pureRules:
    "src/rules/ is pure logic: it imports no I/O module (pg, kysely, undici, pino, fs, net, http, and the rest of the test's IO_MODULES)",
} as const;

/**
 * Modules that do I/O (files, network, database, logging, processes): pure logic imports none of them. Node's own are
 * named without `node:`; a package's subpath (`fs/promises`, `pg/lib/...`) counts as the package.
 */
export const IO_MODULES = [
  'fs',
  'net',
  'http',
  'https',
  'http2',
  'tls',
  'dgram',
  'dns',
  'child_process',
  'worker_threads',
  'cluster',
  'pg',
  'pg-boss',
  'pg-copy-streams',
  '@electric-sql/pglite',
  'kysely',
  'kysely-pglite-dialect',
  'undici',
  'pino',
  'pino-pretty',
  'nodemailer',
  'exceljs',
] as const;

/** The module an import specifier names, for IO_MODULES: `node:fs/promises` -> `fs`, `@a/b/c` -> `@a/b`. */
export function moduleOf(spec: string): string {
  const bare = spec.replace(/^node:/, '');
  const parts = bare.split('/');
  return bare.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** The I/O modules a file imports (statically, for types only or dynamically alike). */
export function ioImports(text: string): string[] {
  return importsOf(text)
    .map(({ spec }) => spec)
    .filter((spec) => !spec.startsWith('.') && (IO_MODULES as readonly string[]).includes(moduleOf(spec)));
}

/** The import graph of src/, sandbox/ and bench/, by path from the checkout's root (imports that resolve to a file). */
function importGraph(): Map<string, string[]> {
  const all = new Map([...sources, ...outsideSources]);
  return new Map(
    [...all].map(([f, text]) => [
      relative(ROOT, f),
      importedFiles(f, text)
        .filter((to) => all.has(to))
        .map((to) => relative(ROOT, to)),
    ]),
  );
}

/** The relative imports of `texts`' files, each as the file it names: paths from the checkout's root. */
function relativeImports(
  texts: ReadonlyMap<string, string>,
): { from: string; to: string; typeOnly: boolean; dynamic: boolean }[] {
  return [...texts].flatMap(([f, text]) =>
    importsOf(text)
      .filter(({ spec }) => spec.startsWith('.'))
      .map(({ spec, typeOnly, dynamic }) => ({
        from: relative(ROOT, f),
        to: relative(ROOT, resolve(dirname(f), spec).replace(/\.js$/, '.ts')),
        typeOnly,
        dynamic,
      })),
  );
}

const isDemo = (path: string) => path.startsWith('sandbox/demo/');
/** The simulator: sandbox/ but the demo, which drives it. */
const isSimulator = (path: string) => path.startsWith('sandbox/') && !isDemo(path);
const reaches = (to: string, entries: readonly string[]) =>
  entries.some((e) => (e.endsWith('/') ? to.startsWith(e) : to === e));

describe('architecture (docs/architecture.md)', () => {
  it('every part of src/ has its place in the layer table', () => {
    const parts = [...new Set(files.map(partOf))].sort();
    expect(parts.filter((p) => !(p in MAY_IMPORT))).toEqual([]);
  });

  it('no import runs from a lower layer to a higher one', () => {
    const wrong: string[] = [];
    for (const [file, text] of sources) {
      const from = partOf(file);
      for (const { spec } of importsOf(text)) {
        if (!spec.startsWith('.')) continue;
        const target = resolve(dirname(file), spec);
        if (!target.startsWith(SRC + '/')) {
          // Outside src/: only the CLI's on-demand loader of the simulator (absent from the production image), checked
          // by the simulator's own rules below.
          if (!(relative(SRC, file) === 'cli/commands/sandbox.ts' && relative(ROOT, target).startsWith('sandbox/')))
            wrong.push(`${relative(ROOT, file)} -> ${relative(ROOT, target)}`);
          continue;
        }
        const to = partOf(target);
        if (to !== from && !(MAY_IMPORT[from] ?? []).includes(to))
          wrong.push(`${relative(ROOT, file)} (${from}) -> ${relative(ROOT, target)} (${to})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('the domain imports nothing of the project but decimal/', () => {
    const wrong = files
      .filter((f) => partOf(f) === 'domain')
      .flatMap((f) =>
        importsOf(sources.get(f)!).map(({ spec }) => ({
          f,
          spec,
          to: spec.startsWith('.') ? partOf(resolve(dirname(f), spec)) : null,
        })),
      )
      .filter(({ to }) => to !== null && to !== 'domain' && to !== 'decimal')
      .map(({ f, spec }) => `${relative(ROOT, f)} -> ${spec}`);
    expect(wrong).toEqual([]);
  });

  it('SQL (Kysely or sql templates) is written only under src/store/', () => {
    const SQL = [
      /from 'kysely'/,
      /\.transaction\(\)/,
      /\bsql`/,
      /\.selectFrom\(/,
      /\.insertInto\(/,
      /\.updateTable\(/,
      /\.deleteFrom\(/,
      /\.with\(\s*'/,
      /\.query\(\s*['`]/,
    ];
    const wrong = files
      .filter((f) => partOf(f) !== 'store' && SQL.some((re) => re.test(sources.get(f)!)))
      .map((f) => relative(ROOT, f));
    expect(wrong).toEqual([]);
  });

  it('process.env is read only under src/config/ (configuration is read in one place)', () => {
    const wrong = files
      .filter((f) => partOf(f) !== 'config' && /\bprocess\.env\b/.test(withoutComments(sources.get(f)!)))
      .map((f) => relative(ROOT, f));
    expect(wrong).toEqual([]);
  });

  it('pg-boss is imported only under src/fleet/ (the job queue has one folder)', () => {
    const wrong = files
      .filter((f) => partOf(f) !== 'fleet' && importsOf(sources.get(f)!).some(({ spec }) => spec === 'pg-boss'))
      .map((f) => relative(ROOT, f));
    expect(wrong).toEqual([]);
    expect(files.filter((f) => partOf(f) === 'fleet').length).toBeGreaterThan(0);
  });

  it("outside src/sources/, an API's folder is imported only through its index.ts", () => {
    // common/ is no API. A module loaded on demand (import()) may be named itself: `sync --references-csv` so
    // loads the CSV reader, which no other command needs.
    const wrong: string[] = [];
    for (const [file, text] of sources) {
      if (partOf(file) === 'sources') continue;
      for (const { spec, dynamic } of importsOf(text)) {
        if (dynamic || !spec.startsWith('.')) continue;
        const target = relative(SRC, resolve(dirname(file), spec));
        const api = /^sources\/([^/]+)\/(.+)\.[jt]s$/.exec(target);
        if (api && api[1] !== 'common' && api[2] !== 'index') wrong.push(`${relative(ROOT, file)} -> src/${target}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('no rule code is written outside src/rules (the store, the report and the workflow read the descriptor)', () => {
    const wrong = files
      .filter((f) => partOf(f) !== 'rules' && RULE_LITERAL.test(withoutComments(sources.get(f)!)))
      .map((f) => `${relative(ROOT, f)}: ${RULE_LITERAL.exec(withoutComments(sources.get(f)!))![0]}`);
    expect(wrong).toEqual([]);
  });

  it("no regular expression reads a break's message", () => {
    const wrong = files.filter((f) => readsBreakMessage(sources.get(f)!)).map((f) => relative(ROOT, f));
    expect(wrong).toEqual([]);
  });

  it('no store file imports report or rules', () => {
    const wrong = files
      .filter((f) => partOf(f) === 'store')
      .flatMap((f) => importedFiles(f, sources.get(f)!).map((to) => [f, to] as const))
      .filter(([, to]) => ['report', 'rules'].includes(partOf(to)))
      .map(([f, to]) => `${relative(ROOT, f)} -> ${relative(ROOT, to)}`);
    expect(wrong).toEqual([]);
  });

  it("the workflow's decisions are pure: only its transactions import the store (docs/architecture.md)", () => {
    const TRANSACTIONS = ['break-changes.ts', 'import-workbook.ts', 'reopen.ts'].map((f) => join(SRC, 'workflow', f));
    const wrong = files
      .filter((f) => partOf(f) === 'workflow' && !f.endsWith('/index.ts') && !TRANSACTIONS.includes(f))
      .flatMap((f) => importedFiles(f, sources.get(f)!).map((to) => [f, to] as const))
      .filter(([, to]) => partOf(to) === 'store' || TRANSACTIONS.includes(to))
      .map(([f, to]) => `${relative(ROOT, f)} -> ${relative(ROOT, to)}`);
    expect(wrong).toEqual([]);
  });

  it.each(['src', 'sandbox', 'bench'])('no import loop in %s/ (each loop named file by file)', (folder) => {
    // One graph for the three folders, so that a loop leaving the folder and coming back is found too.
    const graph = importGraph();
    const loops = importLoops(graph).filter((loop) => loop.some((f) => f.startsWith(`${folder}/`)));
    expect(loops.map((loop) => loopName(loop, graph))).toEqual([]);
  });

  it(STATED.simulator, () => {
    // The simulator's own files are the rest of sandbox/; bench/, test/ and the rest of src/ are never imported.
    const wrong = relativeImports(outsideSources)
      .filter(({ from, to }) => from.startsWith('sandbox/') && !to.startsWith('sandbox/'))
      .filter(({ from, to }) => !reaches(to, PUBLIC_ENTRY_POINTS[isDemo(from) ? 'demo' : 'simulator']))
      .map(({ from, to }) => `${from} -> ${to}`);
    expect(wrong).toEqual([]);
  });

  it(STATED.simulatorEntry, () => {
    const wrong = relativeImports(new Map([...sources, ...outsideSources]))
      .filter(({ from, to }) => isSimulator(to) && !isSimulator(from))
      .filter(
        ({ from, to, typeOnly, dynamic }) =>
          to !== SIMULATOR_ENTRY ||
          (from.startsWith('src/') && (from !== 'src/cli/commands/sandbox.ts' || !(typeOnly || dynamic))),
      )
      .map(({ from, to }) => `${from} -> ${to}`);
    expect(wrong).toEqual([]);
  });

  it(STATED.pureRules, () => {
    const wrong = files
      .filter((f) => partOf(f) === 'rules')
      .flatMap((f) => ioImports(sources.get(f)!).map((spec) => `${relative(ROOT, f)} -> ${spec}`));
    expect(wrong).toEqual([]);
    expect(files.filter((f) => partOf(f) === 'rules').length).toBeGreaterThan(0);
  });

  it('docs/architecture.md states the rules above in the words the test checks ("Import rules")', () => {
    // Backticks (code spans) and line breaks aside.
    const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8')
      .replace(/`/g, '')
      .replace(/\s+/g, ' ');
    expect(Object.values(STATED).filter((rule) => !doc.includes(rule))).toEqual([]);
  });

  it('the checks above catch what they are for', () => {
    expect(RULE_LITERAL.test(withoutComments("if (b.code === 'E_STALE') return 1;"))).toBe(true);
    expect(RULE_LITERAL.test(withoutComments("// the E_STALE rule, or 'E_STALE' in a comment"))).toBe(false);
    expect(RULE_LITERAL.test("const x = 'EUR_USD';")).toBe(false);
    const handler = 'function f(b: Break) {\n  return X;\n}';
    expect(readsBreakMessage(handler.replace('X', "/^withdrawal/i.test(b.message ?? '')"))).toBe(true);
    expect(readsBreakMessage(handler.replace('X', "(b.message ?? '').replace(/ more$/, '')"))).toBe(true);
    expect(readsBreakMessage(handler.replace('X', "err.message.replace(/^x/, '')").replace('Break', 'Error'))).toBe(
      false,
    );
    expect(readsBreakMessage(handler.replace('X', '`${b.message} ${b.key}`'))).toBe(false);
    const loop = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(importLoops(loop)).toEqual([['a', 'b', 'c']]);
    expect(
      importLoops(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toEqual([]);
    expect(importLoops(loop).map((l) => loopName(l, loop))).toEqual(['a -> b -> c -> a']);
    const wide = new Map([
      ['a', ['b', 'c']],
      ['b', ['a']],
      ['c', ['b']],
    ]);
    expect(importLoops(wide).map((l) => loopName(l, wide))).toEqual(['a -> b -> a (and 1 more file in the same loop)']);
    expect(loopName(['a'], new Map([['a', ['a']]]))).toBe('a -> a');
    expect(ioImports("import pg from 'pg';\nimport { x } from './pg.js';")).toEqual(['pg']);
    expect(ioImports("import type { Pool } from 'pg';")).toEqual(['pg']);
    expect(ioImports("import { readFileSync } from 'node:fs';\nimport 'node:net';")).toEqual(['node:fs', 'node:net']);
    expect(ioImports("const f = await import('fs/promises');")).toEqual(['fs/promises']);
    expect(ioImports("import { PGlite } from '@electric-sql/pglite';\nimport Decimal from 'decimal.js';")).toEqual([
      '@electric-sql/pglite',
    ]);
    expect(ioImports("import { z } from 'zod';\nimport { pgTable } from 'pgx';")).toEqual([]);
  });

  it('the store is split by its readers: each file in one of its folders, none over 600 lines', () => {
    // docs/architecture.md "store/": a new store file goes to the folder of who reads it.
    const FOLDERS = ['db', 'sync', 'recon', 'report', 'runs', 'workflow'];
    const store = files.filter((f) => partOf(f) === 'store');
    const misplaced = store
      .map((f) => relative(join(SRC, 'store'), f).split('/'))
      .filter((parts) => parts.length !== 2 || !FOLDERS.includes(parts[0]!))
      .map((parts) => `src/store/${parts.join('/')}`);
    expect(misplaced).toEqual([]);
    const long = store.filter((f) => sources.get(f)!.trimEnd().split('\n').length > 600).map((f) => relative(ROOT, f));
    expect(long).toEqual([]);
  });

  it('index.ts files only re-export', () => {
    // Comments out, what is left must be `export * from '...'` and `export [type] { ... } from '...'` (on any number of lines).
    const reexports = /^(\s*export\s+(\*|(type\s+)?\{[^}]*\})\s+from\s+'[^']+';)*\s*$/;
    const wrong = files
      .filter((f) => f.endsWith('/index.ts'))
      .filter(
        (f) =>
          !reexports.test(
            sources
              .get(f)!
              .replace(/\/\*[\s\S]*?\*\//g, '')
              .replace(/^\s*\/\/.*$/gm, ''),
          ),
      )
      .map((f) => relative(ROOT, f));
    expect(wrong).toEqual([]);
  });

  it("each file's first line is a comment saying what it holds", () => {
    // A shebang, where there is one, comes first.
    const wrong = files
      .filter((f) => !/^(#!.*\n)?(\/\*\*|\/\/)[ \t]*\S/.test(sources.get(f)!))
      .map((f) => relative(ROOT, f));
    expect(wrong).toEqual([]);
  });

  it('no two folders of src/ have names that differ only by a suffix', () => {
    const dirs = [...new Set(files.map((f) => relative(SRC, dirname(f))).filter((d) => d !== ''))];
    const names = dirs.map((d) => d.split('/').at(-1)!);
    const pairs = names.flatMap((a) => names.filter((b) => a !== b && b.startsWith(a)).map((b) => `${a} / ${b}`));
    expect(pairs).toEqual([]);
  });
});
