/**
 * Contract 20, taking a write back: a succeeded write_file of a file that existed keeps the file's previous
 * content; while the file still holds what the write left, `revert` (owner frame, terminal) queues the
 * owner's own command (client `owner:<name>`, `revert_of`) that writes the previous content through the same
 * tool, approved by that frame. A file changed since, or a new file, is `NotRevertible`. A passkey-required
 * upstream's revert waits for the owner's passkey like any of its calls; a quorum upstream's needs its other
 * owners too. `revert_check` reads the file and answers with the diff back, queuing nothing. The AI can
 * neither revert nor set `revert_of`. Real daemon, real @modelcontextprotocol/server-filesystem, real owner
 * socket, real CLI.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, type RunningDaemon, runCli } from './helpers/daemon.js';
import { auditRows, call, type McpClient, structured } from './helpers/mcp.js';
import { type Frame, OwnerSocket } from './helpers/owner.js';
import { panelLogin, panelProtocols } from './helpers/panel.js';
import { SoftAuthenticator } from './helpers/soft-authenticator.js';
import { notesBehindGate } from './helpers/upstreams.js';

const files = mkdtempSync(join(tmpdir(), 'ogf-revert-'));
let d: RunningDaemon;
let ai: McpClient;
let owner: OwnerSocket;

beforeAll(async () => {
  ({ d, ai } = await notesBehindGate(files, { preset: 'filesystem', wait_seconds: 0 }));
  owner = await OwnerSocket.open(d);
});

afterAll(async () => {
  await owner?.close();
  await ai?.close();
  await d?.stop();
});

let nextReq = 1;
async function ask(s: OwnerSocket, frame: Frame): Promise<Frame> {
  const req_id = `v${nextReq++}`;
  s.ws.send(JSON.stringify({ ...frame, req_id }));
  return s.waitFor((f) => f.req_id === req_id, `answer to ${frame.type}`);
}

/** The AI writes `content` to `path`; the owner approves it once its preview is ready; it succeeds. */
async function written(s: OwnerSocket, path: string, content: string, client = ai): Promise<Frame> {
  const r = structured(await call(client, 'notes__write_file', { path, content }));
  const id = String(r.pending_id);
  const v = await s.view(id, (x) => x.preview?.status === 'ready', `${id} previewed`);
  expect(await ask(s, { type: 'approve', id, version: v.version })).toMatchObject({ ok: true });
  return s.view(id, (x) => x.status === 'SUCCEEDED', `${id} succeeded`);
}

