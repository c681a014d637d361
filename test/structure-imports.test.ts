/**
 * Issue 20 item 4 and issue 37 item 1, one direction (architecture.md rule 8): among the sources (daemon/,
 * owner-ui/, bridge-client/ and common/, what they share) no import circle between files, types included;
 * no circle among folders, over the whole folder graph (a pair check missed a circle through 16 folders);
 * no product imports another (common/ is the only thing they share, and it imports nothing outside itself,
 * not even a package); and another daemon folder is entered only through its index.ts, the public face it
 * names — except the few imports listed in EXCEPTIONS, each with its reason. Every import counts: values,
 * `import type`, `export … from`, and `import()` on demand.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
/** The three products, which import none of each other, and common/, which all three import. */
const PRODUCTS = ['daemon', 'owner-ui', 'bridge-client'];
const COMMON = 'common';
const PRODUCT = [COMMON, ...PRODUCTS];

/**
 * Imports that go past a folder's index.ts on purpose: [importers (a file, or a folder ending in /),
 * imported files, why]. Everything else enters a folder through its index.
 */
const EXCEPTIONS: Array<[string[], string[], string]> = [
  [
    ['daemon/kinds/catalog/fields.ts', 'daemon/kinds/cue/fields.ts', 'daemon/kinds/upstream/fields.ts'],
    ['daemon/core/model/lifecycle.ts'],
    'a kind declares the fields its commands store by declaration merging (KindFields), which must name the module that declares the interface, not the index that re-exports it; the dependency is seen here and runs the one way kinds/ already imports core/',
  ],
  [
    ['daemon/cli.ts'],
    [
      'daemon/commands/start.ts',
      'daemon/commands/mcp-stdio.ts',
      'daemon/commands/status.ts',
      'daemon/commands/owner-actions.ts',
      'daemon/commands/grant.ts',
      'daemon/commands/rule.ts',
      'daemon/commands/token.ts',
      'daemon/commands/doctor.ts',
      'daemon/commands/audit.ts',
      'daemon/commands/policy.ts',
      'daemon/commands/notify.ts',
      'daemon/audit/walk-thread.ts',
      'daemon/commands/usage.ts',
      'daemon/commands/init.ts',
      'daemon/commands/backup.ts',
      'daemon/commands/restore.ts',
      'daemon/commands/service.ts',
      'daemon/commands/reload.ts',
    ],
    'each subcommand is loaded on demand (and the usage text alone, so `--help` loads none of them), alone: a terminal `approve` need not load the MCP SDK or SQLite (and `audit verify` starts its walk’s second thread before its own modules load: bench row 15)',
  ],
  [
    ['daemon/store/rules/rules.ts'],
    ['daemon/core/model/passkey-ledger.ts'],
    'the stores’ one list of passkey actions is the ledger’s, read from its file: broker.db’s read-only reader loads the rules, and `audit verify` must not load the broker core (bench row 15)',
  ],
  [
    ['daemon/audit/', 'daemon/commands/audit.ts', 'daemon/commands/audit-verify.ts'],
    [
      'daemon/core/model/audit-chain.ts',
      'daemon/core/model/passkey-ledger.ts',
      'daemon/store/sqlite/readonly.ts',
      'daemon/store/read.ts',
    ],
    '`audit verify` is timed against sha256sum with Node’s start-up included (issue 24, bench row 15): it loads the chain’s hashing, the passkeys’ key history (contract 13.3 (v4)), broker.db’s read-only reader and the store’s read port (store/read.ts: which store the data dir uses) alone, not the broker core (core/index.ts, RE2) or the SQLite store that index.ts names',
  ],
  [
    ['daemon/store/read.ts'],
    ['daemon/store/sqlite/readonly.ts'],
    'the read port of a CLI command loads broker.db’s read-only reader alone, not the SQLite store sqlite/index.ts names (`audit verify`’s start-up: bench row 15)',
  ],
];

/** Folders without an index.ts: [folder, why]. */
const NO_INDEX: Array<[string, string]> = [
  ['daemon', 'the composition root: cli.ts, which nothing imports'],
  ['daemon/commands', 'one module per subcommand, each loaded on demand by cli.ts (above)'],
];

const matches = (who: string, file: string): boolean =>
  who.endsWith('/') ? file.startsWith(who) : file === who;

/** Whether an exception allows `from` to import `to` past its folder's index. */
function excepted(from: string, to: string): boolean {
  return EXCEPTIONS.some(([who, what]) => what.includes(to) && who.some((w) => matches(w, from)));
}

