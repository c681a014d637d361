/**
 * Contract 11: testing a rule or a grant against the past — the `policy_test` owner frame and
 * `ogf-broker policy test` — on a known history made through the real daemon (an AI queueing, an owner
 * approving and denying), and `status` naming how many rules are active.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { mcpClient, OwnerSocket, ownerCatalog, queue, readMarks } from './helpers/owner.js';

let d: RunningDaemon;
let ai: Client;
let owner: OwnerSocket;
let markFile: string;
const ids: Record<string, string> = {};
const cfgDir = mkdtempSync(join(tmpdir(), 'ogf-policy-cfg-'));

const RULES = [
  { id: 'a-words', when: "command == 'mark' && args.word.startsWith('a')", decision: 'allow' },
  { id: 'no-b', when: "args.word.startsWith('b')", decision: 'deny', note: 'no b' },
];

beforeAll(async () => {
  const dataDir = makeDataDir('ogf-policy-');
  markFile = join(dataDir, 'marks.txt');
  // The daemon runs one rule; `policy test --config` tries others against its history.
  d = await startDaemon({
    dataDir,
    config: ownerCatalog(markFile, {
      rules: [{ id: 'cc', when: "args.word == 'c1'", decision: 'deny' }],
    }),
  });
  ai = await mcpClient(d);
  owner = await OwnerSocket.open(d);
  // A known history, oldest first: a1 a2 a3 approved by the owner, a4 denied, b1 approved, b2 denied,
  // c1 denied by the daemon's rule, c2 still waiting.
  for (const w of ['a1', 'a2', 'a3', 'a4', 'b1', 'b2', 'c1', 'c2'])
    ids[w] = await queue(ai, 'mark', { word: w });
  for (const w of ['a1', 'a2', 'a3', 'b1']) {
    const v = await owner.view(ids[w]!, () => true, w);
    expect((await owner.request({ type: 'approve', id: ids[w], version: v.version })).ok).toBe(true);
  }
  for (const w of ['a4', 'b2']) {
    const v = await owner.view(ids[w]!, () => true, w);
    expect((await owner.request({ type: 'deny', id: ids[w], version: v.version })).ok).toBe(true);
  }
  await waitFor(() => readMarks(markFile).length === 4, 'four marks');
  for (const w of ['a1', 'a2', 'a3', 'b1'])
    await owner.view(ids[w]!, (v) => v.state === 'succeeded', `${w} done`);
  writeFileSync(join(cfgDir, 'rules.json'), JSON.stringify(ownerCatalog(markFile, { rules: RULES })), {
    mode: 0o600,
  });
}, 60_000);

afterAll(async () => {
  await owner?.close();
  await ai?.close();
  await d?.stop();
  rmSync(cfgDir, { recursive: true, force: true });
});

describe('[c11.policy-test] the policy_test owner frame', () => {
  it('counts a rule’s matches among the newest commands by the state they ended in', async () => {
    const r = await owner.request({
      type: 'policy_test',
      rule: { when: "args.word.startsWith('a')", decision: 'allow' },
    });
    expect(r.type).toBe('policy_test');
    expect(r).toMatchObject({ of: 8, matched: 4, by_state: { succeeded: 3, denied: 1 } });
    expect(new Set(r.sample)).toEqual(new Set([ids.a1, ids.a2, ids.a3, ids.a4]));
  });

  it('a grant: its command, client and args or when', async () => {
    const exact = await owner.request({
      type: 'policy_test',
      grant: { command: 'mark', client: '*', args: { word: 'b2' } },
    });
    expect(exact).toMatchObject({ of: 8, matched: 1, by_state: { denied: 1 }, sample: [ids.b2] });
    const when = await owner.request({
      type: 'policy_test',
      grant: { command: 'mark', client: 'local', when: "args.word.endsWith('1')" },
    });
    expect(when).toMatchObject({ matched: 3, by_state: { succeeded: 2, denied: 1 } });
    const other = await owner.request({ type: 'policy_test', grant: { command: 'mark', client: 'bot' } });
    expect(other).toMatchObject({ of: 8, matched: 0, by_state: {}, sample: [] });
    const any = await owner.request({ type: 'policy_test', grant: { command: 'mark', client: '*' } });
    expect(any).toMatchObject({ matched: 8, by_state: { succeeded: 4, denied: 3, awaiting_review: 1 } });
  });

  it('limit: the newest N only; 1..5000', async () => {
    const r = await owner.request({
      type: 'policy_test',
      rule: { when: 'true', decision: 'ask' },
      limit: 3,
    });
    expect(r).toMatchObject({ of: 3, matched: 3 });
    expect(new Set(r.sample)).toEqual(new Set([ids.c2, ids.c1, ids.b2]));
    for (const limit of [0, 5001, 2.5]) {
      const bad = await owner.request({
        type: 'policy_test',
        rule: { when: 'true', decision: 'ask' },
        limit,
      });
      expect(bad).toMatchObject({ ok: false, error: { code: 'BadMessage' } });
      expect(bad.error.message).toMatch(/limit must be an integer from 1 to 5000/);
    }
    const both = await owner.request({
      type: 'policy_test',
      rule: { when: 'true', decision: 'ask' },
      grant: { command: 'mark', client: '*' },
    });
    expect(both.error.message).toMatch(/exactly one of rule .* and grant/);
    const badWhen = await owner.request({ type: 'policy_test', rule: { when: 'nope', decision: 'ask' } });
    expect(badWhen.error.message).toMatch(/when does not type-check: Unknown variable: nope/);
  });
});

describe('[c11.policy-test] ogf-broker policy test', () => {
  it('prints one line per rule, then each command whose decision would change', async () => {
    const r = await runCli([
      'policy',
      'test',
      '--data-dir',
      d.dataDir,
      '--config',
      join(cfgDir, 'rules.json'),
    ]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    // a-words matches a1..a4: a4 was denied (otherwise); no-b matches b1 (approved: otherwise) and b2 (denied).
    expect(lines[0]).toBe('rule a-words: matched 4 of 8 (1 would be decided otherwise)');
    expect(lines[1]).toBe('rule no-b: matched 2 of 8 (1 would be decided otherwise)');
    expect(lines.slice(2)).toHaveLength(2);
    expect(lines.find((l) => l.startsWith(ids.a4!))).toMatch(
      /mark {2}client local: was denied by owner; rule a-words would allow it/,
    );
    expect(lines.find((l) => l.startsWith(ids.b1!))).toMatch(
      /was succeeded by owner; rule no-b would deny it/,
    );
  });

  it('--limit, and the daemon’s own config by default', async () => {
    const r = await runCli(['policy', 'test', '--data-dir', d.dataDir, '--limit', '2']);
    expect(r.code, r.stderr).toBe(0);
    // The daemon's rule `cc`: of the newest 2 (c2, c1) it matches c1, which it denied itself.
    expect(r.stdout).toBe('rule cc: matched 1 of 2 (0 would be decided otherwise)\n');
    const bad = await runCli(['policy', 'test', '--data-dir', d.dataDir, '--limit', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--limit: must be an integer from 1 to 5000/);
  });

  it('a bad config exits 2 naming the rule', async () => {
    const file = join(cfgDir, 'bad.json');
    writeFileSync(file, JSON.stringify({ rules: [{ id: 'oops', when: 'args.x', decision: 'allow' }] }), {
      mode: 0o600,
    });
    const r = await runCli(['policy', 'test', '--data-dir', d.dataDir, '--config', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/rules\[0\]\.when: rule oops: must be a boolean expression/);
  });

  it('[c11.policy-test] status prints how many rules are active', async () => {
    const r = await runCli(['status', '--data-dir', d.dataDir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^rules: 1 active$/m);
  });
});
