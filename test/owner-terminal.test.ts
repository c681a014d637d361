/**
 * The owner's terminal commands (contracts.md 1.1, 5) and the login exchange, against the real daemon:
 * `list`, `approve`, `deny --note`, `reconcile`, their exit codes and messages, and `POST /login`.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { callTool, mcpClient, ownerCatalog, queue, readMarks, upgradeStatus } from './helpers/owner.js';
import { openPanelSocket, panelProtocols } from './helpers/panel.js';

let d: RunningDaemon;
let ai: Client;
let markFile: string;

function marks(): string[] {
  return readMarks(markFile);
}

beforeAll(async () => {
  const dataDir = makeDataDir('ogf-owner-term-');
  markFile = join(dataDir, 'marks.txt');
  d = await startDaemon({ dataDir, config: ownerCatalog(markFile, { review_timeout_s: 600 }) });
  ai = await mcpClient(d);
});

afterAll(async () => {
  await ai?.close();
  await d?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

describe('terminal owner commands', () => {
  it('list shows waiting commands with their argv; approve launches; a second approve is AlreadyDecided', async () => {
    const id = await queue(ai, 'mark', { word: 'terminal' }, 'from the terminal test');
    const list = await runCli(['list', '--data-dir', d.dataDir]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(id);
    expect(list.stdout).toContain('PENDING');
    expect(list.stdout).toContain('terminal');
    expect(list.stdout).toContain('from the terminal test');
    const ok = await runCli(['approve', id, '--data-dir', d.dataDir]);
    expect(ok).toMatchObject({ code: 0, stderr: '' });
    expect(ok.stdout).toContain(`approved ${id}`);
    await waitFor(() => marks().includes('terminal'), 'the launch');
    const again = await runCli(['approve', id], { OGF_BROKER_DATA_DIR: d.dataDir });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^ogf-broker: AlreadyDecided: /);
    const all = await runCli(['list', '--all', '--data-dir', d.dataDir]);
    expect(all.stdout).toContain(id);
  });

  it('deny --note reaches the AI; reconcile needs ERROR/UNKNOWN; unknown ids are NotFound', async () => {
    const id = await queue(ai, 'mark', { word: 'nope' });
    const r = await runCli(['deny', id, '--note', 'use the other file', '--data-dir', d.dataDir]);
    expect(r.code).toBe(0);
    expect(await callTool(ai, 'await_command_result', { pending_id: id, wait_seconds: 0 })).toMatchObject({
      status: 'DENIED',
      owner_note: 'use the other file',
    });
    const rec = await runCli(['reconcile', id, '--outcome', 'delivered', '--data-dir', d.dataDir]);
    expect(rec.code).toBe(1);
    expect(rec.stderr).toMatch(/^ogf-broker: NotReconcilable: /);
    const nf = await runCli(['deny', 'c_nosuchcommand', '--data-dir', d.dataDir]);
    expect(nf.code).toBe(1);
    expect(nf.stderr).toMatch(/^ogf-broker: NotFound: /);
  });

  it('[c3.2.bad-input] bad flags exit 2 with one line naming the flag', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['approve', '--bogus', 'x'], /--bogus/],
      [['approve'], /^ID: /],
      [['approve', 'a b'], /^ID: /],
      [['reconcile', 'c_abcdefgh'], /^--outcome: /],
      [['reconcile', 'c_abcdefgh', '--outcome', 'maybe'], /^--outcome: .*delivered, not_delivered/],
      [['deny', 'c_abcdefgh', '--note'], /^--note: /],
      [['list', '--all=yes'], /^--all: /],
      [['list', 'extra'], /unexpected argument/],
    ];
    for (const [args, re] of cases) {
      const r = await runCli(args, { OGF_BROKER_DATA_DIR: d.dataDir });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      // Every error line starts `ogf-broker: ` (contract 17).
      expect(r.stderr, args.join(' ')).toMatch(/^ogf-broker: /);
      expect(r.stderr.replace(/^ogf-broker: /, ''), args.join(' ')).toMatch(re);
    }
  });

  it('exits 1 with a clear message when no daemon runs or the token is wrong', async () => {
    const empty = makeDataDir('ogf-owner-none-');
    try {
      const r = await runCli(['list', '--data-dir', empty]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/no daemon is running/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    const wrong = await runCli(['list', '--data-dir', d.dataDir], { OGF_BROKER_OWNER_TOKEN: 'x'.repeat(43) });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/refused the owner token/);
  });
});

describe('[c5.login] login', () => {
  const post = (body: string, headers: Record<string, string> = { 'Content-Type': 'application/json' }) =>
    fetch(`${d.url}/login`, { method: 'POST', headers, body });

  it('without a session, / is a login page holding no command data', async () => {
    const id = await queue(ai, 'mark', { word: 'secretdata' });
    const page = await (await fetch(`${d.url}/`)).text();
    expect(page).toContain('login');
    expect(page).not.toContain(id);
    expect(page).not.toContain('data-pending-id');
    expect(page).not.toContain('secretdata');
  });

  it('[c5.owner-key] exchanges the token for an HttpOnly SameSite=Strict cookie and a panel key, which together open the socket', async () => {
    const r = await post(JSON.stringify({ token: d.ownerToken }));
    expect(r.status).toBe(200);
    const cookie = r.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Path=\//);
    expect(cookie).not.toContain(d.ownerToken);
    const { key } = (await r.json()) as { key: string };
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const pair = cookie.split(';')[0]!;
    const panel = await fetch(`${d.url}/`, { headers: { Cookie: pair } });
    expect(panel.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
    expect(await panel.text()).toContain('/ui/app.js');
    const o = await openPanelSocket(d, { cookie: pair, key });
    expect(o.frames[0]?.type).toBe('hello');
    await o.close();
    const protocol = { 'Sec-WebSocket-Protocol': panelProtocols(key).join(', ') };
    expect(await upgradeStatus(d, { Cookie: pair, ...protocol, Origin: 'http://evil.example' })).toBe(403);
    expect(await upgradeStatus(d, { Cookie: pair, Origin: d.url })).toBe(401);
    const probe = (headers: Record<string, string>) =>
      fetch(`${d.url}/owner/session`, { headers }).then((x) => x.status);
    expect(await probe({ Cookie: pair, 'X-OGF-Owner-Key': key })).toBe(200);
    expect(await probe({ Cookie: pair })).toBe(401);
    expect(d.stderr()).not.toContain(key);
  });

  it('[c5.login-throttle] refuses a wrong token (401); the right token right after is accepted: no lockout', async () => {
    expect((await post('{"token":"not-the-token-not-the-token-not-the"}')).status).toBe(401);
    expect((await post(JSON.stringify({ token: d.ownerToken }))).status).toBe(200);
    expect(d.stderr()).not.toContain(d.ownerToken);
  });

  it('never takes the token from a query string', async () => {
    for (const path of [`/login?token=${d.ownerToken}`, `/?token=${d.ownerToken}`]) {
      const r = await fetch(`${d.url}${path}`);
      expect(r.headers.get('set-cookie')).toBeNull();
      expect(await r.text()).not.toContain('data-pending-id');
    }
    expect(await upgradeStatus(d, {})).toBe(401);
  });

  it('refuses a non-JSON body and a foreign Origin', async () => {
    expect(
      (await post(`token=${d.ownerToken}`, { 'Content-Type': 'application/x-www-form-urlencoded' })).status,
    ).toBe(415);
    const foreign = await post(JSON.stringify({ token: d.ownerToken }), {
      'Content-Type': 'application/json',
      Origin: 'http://evil.example',
    });
    expect(foreign.status).toBe(403);
    expect((await post(JSON.stringify({ token: 'x'.repeat(10_000) }))).status).toBe(413);
  });
});
