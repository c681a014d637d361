/**
 * docs/reliability.md cannot go stale (issue 36 item 7): its promise tables are what
 * scripts/reliability-table.mjs writes from test/requirements.ts and the test titles citing each id.
 * Another engineer's new id or a moved test file makes this fail until `npm run docs:reliability` is run.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BEGIN, DOC, END, expectedDoc, loadRequirements } from '../scripts/reliability-table.mjs';
import { REQUIREMENT_IDS } from './requirements.js';

describe('[c17.reliability-table] docs/reliability.md promise tables', () => {
  it('[c17.reliability-table] the file holds exactly what npm run docs:reliability would write', async () => {
    const now = readFileSync(DOC, 'utf8');
    expect(now).toContain(BEGIN);
    expect(now).toContain(END);
    const same = now === (await expectedDoc());
    expect(same, 'docs/reliability.md is stale: run `npm run docs:reliability` and commit the result').toBe(
      true,
    );
  });

  it('[c17.reliability-table] the generator reads every id of the map and a row names each one', async () => {
    const requirements = await loadRequirements();
    expect(Object.keys(requirements)).toEqual(REQUIREMENT_IDS);
    const page = readFileSync(DOC, 'utf8');
    const block = page.slice(page.indexOf(BEGIN), page.indexOf(END));
    const rows = [...block.matchAll(/^\| (c[\w.-]*) \|/gm)].map((m) => m[1]);
    expect([...rows].sort()).toEqual([...REQUIREMENT_IDS].sort());
  });
});
