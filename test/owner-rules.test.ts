/**
 * Contract 18: rules the owners make — over a real daemon process, a real broker.db and the real CLI. The
 * frames (`rules`, `rule_add`, `rule_update`, `rule_remove`) and what they refuse; config rules first,
 * then the owners' in their order; an owner's `allow` never covering a require_passkey or quorum command
 * (the attack: an owner's rule written to let the AI past the passkey); the audit entries and the `config`
 * notification of every change; the terminal's `rule` verbs; a restart keeping them.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { type Frame, mcpClient, OwnerSocket, ownerCatalog, queue, readMarks } from './helpers/owner.js';
import { HttpReceiver } from './helpers/receivers.js';

let dataDir: string;
let markFile: string;
let d: RunningDaemon;
let ai: Client;
let owner: OwnerSocket;
let hook: HttpReceiver;

function config(): Record<string, unknown> {
  const base = ownerCatalog(markFile) as { commands: Record<string, Record<string, unknown>> };
  const mark = base.commands.mark!;
  return {
    ...base,
    commands: {
      ...base.commands,
      vault: { ...mark, description: 'Write to the vault (passkey)', require_passkey: true },
      launch: { ...mark, description: 'Launch (two owners)', approvals: 2 },
    },
    rules: [
      { id: 'cfg-no-xx', when: "args.word == 'xx'", decision: 'deny', note: 'the config says no' },
      { id: 'cfg-yy', when: "command == 'mark' && args.word == 'yy'", decision: 'allow' },
    ],
    notify: [{ id: 'watch', type: 'webhook', url: hook.url(), format: 'json', events: ['config'] }],
  };
}

/** The first View the owner saw of `id` (an approval at submit is first seen at version 2). */
async function firstSeen(id: string): Promise<Frame> {
  return owner.view(id, () => true, `view of ${id}`);
}

/** The chained audit entries of an action, oldest first, as broker.db holds them. */
function entries(action: string): Frame[] {
  const db = new Database(join(dataDir, 'broker.db'), { readonly: true });
  try {
    return (
      db
        .prepare('SELECT entry FROM audit WHERE action = ? AND hash IS NOT NULL ORDER BY seq')
        .pluck()
        .all(action) as string[]
    ).map((e) => JSON.parse(e) as Frame);
  } finally {
    db.close();
  }
}

async function add(rule: Frame, position?: number): Promise<Frame> {
  const r = await owner.request({ type: 'rule_add', rule, ...(position === undefined ? {} : { position }) });
  expect(r, JSON.stringify(r)).toMatchObject({ type: 'rule_add', rule: { source: 'owner', enabled: true } });
  return r.rule as Frame;
}

beforeAll(async () => {
  hook = await HttpReceiver.start('ok');
  dataDir = makeDataDir('ogf-owner-rules-');
  markFile = join(dataDir, 'marks.txt');
  d = await startDaemon({ dataDir, config: config() });
  ai = await mcpClient(d);
  owner = await OwnerSocket.open(d);
}, 60_000);

