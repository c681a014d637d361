import { describe, expect, it } from 'vitest';
import type { Config } from '../config/index.js';
import { checkQuorum } from './doctor-checks.js';

type Quorum = Pick<Config, 'commands' | 'upstreams'>;

/** A config shape with the given approvals (built here: the config file refuses above 1 until quorum). */
function config(commands: Record<string, number>, upstreams: Record<string, number> = {}): Quorum {
  return {
    commands: Object.fromEntries(
      Object.entries(commands).map(([n, approvals]) => [
        n,
        { description: n, argv: ['true'], params: {}, timeout_s: 60, approvals },
      ]),
    ),
    upstreams: Object.fromEntries(
      Object.entries(upstreams).map(([n, approvals]) => [n, { argv: ['x'], approvals }]),
    ),
  } as unknown as Quorum;
}

describe('[c9.named] doctor: approvals against the number of owners (contract 9)', () => {
  it('warns, in one line each and without failing, about commands and upstreams needing more approvals than there are owners', () => {
    const warnings = checkQuorum(config({ say: 2, ls: 1, big: 3 }, { notes: 2 }), 2);
    expect(warnings.map((w) => [w.ok, w.warn])).toEqual([[true, true]]);
    expect(warnings[0]?.detail).toMatch(/^command big needs 3 approvals but there are 2 owners/);
    expect(warnings[0]?.detail).toContain('ogf-broker token owner --name NAME');
    const alone = checkQuorum(config({ say: 2 }, { notes: 2 }), 1);
    expect(alone.map((w) => w.detail.split(' needs')[0])).toEqual(['command say', 'upstream notes']);
    expect(alone[0]?.detail).toContain('there is 1 owner');
    expect(checkQuorum(config({ say: 2 }, { notes: 2 }), 2)).toEqual([]);
    expect(checkQuorum(config({ say: 1 }), 1)).toEqual([]);
  });
});
