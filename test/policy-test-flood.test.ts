/**
 * Contract 11 (v4), issue 35 finding 8c: the `Allow…` dialog's test against the past (`policy_test` with a
 * `grant`) counts the newest `limit` commands of the grant's command only. The attack: the owner denied
 * `mark` three times; the AI, wanting a grant on `mark`, floods the history with 500 calls of another
 * command (each denied by a rule at once, so no pending cap stops it) to push those denials out of the
 * newest 500 — the dialog said "0 of 500" instead of "3 of 3, 3 denied".
 */
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { mcpClient, OwnerSocket, ownerCatalog, queue } from './helpers/owner.js';
import { RawMcp } from './helpers/raw-mcp.js';

const FLOOD = 500;

let d: RunningDaemon;
let ai: Client;
let owner: OwnerSocket;

beforeAll(async () => {
  const dataDir = makeDataDir('ogf-policy-flood-');
  const config = ownerCatalog(join(dataDir, 'marks.txt'), {
    rules: [{ id: 'no-noise', when: "command == 'noise'", decision: 'deny' }],
  });
  (config.commands as Record<string, unknown>).noise = {
    description: 'Does nothing',
    argv: [process.execPath, '-e', '0', '{word}'],
    params: { word: { type: 'string', max_length: 20, pattern: '^[a-z0-9]+$' } },
    timeout_s: 30,
  };
  d = await startDaemon({ dataDir, config });
  ai = await mcpClient(d);
  owner = await OwnerSocket.open(d);
}, 60_000);

afterAll(async () => {
  await owner?.close();
  await ai?.close();
  await d?.stop();
});

describe('[c11.policy-test-same-command] a flood of other requests cannot empty the Allow… dialog’s count', () => {
  it(`3 denials of mark still show after ${FLOOD} other calls`, { timeout: 120_000 }, async () => {
    for (const word of ['x1', 'x2', 'x3']) {
      const id = await queue(ai, 'mark', { word });
      const v = await owner.view(id, () => true, word);
      expect((await owner.request({ type: 'deny', id, version: v.version })).ok).toBe(true);
    }
    // The AI's flood: JSON-RPC batches of 100, each call denied by the rule at submit.
    const raw = await RawMcp.open(d, d.mcpToken);
    for (let b = 0; b < FLOOD / 100; b++) {
      const answers = await raw.batch(
        Array.from({ length: 100 }, (_, i) => ({
          command: 'noise',
          args: { word: `n${b}x${i}` },
          wait_seconds: 0,
        })),
      );
      for (const a of answers) expect(a.result?.structuredContent).toMatchObject({ status: 'DENIED' });
    }
    const r = await owner.request({ type: 'policy_test', grant: { command: 'mark', client: '*' } });
    expect(r).toMatchObject({ type: 'policy_test', of: 3, matched: 3, by_state: { denied: 3 } });
    // A rule is still tested against all commands (contract 11): the flood is there.
    const rule = await owner.request({
      type: 'policy_test',
      rule: { when: "command == 'mark'", decision: 'allow' },
    });
    expect(rule).toMatchObject({ of: 500, matched: 0 });
  });
});