describe('taking a write back (contract 20)', () => {
  it('[c20.revert] a revert restores the previous content, as the owner’s own command naming the original', async () => {
    const path = join(files, 'recipe.md');
    writeFileSync(path, 'flour\nsugar\n');
    const done = await written(owner, path, 'flour\nsalt\n');
    expect(done.revertible_until).toMatch(/^\d{4}-/);
    // The kept diff is what the card reverses; the previous content itself is in no View.
    expect(done.preview.diff).toContain('+salt');
    expect(JSON.stringify(done)).not.toContain('"previous"');
    const answer = await ask(owner, { type: 'revert', id: done.id });
    expect(answer.type).toBe('revert');
    const back = await owner.view(answer.id, (v) => v.status === 'SUCCEEDED', 'revert ran');
    expect(back).toMatchObject({ client: 'owner:owner', revert_of: done.id, decided_by: 'owner' });
    expect(back.preview.diff).toContain('-salt');
    expect(back.preview.diff).toContain('+sugar');
    expect(readFileSync(path, 'utf8')).toBe('flour\nsugar\n');
    const submit = auditRows(d).find((r) => r.command_id === answer.id && r.action === 'submit');
    expect(JSON.parse(String(submit?.detail))).toMatchObject({ revert_of: done.id });
  });

  it('[c20.revert] the offer is checked by reading the file: revert_check shows the diff back while it holds what the command wrote, NotRevertible once it changed, and queues nothing', async () => {
    const path = join(files, 'checked.md');
    writeFileSync(path, 'one\ntwo\n');
    const done = await written(owner, path, 'one\nthree\n');
    const ok = await ask(owner, { type: 'revert_check', id: done.id });
    expect(ok).toMatchObject({
      type: 'revert_check',
      id: done.id,
      preview: { kind: 'file_diff', status: 'ready' },
    });
    expect(ok.preview.diff).toContain('-three');
    expect(ok.preview.diff).toContain('+two');
    // Checking decides nothing: no command was queued, the file is as the command left it.
    expect(auditRows(d).filter((r) => r.action === 'submit' && String(r.detail).includes(done.id))).toEqual(
      [],
    );
    expect(readFileSync(path, 'utf8')).toBe('one\nthree\n');
    writeFileSync(path, 'one\nfour by hand\n');
    const changed = await ask(owner, { type: 'revert_check', id: done.id });
    expect(changed).toMatchObject({ ok: false, error: { code: 'NotRevertible' } });
    expect(changed.error.message).toContain('the file changed after this command');
    const bad = await ask(owner, { type: 'revert_check', id: done.id, version: 1 });
    expect(bad).toMatchObject({ ok: false, error: { code: 'BadMessage' } });
  });

  it('[c20.revert] the terminal reverts too', async () => {
    const path = join(files, 'terminal.md');
    writeFileSync(path, 'before\n');
    const done = await written(owner, path, 'after\n');
    const r = spawnSync(process.execPath, [CLI, 'revert', done.id, '--data-dir', d.dataDir], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const id = /queued as (\S+)/.exec(r.stdout)?.[1];
    expect(id).toBeDefined();
    await owner.view(id!, (v) => v.status === 'SUCCEEDED', 'terminal revert ran');
    expect(readFileSync(path, 'utf8')).toBe('before\n');
  });

  it('[c20.revert] a file changed after the command is not reverted', async () => {
    const path = join(files, 'changed.md');
    writeFileSync(path, 'v1\n');
    const done = await written(owner, path, 'v2\n');
    writeFileSync(path, 'v3 by someone else\n');
    const answer = await ask(owner, { type: 'revert', id: done.id });
    expect(answer).toMatchObject({ ok: false, error: { code: 'NotRevertible' } });
    expect(answer.error.message).toContain('the file changed after this command');
    expect(readFileSync(path, 'utf8')).toBe('v3 by someone else\n');
    const r = spawnSync(process.execPath, [CLI, 'revert', done.id, '--data-dir', d.dataDir], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('NotRevertible: the file changed after this command');
  });

  it('[c20.revert] a new file is not reverted (no delete on the owner’s behalf)', async () => {
    const path = join(files, 'brand-new.md');
    const done = await written(owner, path, 'hello\n');
    expect(done.revertible_until).toBeUndefined();
    const answer = await ask(owner, { type: 'revert', id: done.id });
    expect(answer).toMatchObject({ ok: false, error: { code: 'NotRevertible' } });
    expect(answer.error.message).toContain('new file');
    expect(readFileSync(path, 'utf8')).toBe('hello\n');
  });

  it('[c20.attack] the AI cannot revert, nor set revert_of', async () => {
    const path = join(files, 'attack.md');
    writeFileSync(path, 'safe\n');
    const done = await written(owner, path, 'changed\n');
    // revert_of as an argument is refused by the tool's own schema, or is just an argument: never the field.
    const r = await call(ai, 'notes__write_file', { path, content: 'x\n', revert_of: done.id });
    const s = structured(r);
    if (s.pending_id !== undefined) {
      const v = await owner.view(String(s.pending_id), () => true, 'queued');
      expect(v.revert_of).toBeUndefined();
      await ask(owner, { type: 'deny', id: v.id, version: v.version });
    }
    // No MCP tool reverts.
    const tools = (await ai.listTools()).tools.map((t) => t.name);
    expect(tools.some((t) => /revert/i.test(t))).toBe(false);
    expect(readFileSync(path, 'utf8')).toBe('changed\n');
  });
});

describe('a passkey upstream’s revert (contract 20, 13.3)', () => {
  let pd: RunningDaemon;
  let pai: McpClient;
  let panel: OwnerSocket;
  const pfiles = mkdtempSync(join(tmpdir(), 'ogf-revert-pk-'));

  beforeAll(async () => {
    ({ d: pd, ai: pai } = await notesBehindGate(pfiles, {
      preset: 'filesystem',
      wait_seconds: 0,
      require_passkey: true,
    }));
    const login = await panelLogin(pd);
    const at = pd.url.replace('127.0.0.1', 'localhost');
    panel = await OwnerSocket.open(pd, { Cookie: login.cookie, Origin: at }, panelProtocols(login.key));
  });

  afterAll(async () => {
    await panel?.close();
    await pai?.close();
    await pd?.stop();
  });

  it('[c20.revert] needs the passkey: the revert waits until the owner approves it with one', async () => {
    const local = pd.url.replace('127.0.0.1', 'localhost');
    const key = new SoftAuthenticator('localhost', local);
    const begun = await ask(panel, { type: 'passkey_begin' });
    expect(
      await ask(panel, { type: 'passkey_finish', response: key.register(begun.options.challenge) }),
    ).toMatchObject({ ok: true });
    const path = join(pfiles, 'vault.md');
    writeFileSync(path, 'secret 1\n');
    const r = structured(await call(pai, 'notes__write_file', { path, content: 'secret 2\n' }));
    const id = String(r.pending_id);
    const v = await panel.view(id, (x) => x.preview?.status === 'ready', 'previewed');
    const ch = await ask(panel, { type: 'approve_challenge', id, version: v.version });
    expect(
      await ask(panel, {
        type: 'approve',
        id,
        version: v.version,
        assertion: key.assert(ch.challenge, { origin: local }),
      }),
    ).toMatchObject({ ok: true });
    await panel.view(id, (x) => x.status === 'SUCCEEDED', 'written');
    const answer = await ask(panel, { type: 'revert', id });
    expect(answer.type).toBe('revert');
    const waiting = await panel.view(answer.id, (x) => x.state === 'awaiting_review', 'revert waits');
    expect(waiting.passkey_required).toBe(true);
    // Without the passkey: refused, nothing written.
    expect(await ask(panel, { type: 'approve', id: answer.id, version: waiting.version })).toMatchObject({
      ok: false,
      error: { code: 'PasskeyRequired' },
    });
    expect(readFileSync(path, 'utf8')).toBe('secret 2\n');
    const ch2 = await ask(panel, { type: 'approve_challenge', id: answer.id, version: waiting.version });
    const assertion = key.assert(ch2.challenge, { origin: local });
    expect(
      await ask(panel, { type: 'approve', id: answer.id, version: waiting.version, assertion }),
    ).toMatchObject({ ok: true });
    await panel.view(answer.id, (x) => x.status === 'SUCCEEDED', 'reverted');
    expect(readFileSync(path, 'utf8')).toBe('secret 1\n');
  });
});

describe('a quorum upstream’s revert (contract 20, 9)', () => {
  let qd: RunningDaemon;
  let qai: McpClient;
  let alice: OwnerSocket;
  let bob: OwnerSocket;
  const qfiles = mkdtempSync(join(tmpdir(), 'ogf-revert-q-'));

  beforeAll(async () => {
    ({ d: qd, ai: qai } = await notesBehindGate(qfiles, {
      preset: 'filesystem',
      wait_seconds: 0,
      approvals: 2,
    }));
    const made = await runCli(['token', 'owner', '--name', 'bob', '--data-dir', qd.dataDir]);
    expect(made.code, made.stderr).toBe(0);
    const bobToken = new URL(made.stdout.trim().split('\n').at(-1)!).hash.replace(/^#token=/, '');
    alice = await OwnerSocket.open(qd);
    bob = await OwnerSocket.open(qd, { Authorization: `Bearer ${bobToken}` });
  });

  afterAll(async () => {
    await alice?.close();
    await bob?.close();
    await qai?.close();
    await qd?.stop();
  });

  it('[c20.revert] needs both owners: the reverting owner’s frame is one approval, the file is written back only after the other’s', async () => {
    const path = join(qfiles, 'budget.md');
    writeFileSync(path, 'rent 900\n');
    const id = String(
      structured(await call(qai, 'notes__write_file', { path, content: 'rent 1900\n' })).pending_id,
    );
    const v = await alice.view(id, (x) => x.preview?.status === 'ready', 'previewed');
    expect(await ask(alice, { type: 'approve', id, version: v.version })).toMatchObject({ ok: true });
    const half = await bob.view(id, (x) => (x.approvals ?? []).length === 1, 'one approval');
    expect(await ask(bob, { type: 'approve', id, version: half.version })).toMatchObject({ ok: true });
    await alice.view(id, (x) => x.status === 'SUCCEEDED', 'written');
    expect(readFileSync(path, 'utf8')).toBe('rent 1900\n');

    const answer = await ask(alice, { type: 'revert', id });
    expect(answer.type).toBe('revert');
    const waiting = await bob.view(
      answer.id,
      (x) => x.state === 'awaiting_review' && (x.approvals ?? []).length === 1,
      'the revert with one approval',
    );
    expect(waiting).toMatchObject({
      client: 'owner:owner',
      revert_of: id,
      approvals_needed: 2,
      approvals: [{ by: 'owner' }],
    });
    expect(readFileSync(path, 'utf8')).toBe('rent 1900\n');
    // The same owner cannot be both approvals.
    const again = await ask(alice, { type: 'approve', id: answer.id, version: waiting.version });
    expect(again).toMatchObject({ ok: false });
    expect(await ask(bob, { type: 'approve', id: answer.id, version: waiting.version })).toMatchObject({
      ok: true,
    });
    await bob.view(answer.id, (x) => x.status === 'SUCCEEDED', 'the revert ran');
    expect(readFileSync(path, 'utf8')).toBe('rent 900\n');
  });
});
