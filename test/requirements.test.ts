/**
 * The requirements map is honest (issue 6 item 1): every id in requirements.ts is cited by at least one
 * test title (`it('[R2.5] ...')`, `describe('[S.secret] ...')`) or a `// covers: [id]` comment, and every
 * cited id exists. The citations live in the test files themselves, so this test reads them as text.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/daemon.js';
import { REQUIREMENT_IDS, REQUIREMENTS } from './requirements.js';

const TEST_DIRS = ['test', 'daemon', 'bridge-client', 'examples'];
/** A citation: an id-shaped token in square brackets. */
const TOKEN_RE = /\[((?:R\d+\.\d+)|(?:[SQMUGONPF]\.[a-z][a-z-]*))\]/g;
/** Lines that may carry a citation: a test or suite title, or a `covers:` comment. */
const CITING_LINE_RE = /\b(?:it|test|describe)(?:\.\w+)*\s*\(|\/\/\s*covers:/;

const CONTRACT = resolve(ROOT, '..', 'shared', 'design', 'contracts.md');

function section2(contract: string): string {
  const from = contract.indexOf('## 2.');
  return contract.slice(from, contract.indexOf('## 3.', from));
}

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...testFiles(path));
    else if (name.endsWith('.test.ts') && name !== 'requirements.test.ts') out.push(path);
  }
  return out;
}

/** id → the files (relative) whose test titles or covers comments cite it. */
function citations(): Map<string, Set<string>> {
  const cited = new Map<string, Set<string>>();
  for (const file of TEST_DIRS.flatMap((d) => testFiles(join(ROOT, d)))) {
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      // A title may wrap onto the next line after `it(`; look at the line and the one before it.
      const context = `${lines[i - 1] ?? ''}\n${line}`;
      if (!CITING_LINE_RE.test(context)) return;
      for (const m of line.matchAll(TOKEN_RE)) {
        const id = m[1]!;
        if (!cited.has(id)) cited.set(id, new Set());
        cited.get(id)!.add(relative(ROOT, file));
      }
    });
  }
  return cited;
}

describe('requirements map', () => {
  const cited = citations();

  it('has a one-line statement and a source for every id', () => {
    for (const id of REQUIREMENT_IDS) {
      const r = REQUIREMENTS[id];
      expect(r.statement.length, id).toBeGreaterThan(20);
      expect(r.statement, id).not.toContain('\n');
      expect(r.source.length, id).toBeGreaterThan(0);
    }
  });

  it('covers every numbered rule of contracts.md section 2', () => {
    // The design folder sits beside the repository in the team's workspace; elsewhere the eight rules stand.
    const rules = existsSync(CONTRACT)
      ? [...section2(readFileSync(CONTRACT, 'utf8')).matchAll(/^(\d+)\. /gm)].map((m) => `R2.${m[1]}`)
      : ['R2.1', 'R2.2', 'R2.3', 'R2.4', 'R2.5', 'R2.6', 'R2.7', 'R2.8'];
    expect(rules.length).toBeGreaterThanOrEqual(8);
    for (const r of rules) expect(REQUIREMENT_IDS as string[]).toContain(r);
  });

  it('every id is cited by at least one test', () => {
    const uncited = REQUIREMENT_IDS.filter((id) => !cited.has(id));
    expect(uncited, `ids cited by no test title or covers comment: ${uncited.join(', ')}`).toEqual([]);
  });

  it('every cited id exists in the map', () => {
    const unknown = [...cited.keys()].filter((id) => !(REQUIREMENT_IDS as string[]).includes(id));
    expect(unknown, `cited ids missing from test/requirements.ts: ${unknown.join(', ')}`).toEqual([]);
  });
});
