/**
 * The requirements map is honest (issue 6 item 1): every id in requirements.ts is cited by at least one
 * test title (`it('[R2.5] ...')`, `describe('[S.secret] ...')`) or a `// covers: [id]` comment, and every
 * cited id exists. The citations live in the test files themselves, so this test reads them as text
 * (scripts/reliability-table.mjs finds them, the same way for docs/reliability.md's generated tables).
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { citations } from '../scripts/reliability-table.mjs';
import { ROOT } from './helpers/daemon.js';
import { REQUIREMENT_IDS, REQUIREMENTS } from './requirements.js';

const CONTRACT = resolve(ROOT, '..', 'shared', 'design', 'contracts.md');

function section2(contract: string): string {
  const from = contract.indexOf('## 2.');
  return contract.slice(from, contract.indexOf('## 3.', from));
}

describe('requirements map', () => {
  const cited = citations(ROOT);

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
