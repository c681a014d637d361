/**
 * Issue 37 item 4: the broker hands out its actions as written once in their classes (submit-actions.ts,
 * command-actions.ts, grant-actions.ts), no longer restating each one. Every action still runs through the
 * fleet's retry (fleet.ts `again`: contract 16, a write another node changed first is run again), and the
 * reads are handed out as reads.ts has them, through no retry.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../../test/helpers/fake-clock.js';
import { KINDS } from '../../kinds/index.js';
import { Store } from '../../store/sqlite/index.js';
import { Broker } from './broker.js';
import { Fleet } from './fleet.js';

let dir: string;
let store: Store;
let broker: Broker;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ogf-broker-'));
  store = new Store(join(dir, 'broker.db'));
  broker = new Broker({ store, reviewTimeoutS: 300, kinds: KINDS, executors: {}, clock: new FakeClock() });
  await broker.start();
});

afterEach(async () => {
  vi.restoreAllMocks();
  await broker.close(100);
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the broker’s actions, written once (issue 37 item 4)', () => {
  it('every action runs through the fleet’s retry; the reads do not', async () => {
    const again = vi.spyOn(Fleet.prototype, 'again');
    const calls: Array<[string, () => Promise<unknown>]> = [
      [
        'submit',
        () => broker.submit({ tool: 'run_command_wait', command: 'x', args: {}, display: [], client: 'c' }),
      ],
      ['approve', () => broker.approve('none', 1, 'owner')],
      ['deny', () => broker.deny('none', 1, 'owner')],
      ['cancel', () => broker.cancel('none', 'c')],
      ['reconcile', () => broker.reconcile('none', 'delivered', 'owner')],
      ['amend', () => broker.amend('none', { fields: {}, action: 'preview_made', detail: {} })],
      ['prune', () => broker.prune('none')],
      ['grant', () => broker.grant({ command: 'x', client: '*', ttl_s: 60 }, 'owner')],
      ['revoke', () => broker.revoke('none', 'owner')],
      ['reloadConfigGrants', () => broker.reloadConfigGrants([])],
    ];
    const counted: Record<string, number> = {};
    for (const [name, call] of calls) {
      const before = again.mock.calls.length;
      await call().catch(() => undefined);
      counted[name] = again.mock.calls.length - before;
    }
    expect(counted).toEqual(Object.fromEntries(calls.map(([name]) => [name, 1])));
    const before = again.mock.calls.length;
    expect(broker.get('none')).toBeUndefined();
    expect(broker.snapshot()).toHaveLength((await broker.history(10)).length);
    expect(broker.liveGrants()).toHaveLength(0);
    expect(again.mock.calls.length).toBe(before);
  });
});
