/**
 * Contract 11 through the real daemon: the contract's example rules in a real config, the real filesystem
 * server behind the gate as `notes`, an MCP client as the AI and a real owner WebSocket. Every decision kind
 * and its decided_by / audit, the order (first true rule decides), fail-closed, path_under's traversal cases
 * as an AI would try them, and config errors naming the rule's id.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, runCli, waitFor } from './helpers/daemon.js';
import { auditRows, call, type McpClient, structured } from './helpers/mcp.js';
import { type Frame, OwnerSocket } from './helpers/owner.js';
import { notesBehindGate } from './helpers/upstreams.js';

const files = realpathSync(mkdtempSync(join(tmpdir(), 'ogf-rules-files-')));
mkdirSync(join(files, 'drafts'));
mkdirSync(join(files, '.private'));

const RULES = [
  {
    id: 'no-secrets',
    when: `upstream == 'notes' && path_under(args.path, '${files}/.private')`,
    decision: 'deny',
    note: 'that folder is private',
  },
  // A deny rule that fails (no `mode` argument) for every read: reads then fail closed, whatever follows.
  { id: 'no-raw', when: "tool == 'read_text_file' && args.mode == 'raw'", decision: 'deny' },
  { id: 'reads', when: "tool == 'read_text_file'", decision: 'allow' },
  {
    id: 'drafts',
    when: `command == 'notes__write_file' && path_under(args.path, '${files}/drafts')`,
    decision: 'allow',
  },
  { id: 'deploy-two', when: "command == 'deploy'", decision: 'ask', approvals: 2 },
  { id: 'evil', when: "command == 'echo' && args.text.matches('^(a+)+$')", decision: 'deny' },
];

const COMMANDS = {
  deploy: {
    description: 'Deploy',
    argv: [process.execPath, '-e', 'process.stdout.write("deployed")'],
    params: {},
    timeout_s: 30,
  },
  echo: {
    description: 'Echo',
    argv: [process.execPath, '-e', 'process.stdout.write(process.argv[1])', '{text}'],
    params: { text: { type: 'string', max_length: 4096 } },
    timeout_s: 30,
  },
};

let d: RunningDaemon;
let ai: McpClient;
let owner: OwnerSocket;

beforeAll(async () => {
  ({ d, ai } = await notesBehindGate(files, { wait_seconds: 0 }, { rules: RULES, commands: COMMANDS }));
  owner = await OwnerSocket.open(d);
}, 60_000);

afterAll(async () => {
  await owner?.close();
  await d?.stop();
  rmSync(files, { recursive: true, force: true });
});

/** The newest View of `id` the owner was sent (snapshot or upsert). */
function viewOf(id: string): Frame | undefined {
  let v: Frame | undefined;
  for (const f of owner.frames) {
    if (f.type === 'snapshot') v = (f.commands as Frame[]).find((c) => c.id === id) ?? v;
    if (f.type === 'upsert' && f.command.id === id) v = f.command;
  }
  return v;
}

/** A write as the AI makes it; one that was approved at once is awaited to its end. */
async function write(path: string, content = 'x') {
  const r = structured(await call(ai, 'notes__write_file', { path, content }));
  if (r.status !== 'PENDING' || r.phase === 'awaiting_review') return r;
  return structured(await call(ai, 'await_command_result', { pending_id: r.pending_id, wait_seconds: 30 }));
}

