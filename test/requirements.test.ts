/**
 * The requirements map is honest (issue 6 item 1): every id in requirements.ts is cited by at least one
 * test title (`it('[c2.rule-5] ...')`, `describe('[c3.3.session-secret] ...')`) or a `// covers: [id]`
 * comment, every cited id exists, and every id is keyed by a section of the contract (issue 37 item 7).
 * The citations live in the test files themselves, so this test reads them as text (scripts/
 * reliability-table.mjs finds them, the same way for docs/reliability.md's generated tables).
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { citations, ID_RE, OLD_TOKEN_RE, SECTIONS, sectionOf } from '../scripts/reliability-table.mjs';
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
      ? [...section2(readFileSync(CONTRACT, 'utf8')).matchAll(/^(\d+)\. /gm)].map((m) => `c2.rule-${m[1]}`)
      : [1, 2, 3, 4, 5, 6, 7, 8].map((n) => `c2.rule-${n}`);
    expect(rules.length).toBeGreaterThanOrEqual(8);
    for (const r of rules) expect(REQUIREMENT_IDS as string[]).toContain(r);
  });

  it('every id is keyed by a section of the contract: c<section>.<name>', () => {
    const sections = SECTIONS.map(([n]) => n);
    const contract = existsSync(CONTRACT) ? readFileSync(CONTRACT, 'utf8') : undefined;
    for (const id of REQUIREMENT_IDS) {
      expect(id, `${id} is not c<section>.<name>`).toMatch(ID_RE);
      const section = sectionOf(id)!;
      expect(
        sections,
        `${id}: section ${section} is not in scripts/reliability-table.mjs SECTIONS`,
      ).toContain(section);
      // Where the contract is at hand, the section is one of its headings (`## 11.`, `### 13.1 `).
      if (contract !== undefined) {
        const heading = new RegExp(
          `^#{2,3} ${section.replaceAll('.', '\\.')}${section.includes('.') ? ' ' : '\\. '}`,
          'm',
        );
        expect(contract, `${id}: the contract has no section ${section}`).toMatch(heading);
      }
    }
  });

  it('every id is cited by at least one test', () => {
    const uncited = REQUIREMENT_IDS.filter((id) => !cited.has(id));
    expect(uncited, `ids cited by no test title or covers comment: ${uncited.join(', ')}`).toEqual([]);
  });

  it('no test cites an id in the letter style of before issue 37 ([c2.rule-5], [c3.3.session-secret])', () => {
    const old = [...citations(ROOT, OLD_TOKEN_RE)].map(
      ([id, files]) => `[${id}] in ${[...files].join(', ')}`,
    );
    expect(
      old,
      `cite ids by contract section (c2.rule-5, c3.3.session-secret): see test/requirements.ts; ${old.join('; ')}`,
    ).toEqual([]);
  });

  it('every cited id exists in the map', () => {
    const unknown = [...cited.keys()].filter((id) => !(REQUIREMENT_IDS as string[]).includes(id));
    expect(unknown, `cited ids missing from test/requirements.ts: ${unknown.join(', ')}`).toEqual([]);
  });
});