/** The product's .ts files (tests excluded), relative to the repository, with '/' separators. */
function productFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(root, dir))) {
      const path = `${dir}/${name}`;
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) out.push(path);
    }
  };
  for (const dir of PRODUCT) walk(dir);
  return out.sort();
}

/** The file a relative specifier names (`./x.js` is the source `./x.ts`), relative to the repository. */
function resolveSpecifier(from: string, spec: string): string {
  const abs = resolve(root, dirname(from), spec);
  for (const candidate of [abs.replace(/\.js$/, '.ts'), abs, `${abs}.ts`, join(abs, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile())
      return relative(root, candidate).split('\\').join('/');
  }
  return relative(root, abs).split('\\').join('/');
}

/** Every product file and the product files it imports, by TypeScript's own reading of its imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of productFiles()) {
    const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    const deps = info.importedFiles.map((f) => f.fileName).filter((s) => s.startsWith('.'));
    graph.set(file, [...new Set(deps.map((s) => resolveSpecifier(file, s)))]);
  }
  return graph;
}

const folderOf = (file: string): string => dirname(file);

/** Strongly connected components of more than one file (Tarjan): each is an import circle. */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** Folder pairs where each imports the other, as "a <-> b" with the files that do it. */
function folderPairs(graph: Map<string, string[]>): string[] {
  const edges = new Map<string, string[]>();
  for (const [file, deps] of graph) {
    for (const dep of deps) {
      const a = folderOf(file);
      const b = folderOf(dep);
      if (a === b) continue;
      const key = `${a}|${b}`;
      edges.set(key, [...(edges.get(key) ?? []), `${file} -> ${dep}`]);
    }
  }
  const pairs: string[] = [];
  for (const [key, by] of edges) {
    const [a, b] = key.split('|') as [string, string];
    const back = edges.get(`${b}|${a}`);
    if (a < b && back) pairs.push(`${a} <-> ${b} (${by[0]}; ${back[0]})`);
  }
  return pairs;
}

/** Each folder and the folders its files import, with `of` naming a file's folder (no edge to itself). */
function folderGraph(graph: Map<string, string[]>, of: (file: string) => string): Map<string, string[]> {
  const folders = new Map<string, Set<string>>();
  for (const [file, deps] of graph) {
    const from = of(file);
    const to = folders.get(from) ?? new Set<string>();
    folders.set(from, to);
    for (const dep of deps) if (graph.has(dep) && of(dep) !== from) to.add(of(dep));
  }
  return new Map([...folders].map(([f, to]) => [f, [...to]]));
}

/**
 * A file's room in the house: daemon/<folder> (its subfolders
 * included, kinds/cue in kinds), or the top-level folder (owner-ui, bridge-client, common).
 */
function roomOf(file: string): string {
  const parts = file.split('/');
  return parts[0] === 'daemon' && parts.length > 2 ? `daemon/${parts[1]}` : parts[0]!;
}

/** Circles among folders, over the whole folder graph: each a strongly connected group of folders. */
function folderCircles(graph: Map<string, string[]>, of: (file: string) => string = folderOf): string[][] {
  return circles(folderGraph(graph, of));
}

/** The product (or common/) a file belongs to. */
const productOf = (file: string): string => file.split('/')[0]!;

/** Imports from one product into another, and from common/ into any product. */
function acrossProducts(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  for (const [file, deps] of graph) {
    const from = productOf(file);
    for (const dep of deps) {
      const to = productOf(dep);
      if (to === from || to === COMMON || !PRODUCT.includes(to)) continue;
      found.push(`${file} -> ${dep}`);
    }
  }
  return found;
}

/** What a common/ file imports that is not another common/ file: a package, a Node module, a product. */
function commonImportsOutside(files: string[]): string[] {
  const found: string[] = [];
  for (const file of files.filter((f) => productOf(f) === COMMON)) {
    const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    for (const { fileName } of info.importedFiles) {
      const inside = fileName.startsWith('.') && productOf(resolveSpecifier(file, fileName)) === COMMON;
      if (!inside) found.push(`${file} -> ${fileName}`);
    }
  }
  return found;
}

/** Imports of a daemon/ module from another folder that do not go through its folder's index.ts. */
function pastIndex(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  for (const [file, deps] of graph) {
    for (const dep of deps) {
      if (!dep.startsWith('daemon/') || folderOf(dep) === folderOf(file)) continue;
      if (dep.endsWith('/index.ts') || excepted(file, dep)) continue;
      found.push(`${file} -> ${dep}`);
    }
  }
  return found;
}

describe('one direction (issue 20 item 4)', () => {
  const graph = importGraph();

  it('the graph sees the imports: daemon/cli.ts loads its subcommands', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('daemon/cli.ts')).toEqual(expect.arrayContaining(['daemon/commands/start.ts']));
  });

  it('no import circle between product files, types included', () => {
    expect(circles(graph).map((c) => c.join(' <-> '))).toEqual([]);
  });

  it('no two folders import each other', () => {
    expect(folderPairs(graph)).toEqual([]);
  });

  it('no circle among folders, over the whole folder graph (each folder, and each room of the house)', () => {
    expect(folderCircles(graph).map((c) => c.join(' <-> '))).toEqual([]);
    expect(folderCircles(graph, roomOf).map((c) => c.join(' <-> '))).toEqual([]);
  });

  it('no product imports another: the daemon, the panel and the bridge client share only common/', () => {
    expect(acrossProducts(graph)).toEqual([]);
  });

  it('common/ imports nothing outside itself: no product, no package, no Node module', () => {
    expect(commonImportsOutside([...graph.keys()])).toEqual([]);
  });

  it('another folder is imported only through its index.ts (or a listed exception)', () => {
    expect(pastIndex(graph)).toEqual([]);
  });

  it('every exception is still used', () => {
    const unused = EXCEPTIONS.flatMap(([who, what]) =>
      what.filter(
        (to) => ![...graph].some(([file, deps]) => deps.includes(to) && who.some((w) => matches(w, file))),
      ),
    );
    expect(unused).toEqual([]);
  });

  it('each daemon folder names its public face in index.ts, with named exports only', () => {
    const folders = new Set([...graph.keys()].filter((f) => f.startsWith('daemon/')).map(folderOf));
    for (const [folder] of NO_INDEX) folders.delete(folder);
    const problems: string[] = [];
    for (const folder of folders) {
      const index = `${folder}/index.ts`;
      if (!graph.has(index)) problems.push(`${folder}: no index.ts`);
      else if (/export\s*\*/.test(readFileSync(join(root, index), 'utf8')))
        problems.push(`${index}: export *`);
    }
    expect(problems).toEqual([]);
  });

  it('the checks see a circle, a folder pair and an import past an index', () => {
    // The checks above must be able to fail: a small graph with one of each.
    const bad = new Map<string, string[]>([
      ['daemon/a/x.ts', ['daemon/b/index.ts']],
      ['daemon/b/index.ts', ['daemon/b/y.ts']],
      ['daemon/b/y.ts', ['daemon/a/x.ts']],
    ]);
    expect(circles(bad)).toEqual([['daemon/a/x.ts', 'daemon/b/index.ts', 'daemon/b/y.ts']]);
    expect(folderPairs(bad)).toHaveLength(1);
    expect(pastIndex(bad)).toEqual(['daemon/b/y.ts -> daemon/a/x.ts']);
  });

  it('the checks see a circle through three folders that no pair shows, and imports across products', () => {
    // Issue 37 item 1: a -> b -> c -> a among folders, with no file circle and no two folders importing
    // each other; and the panel importing the daemon, common/ importing the bridge client.
    const bad = new Map<string, string[]>([
      ['daemon/a/x.ts', ['daemon/b/index.ts']],
      ['daemon/a/index.ts', []],
      ['daemon/b/index.ts', ['daemon/c/index.ts']],
      ['daemon/c/index.ts', ['daemon/a/index.ts']],
      ['owner-ui/p.ts', ['daemon/a/index.ts', 'common/v.ts']],
      ['common/v.ts', ['bridge-client/q.ts']],
      ['bridge-client/q.ts', []],
    ]);
    expect(circles(bad)).toEqual([]);
    expect(folderPairs(bad)).toEqual([]);
    expect(folderCircles(bad)).toEqual([['daemon/a', 'daemon/b', 'daemon/c']]);
    expect(folderCircles(bad, roomOf)).toEqual([['daemon/a', 'daemon/b', 'daemon/c']]);
    expect(acrossProducts(bad)).toEqual([
      'owner-ui/p.ts -> daemon/a/index.ts',
      'common/v.ts -> bridge-client/q.ts',
    ]);
    expect(roomOf('daemon/kinds/cue/kind.ts')).toBe('daemon/kinds');
  });
});

describe('files of one concept (issue 20 item 3)', () => {
  it('no product file is past 400 lines', () => {
    const long = productFiles()
      .map((file) => [file, readFileSync(join(root, file), 'utf8').split('\n').length - 1] as const)
      .filter(([, lines]) => lines > 400)
      .map(([file, lines]) => `${file}: ${lines} lines`);
    expect(long).toEqual([]);
  });
});