describe('[c11.decide] the contract’s example rules, through the real daemon', () => {
  it('allow: a write under drafts/ runs without a click, decided by rule:drafts at version 2', async () => {
    const r = await write(`${files}/drafts/a.md`, 'hello');
    expect(r.status).toBe('SUCCEEDED');
    expect(readFileSync(join(files, 'drafts', 'a.md'), 'utf8')).toBe('hello');
    const id = r.pending_id as string;
    const v = await waitFor(() => viewOf(id), 'the owner to see it');
    // The owner never saw version 1: the first View is the approved one (or a later one).
    const first = owner.frames.find((f) => f.type === 'upsert' && f.command.id === id)!;
    expect(first.command.version).toBe(2);
    expect(first.command.decided_by).toBe('rule:drafts');
    expect(v.decided_by).toBe('rule:drafts');
    const audit = auditRows(d).filter((a) => a.command_id === id);
    expect(audit.map((a) => [a.action, a.version])).toEqual(
      expect.arrayContaining([
        ['submit', 1],
        ['approve', 2],
      ]),
    );
    expect(JSON.stringify(audit)).toContain('rule:drafts');
  });

  it('deny: DENIED/PolicyDenied with the note, decided by rule:no-secrets; nothing runs', async () => {
    const r = await write(`${files}/.private/key.txt`, 'secret');
    expect(r).toMatchObject({
      status: 'DENIED',
      reason: 'PolicyDenied',
      owner_note: 'that folder is private',
    });
    expect(existsSync(join(files, '.private', 'key.txt'))).toBe(false);
    const id = r.pending_id as string;
    const v = await waitFor(() => viewOf(id), 'the owner to see it in the history');
    expect(v).toMatchObject({
      state: 'denied',
      reason: 'PolicyDenied',
      decided_by: 'rule:no-secrets',
      version: 2,
    });
    const audit = auditRows(d).filter((a) => a.command_id === id);
    expect(audit.map((a) => a.action)).toEqual(['submit', 'deny']);
    expect(JSON.stringify(audit)).toContain('rule:no-secrets');
  });

  it('the first true rule decides: a traversal from drafts/ into .private/ is denied, not allowed', async () => {
    for (const path of [
      `${files}/drafts/../.private/a`,
      `${files}/drafts/./../.private/b`,
      `${files}//drafts//..//.private//c`,
    ]) {
      expect(await write(path), path).toMatchObject({ status: 'DENIED', reason: 'PolicyDenied' });
    }
    expect(existsSync(join(files, '.private', 'a'))).toBe(false);
  });

  it('what no rule matches waits for the owners: a sibling sharing the prefix, a climb out of drafts/', async () => {
    for (const path of [`${files}/drafts-old/x.md`, `${files}/drafts/../x.md`, `${files}/other.md`]) {
      expect(await write(path), path).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
    }
  }, 120_000);

  it('ask: deploy needs two owners (approvals_needed 2)', async () => {
    const r = structured(
      await call(ai, 'run_command_wait', { command: 'deploy', args: {}, wait_seconds: 0 }),
    );
    expect(r.status).toBe('PENDING');
    const v = await waitFor(() => viewOf(r.pending_id as string), 'the owner to see deploy');
    expect(v).toMatchObject({ state: 'awaiting_review', approvals_needed: 2, approvals: [] });
  });

  it('[c11.fail-closed] a deny rule that failed makes a later allow rule count for nothing', async () => {
    // `no-raw` fails for every read (no `mode` argument); `reads` would allow it.
    const r = structured(
      await call(ai, 'run_command_wait', { command: 'deploy', args: {}, wait_seconds: 0 }),
    );
    expect(r.status).toBe('PENDING');
    const read = await call(
      ai,
      'notes__read_text_file',
      { path: `${files}/drafts/a.md` },
      { timeout: 60_000 },
    );
    expect(structured(read)).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
    // Logged once per rule per minute, not per request.
    await call(ai, 'notes__read_text_file', { path: `${files}/drafts/b.md` }, { timeout: 60_000 });
    const lines = d
      .stderr()
      .split('\n')
      .filter((l) => l.includes('"rule_failed"') && l.includes('no-raw'));
    expect(lines).toHaveLength(1);
  }, 120_000);

  it('[c11.regex] a catastrophic pattern on the AI’s data answers at once, and the daemon keeps serving', async () => {
    const text = `${'a'.repeat(4000)}b`;
    const r = structured(
      await call(
        ai,
        'run_command_wait',
        { command: 'echo', args: { text }, wait_seconds: 0 },
        { timeout: 30_000 },
      ),
    );
    expect(r.status).toBe('PENDING');
    const denied = structured(
      await call(ai, 'run_command_wait', { command: 'echo', args: { text: 'aaaa' }, wait_seconds: 0 }),
    );
    expect(denied).toMatchObject({ status: 'DENIED', reason: 'PolicyDenied' });
  });
});

describe('[c11.bad-rule] a bad rule is a config error naming its id (exit 2)', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    [
      'an unknown variable',
      { id: 'bad-var', when: 'session_id == "x"', decision: 'deny' },
      /rules\[0\]\.when: rule bad-var: does not type-check: Unknown variable: session_id/,
    ],
    [
      'an unknown function',
      { id: 'bad-fn', when: 'shell(args.x)', decision: 'deny' },
      /rule bad-fn: does not type-check: .*shell/,
    ],
    [
      'not boolean',
      { id: 'not-bool', when: 'args.path', decision: 'allow' },
      /rule not-bool: must be a boolean expression/,
    ],
    [
      'not compiling',
      { id: 'broken', when: "client == 'x", decision: 'allow' },
      /rule broken: does not compile/,
    ],
    [
      'approvals without ask',
      { id: 'two', when: 'true', decision: 'allow', approvals: 2 },
      /rule two: approvals is accepted only with decision "ask"/,
    ],
    ['a bad id', { id: 'Bad_Id', when: 'true', decision: 'allow' }, /rules\[0\]\.id: must match/],
    [
      'a bad decision',
      { id: 'x', when: 'true', decision: 'maybe' },
      /rules\[0\]\.decision: must be "allow", "deny" or "ask"/,
    ],
    [
      'too long',
      { id: 'long', when: `client == '${'x'.repeat(4100)}'`, decision: 'deny' },
      /rules\[0\]\.when: must be at most 4096 characters/,
    ],
    [
      'a long note',
      { id: 'n', when: 'true', decision: 'deny', note: 'x'.repeat(501) },
      /rules\[0\]\.note: must be at most 500/,
    ],
  ];
  it.each(cases)('%s', async (_what, rule, want) => {
    const dir = mkdtempSync(join(tmpdir(), 'ogf-rules-cfg-'));
    try {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ rules: [rule] }), { mode: 0o600 });
      const r = await runCli(['start', '--data-dir', dir, '--port', '0']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(want);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ids are unique', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ogf-rules-cfg-'));
    try {
      const { writeFileSync } = await import('node:fs');
      const rule = { id: 'twice', when: 'true', decision: 'deny' };
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ rules: [rule, rule] }), { mode: 0o600 });
      const r = await runCli(['start', '--data-dir', dir, '--port', '0']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/rules\[1\]\.id: rule twice: ids must be unique/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
