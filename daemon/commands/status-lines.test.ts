import { describe, expect, it } from 'vitest';
import type { LiveNode } from '../store/index.js';
import { checkNode } from './doctor-checks.js';
import { ago, daemonDatabaseLine, liveNodeLines, nodeLine } from './status-lines.js';

const laptop: LiveNode = {
  name: 'laptop',
  host: 'laptop.lan',
  pid: 41,
  version: '0.1.0',
  started_at: '2026-12-02T11:00:00.000Z',
  heartbeat_age_s: 1.25,
};
const build: LiveNode = {
  name: 'build-1',
  host: 'ci\u001b[2J',
  pid: 7,
  version: '0.1.0',
  started_at: '2026-12-02T11:00:00.000Z',
  heartbeat_age_s: 12,
};

describe("[c16.status-nodes] status: the node, the daemon's database, the live nodes (contract 16)", () => {
  it("names this data dir's node, or says the config does not load", () => {
    expect(nodeLine('laptop')).toBe('node: laptop');
    expect(nodeLine(undefined)).toBe('node: unknown (the config does not load)');
  });

  it('lists the live nodes with host, pid, version and seconds since the heartbeat, escaped', () => {
    expect(liveNodeLines([build, laptop], 'laptop')).toEqual([
      'live nodes: 2',
      '  build-1  host ci\\u001b[2J  pid 7  version 0.1.0  heartbeat 12.0 s ago',
      '  laptop (this data dir)  host laptop.lan  pid 41  version 0.1.0  heartbeat 1.3 s ago',
    ]);
    expect(liveNodeLines([], 'laptop')).toEqual(['live nodes: none']);
  });

  it('says when the running daemon lost the database (and nothing while it has it)', () => {
    const now = Date.parse('2026-12-02T12:00:00.000Z');
    expect(daemonDatabaseLine(undefined, now)).toBeUndefined();
    expect(
      daemonDatabaseLine({ pid: 1, available: true, since: '2026-12-02T11:00:00.000Z' }, now),
    ).toBeUndefined();
    expect(
      daemonDatabaseLine(
        { pid: 1, available: false, since: '2026-12-02T11:58:55.000Z', error: 'connect ECONNREFUSED' },
        now,
      ),
    ).toBe(
      "daemon's database: out of reach for 1 min 5 s (connect ECONNREFUSED); the daemon answers from memory, but queues and decides nothing until it is back",
    );
    expect(ago(3)).toBe('3 s');
    expect(ago(120)).toBe('2 min');
    expect(ago(3600 * 4 + 600)).toBe('4 h 10 min');
  });

  it('doctor names the node, and fails when another live daemon holds the name', () => {
    expect(checkNode('laptop', undefined, undefined, 'laptop.lan')).toEqual({
      name: 'node',
      ok: true,
      detail: 'laptop',
    });
    expect(checkNode('laptop', [laptop], { pid: 41 }, 'laptop.lan').detail).toBe(
      'laptop, live on the shared database',
    );
    expect(checkNode('desk', [laptop], undefined, 'desk.lan').detail).toBe(
      'desk, not live on the shared database',
    );
    const taken = checkNode('laptop', [laptop], undefined, 'other.lan');
    expect(taken.ok).toBe(false);
    expect(taken.detail).toMatch(
      /^laptop: a live daemon of that name runs on host laptop\.lan \(pid 41\); one started here would exit 2/,
    );
  });
});