afterAll(async () => {
  await owner?.close();
  await ai?.close();
  await d?.stop();
  await hook?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('[c18.frames] the rule frames', () => {
  it('rules lists the config rules first, read-only, each with its count', async () => {
    const r = await owner.request({ type: 'rules' });
    expect(r.type).toBe('rules');
    expect(r.rules).toEqual([
      {
        id: 'cfg-no-xx',
        source: 'config',
        when: "args.word == 'xx'",
        decision: 'deny',
        note: 'the config says no',
        enabled: true,
        decided: 0,
      },
      {
        id: 'cfg-yy',
        source: 'config',
        when: "command == 'mark' && args.word == 'yy'",
        decision: 'allow',
        enabled: true,
        decided: 0,
      },
    ]);
  });

  it('a rule that does not compile, approvals without ask, a config id: BadMessage naming what is wrong', async () => {
    const cases: Array<[Frame, RegExp]> = [
      [{ when: 'args.word ==', decision: 'allow' }, /^rule\.when /],
      [{ when: 'nosuch == 1', decision: 'allow' }, /rule\.when .*nosuch/],
      [{ when: "args.word + 'x'", decision: 'allow' }, /rule\.when .*bool/],
      [{ when: 'true', decision: 'allow', approvals: 2 }, /approvals is accepted only with decision "ask"/],
      [{ when: 'true', decision: 'maybe' }, /rule\.decision must be allow, deny or ask/],
      [{ id: 'Bad Id', when: 'true', decision: 'deny' }, /rule\.id must be a rule id/],
      [{ id: 'cfg-yy', when: 'true', decision: 'deny' }, /cfg-yy is a config rule's id/],
    ];
    for (const [rule, message] of cases) {
      const r = await owner.request({ type: 'rule_add', rule });
      expect(r, JSON.stringify(rule)).toMatchObject({
        type: 'reply',
        ok: false,
        error: { code: 'BadMessage' },
      });
      expect(r.error.message).toMatch(message);
    }
    const up = await owner.request({ type: 'rule_update', id: 'whatever', when: 'args.word ==' });
    expect(up).toMatchObject({ type: 'reply', ok: false, error: { code: 'BadMessage' } });
    expect(up.error.message).toMatch(/^when /);
    const rules = await owner.request({ type: 'rules' });
    expect(rules.rules.filter((r: Frame) => r.source === 'owner')).toEqual([]);
  });

  it('a config rule cannot be changed or removed here: NotFound; nor an id no rule has', async () => {
    for (const frame of [
      { type: 'rule_update', id: 'cfg-no-xx', enabled: false },
      { type: 'rule_remove', id: 'cfg-yy' },
    ]) {
      const r = await owner.request(frame);
      expect(r).toMatchObject({ type: 'reply', ok: false, error: { code: 'NotFound' } });
      expect(r.error.message).toContain('config');
    }
    const none = await owner.request({ type: 'rule_remove', id: 'no-such-rule' });
    expect(none).toMatchObject({ type: 'reply', ok: false, error: { code: 'NotFound' } });
    // Still deciding as before.
    const id = await queue(ai, 'mark', { word: 'xx' });
    expect(await firstSeen(id)).toMatchObject({ state: 'denied', decided_by: 'rule:cfg-no-xx' });
  });
});

describe('[c18.owner-rules] owners’ rules decide after the config’s, in the owners’ order', () => {
  it('an owner’s allow rule approves at submit; the config’s deny still comes first', async () => {
    const rule = await add({
      id: 'o-words',
      when: "command == 'mark' && args.word.startsWith('o')",
      decision: 'allow',
    });
    expect(rule).toMatchObject({ id: 'o-words', created_by: 'owner', decided: 0 });
    expect(Date.parse(rule.created_at)).not.toBeNaN();
    const ok = await queue(ai, 'mark', { word: 'ok1' });
    expect(await firstSeen(ok)).toMatchObject({ state: 'approved', version: 2, decided_by: 'rule:o-words' });
    await waitFor(() => readMarks(markFile).includes('ok1'), 'ok1 ran');
    // An owner's rule that would allow what a config rule denies: the config's is evaluated first.
    await add({ id: 'x-words', when: "args.word.startsWith('x')", decision: 'allow' });
    const xx = await queue(ai, 'mark', { word: 'xx' });
    expect(await firstSeen(xx)).toMatchObject({ state: 'denied', decided_by: 'rule:cfg-no-xx' });
    const xa = await queue(ai, 'mark', { word: 'xa' });
    expect(await firstSeen(xa)).toMatchObject({ state: 'approved', decided_by: 'rule:x-words' });
  });

  it('a rule added at position 0 comes before the owners’ others; deny carries its note', async () => {
    await add({ id: 'no-op', when: "args.word.startsWith('op')", decision: 'deny', note: 'not op words' }, 0);
    const list = await owner.request({ type: 'rules' });
    expect(list.rules.map((r: Frame) => r.id)).toEqual([
      'cfg-no-xx',
      'cfg-yy',
      'no-op',
      'o-words',
      'x-words',
    ]);
    const op = await queue(ai, 'mark', { word: 'op1' });
    expect(await firstSeen(op)).toMatchObject({
      state: 'denied',
      reason: 'PolicyDenied',
      result: { owner_note: 'not op words' },
      decided_by: 'rule:no-op',
    });
  });

  it('a disabled rule decides nothing; enabled again, it does; an edit takes effect at once', async () => {
    const off = await owner.request({ type: 'rule_update', id: 'o-words', enabled: false });
    expect(off).toMatchObject({ type: 'rule_update', rule: { id: 'o-words', enabled: false, decided: 1 } });
    const waits = await queue(ai, 'mark', { word: 'ob' });
    expect(await firstSeen(waits)).toMatchObject({ state: 'awaiting_review', version: 1 });
    const on = await owner.request({
      type: 'rule_update',
      id: 'o-words',
      enabled: true,
      decision: 'ask',
      approvals: 2,
      note: 'two of you',
    });
    expect(on.rule).toMatchObject({ enabled: true, decision: 'ask', approvals: 2, note: 'two of you' });
    const asked = await queue(ai, 'launch', { word: 'oc' });
    expect(await firstSeen(asked)).toMatchObject({ state: 'awaiting_review', approvals_needed: 2 });
    const back = await owner.request({ type: 'rule_update', id: 'o-words', decision: 'allow', note: '' });
    expect(back.rule).toMatchObject({ decision: 'allow' });
    expect(back.rule.approvals).toBeUndefined();
    expect(back.rule.note).toBeUndefined();
  });

  it('rules counts how many requests each rule decided', async () => {
    const list = await owner.request({ type: 'rules' });
    const decided = Object.fromEntries(list.rules.map((r: Frame) => [r.id, r.decided]));
    expect(decided).toEqual({ 'cfg-no-xx': 2, 'cfg-yy': 0, 'no-op': 1, 'o-words': 1, 'x-words': 1 });
  });
});

describe('[c18.allow-never-covers] an owner’s allow never covers a passkey, quorum or cue command', () => {
  it('attack: an allow rule naming the require_passkey command is kept, and the request still waits', async () => {
    await add({ id: 'let-vault', when: "command == 'vault'", decision: 'allow' });
    await add({ id: 'let-all', when: 'true', decision: 'allow' });
    const vault = await queue(ai, 'vault', { word: 'v1' });
    expect(await firstSeen(vault)).toMatchObject({
      state: 'awaiting_review',
      version: 1,
      passkey_required: true,
    });
    const launch = await queue(ai, 'launch', { word: 'l1' });
    expect(await firstSeen(launch)).toMatchObject({
      state: 'awaiting_review',
      version: 1,
      approvals_needed: 2,
    });
    const list = await owner.request({ type: 'rules' });
    expect(list.rules.map((r: Frame) => r.id)).toContain('let-vault');
    expect(readMarks(markFile)).not.toContain('v1');
    for (const id of ['let-vault', 'let-all']) {
      expect(await owner.request({ type: 'rule_remove', id })).toMatchObject({ type: 'rule_remove', id });
    }
  });
});

describe('[c18.audited] every change is an audit entry and a config notification', () => {
  it('rule_added, rule_updated and rule_removed name the owner and the rule, in the chain', async () => {
    const added = entries('rule_added');
    expect(added.map((e) => e.data.rule_id)).toEqual(['o-words', 'x-words', 'no-op', 'let-vault', 'let-all']);
    expect(added[0]).toMatchObject({
      actor: 'owner',
      data: {
        rule: { id: 'o-words', decision: 'allow', when: "command == 'mark' && args.word.startsWith('o')" },
      },
    });
    expect(
      entries('rule_updated').map((e) => [e.data.rule_id, e.data.rule.enabled, e.data.rule.decision]),
    ).toEqual([
      ['o-words', false, 'allow'],
      ['o-words', true, 'ask'],
      ['o-words', true, 'allow'],
    ]);
    expect(entries('rule_removed').map((e) => e.data.rule_id)).toEqual(['let-vault', 'let-all']);
    const verify = await runCli(['audit', 'verify', '--data-dir', dataDir]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });

  it('each change reached the config channel', async () => {
    const configs = () => hook.json().filter((m) => m.event === 'config');
    await waitFor(() => configs().length >= 10, 'ten config notifications');
    const titles = configs().map((m) => m.title as string);
    expect(titles).toContain('ogf-broker: owner owner added rule let-vault');
    expect(titles).toContain('ogf-broker: owner owner changed rule o-words');
    expect(titles).toContain('ogf-broker: owner owner removed rule let-all');
  });
});

describe('[c18.cli] the terminal’s rule verbs', () => {
  it('rule add, list, disable, remove through the running daemon; a bad expression exits 2', async () => {
    const bad = await runCli([
      'rule',
      'add',
      '--data-dir',
      dataDir,
      '--when',
      'args.word ==',
      '--decision',
      'deny',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/BadMessage: rule\.when /);
    const noDecision = await runCli(['rule', 'add', '--data-dir', dataDir, '--when', 'true']);
    expect(noDecision.code).toBe(2);
    expect(noDecision.stderr).toContain('--decision: must be allow, deny or ask');
    const made = await runCli([
      ...['rule', 'add', '--data-dir', dataDir, '--when', "args.word == 'zz'"],
      ...['--decision', 'deny', '--note', 'no zz', '--id', 'no-zz'],
    ]);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout.trim().split('\n').at(-1)).toBe('no-zz');
    const zz = await queue(ai, 'mark', { word: 'zz' });
    expect(await firstSeen(zz)).toMatchObject({
      state: 'denied',
      result: { owner_note: 'no zz' },
      decided_by: 'rule:no-zz',
    });
    const list = await runCli(['rule', 'list', '--data-dir', dataDir]);
    expect(list.code).toBe(0);
    const lines = list.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^cfg-no-xx {2}config {2}deny {2}enabled {2}args\.word == 'xx'/);
    expect(lines.at(-1)).toMatch(
      /^no-zz {2}owner {2}deny {2}enabled {2}args\.word == 'zz' {2}— decided 1 by owner at /,
    );
    const disabled = await runCli(['rule', 'disable', 'no-zz', '--data-dir', dataDir]);
    expect(disabled.code).toBe(0);
    expect(disabled.stdout).toMatch(/^no-zz {2}owner {2}deny {2}disabled/);
    const cfg = await runCli(['rule', 'remove', 'cfg-yy', '--data-dir', dataDir]);
    expect(cfg.code).toBe(1);
    expect(cfg.stderr).toContain('NotFound');
    const removed = await runCli(['rule', 'remove', 'no-zz', '--data-dir', dataDir]);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toBe('removed no-zz\n');
    const after = await runCli(['rule', 'list', '--data-dir', dataDir]);
    expect(after.stdout).not.toContain('no-zz');
  });
});

describe('[c18.owner-rules] a restart keeps them', () => {
  it('the owners’ rules, their order and their counts are there after a restart', async () => {
    await owner.close();
    await ai.close();
    await d.stop();
    d = await startDaemon({ dataDir, config: config() });
    ai = await mcpClient(d);
    owner = await OwnerSocket.open(d);
    const list = await owner.request({ type: 'rules' });
    expect(list.rules.map((r: Frame) => [r.id, r.decided])).toEqual([
      ['cfg-no-xx', 2],
      ['cfg-yy', 0],
      ['no-op', 1],
      ['o-words', 1],
      ['x-words', 1],
    ]);
    const ok = await queue(ai, 'mark', { word: 'ok2' });
    expect(await firstSeen(ok)).toMatchObject({ state: 'approved', decided_by: 'rule:o-words' });
  }, 60_000);
});

describe('[c18.owner-rules] a config rule may not take an owners’ rule’s id', () => {
  it('reload refuses it (exit 2, the old rules still decide); a start with it refuses too', async () => {
    const taken = { ...config(), rules: [{ id: 'o-words', when: "args.word == 'zz'", decision: 'deny' }] };
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify(taken));
    const r = await runCli(['reload', '--data-dir', dataDir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/rules\[0\]\.id: "o-words" is the id of an owners' rule/);
    const list = await owner.request({ type: 'rules' });
    expect(list.rules.filter((x: Frame) => x.id === 'o-words').map((x: Frame) => x.source)).toEqual([
      'owner',
    ]);
    await owner.close();
    await ai.close();
    await d.stop();
    const start = await runCli(['start', '--data-dir', dataDir, '--port', '0']);
    expect(start.code).toBe(2);
    expect(start.stderr).toMatch(/rules\[0\]\.id: "o-words" is the id of an owners' rule/);
    // Put back as it was, so the daemon runs again for afterAll.
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify(config()));
    d = await startDaemon({ dataDir, config: config() });
    ai = await mcpClient(d);
    owner = await OwnerSocket.open(d);
  }, 60_000);
});
