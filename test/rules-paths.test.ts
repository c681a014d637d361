/**
 * Contract 11 (v4), issue 35 finding 1: a folder rule as the AI would attack it, through the real daemon and
 * the real filesystem server (which resolves a relative path against its root, clamps `/..` to `/`, maps a
 * Unicode spelling to the entry on disk and follows symbolic links that stay inside its roots).
 *
 * The deny side: `docs/rules.md`'s own `no-secrets` rule with `trust_read_only_hint` — every spelling of a
 * path into `.private/` (and into `café/`) is denied or waits for the owners; none is read by
 * `policy:read_only`. The allow side: an allow rule and a `when` grant on a folder never let a write leave it
 * through a link, an NFD spelling of a link's name, or a relative path.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningDaemon } from './helpers/daemon.js';
import { call, type McpClient, structured } from './helpers/mcp.js';
import { type Frame, OwnerSocket } from './helpers/owner.js';
import { initializeBody, postMcp } from './helpers/raw-mcp.js';
import { notesBehindGate } from './helpers/upstreams.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'ogf-rules-paths-')));
const SECRET = 'the-private-key-7f3a';
const CAFE_SECRET = 'the-cafe-secret-91bc';
for (const dir of ['.private', 'café', 'drafts', 'granted', 'outside']) mkdirSync(join(root, dir));
writeFileSync(join(root, '.private', 'key'), SECRET);
writeFileSync(join(root, 'café', 'secret'), CAFE_SECRET);
// Links inside the allowed folders that lead out of them (still inside the server's root, so it follows them).
symlinkSync(join(root, 'outside'), join(root, 'drafts', 'link'));
symlinkSync(join(root, 'outside'), join(root, 'drafts', 'lién'));
symlinkSync(join(root, 'outside'), join(root, 'granted', 'link'));
// A link from an ordinary folder into the private one.
symlinkSync(join(root, '.private'), join(root, 'drafts', 'priv'));

const RULES = [
  {
    id: 'no-secrets',
    when: `upstream == 'notes' && path_under(args.path, '${root}/.private')`,
    decision: 'deny',
    note: 'that folder is private',
  },
  { id: 'no-cafe', when: `upstream == 'notes' && path_under(args.path, '${root}/café')`, decision: 'deny' },
  {
    id: 'drafts',
    when: `command == 'notes__write_file' && path_under(args.path, '${root}/drafts')`,
    decision: 'allow',
  },
];

let d: RunningDaemon;
let ai: McpClient;
let owner: OwnerSocket;

beforeAll(async () => {
  ({ d, ai } = await notesBehindGate(
    root,
    { wait_seconds: 0, trust_read_only_hint: true },
    { rules: RULES },
  ));
  owner = await OwnerSocket.open(d);
}, 60_000);

afterAll(async () => {
  await owner?.close();
  await d?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** A call as the AI makes it; one that was approved at once is awaited to its end. */
async function attempt(tool: string, args: Record<string, unknown>): Promise<Frame> {
  const r = structured(await call(ai, tool, args, { timeout: 60_000 }));
  if (r.status !== 'PENDING' || r.phase === 'awaiting_review') return r;
  return structured(await call(ai, 'await_command_result', { pending_id: r.pending_id, wait_seconds: 30 }));
}

/** Denied by a rule, or waiting for the owners: never approved without them, never the secret. */
function heldBack(r: Frame, secret: string, what: string): void {
  expect(JSON.stringify(r), what).not.toContain(secret);
  const denied = r.status === 'DENIED' && r.reason === 'PolicyDenied';
  const waits = r.status === 'PENDING' && r.phase === 'awaiting_review';
  const refused = r.status === undefined; // refused before queueing (the tool's schema)
  expect(denied || waits || refused, `${what}: ${JSON.stringify(r).slice(0, 400)}`).toBe(true);
}

describe('[c11.path-rule-spelling] a deny rule on a folder holds against every spelling (trust_read_only_hint on)', () => {
  it('the plain absolute path is denied (the control)', async () => {
    const r = await attempt('notes__read_text_file', { path: `${root}/.private/key` });
    expect(r).toMatchObject({ status: 'DENIED', reason: 'PolicyDenied' });
  });

  it.each([
    ['relative', '.private/key'],
    ['relative with ./', './.private/key'],
    ['relative through drafts/..', 'drafts/../.private/key'],
    ['.. climbing above /', `/../..${root}/.private/key`],
    ['.. climbing above / in the middle', `/tmp/../../..${root}/.private/key`],
    ['repeated slashes', `${root}//.private///key`],
    ['a NUL', `${root}/.private/key\0`],
    ['a link from drafts/ into .private/', `${root}/drafts/priv/key`],
    ['a relative link from drafts/ into .private/', 'drafts/priv/key'],
  ])('%s (%j): never read by policy:read_only', async (what, path) => {
    heldBack(await attempt('notes__read_text_file', { path }), SECRET, what);
  });

  it('an NFD spelling of a folder named in NFC (café) is denied', async () => {
    for (const path of [`${root}/cafe\u0301/secret`, `${root}/caf\u00e9/secret`]) {
      const r = await attempt('notes__read_text_file', { path });
      expect(r, JSON.stringify(path)).toMatchObject({ status: 'DENIED', reason: 'PolicyDenied' });
    }
  });

  it('an array or a number for the path never reaches the server approved', async () => {
    for (const path of [[`${root}/.private/key`], ['.private/key'], 7]) {
      heldBack(await attempt('notes__read_text_file', { path }), SECRET, JSON.stringify(path));
    }
  });

  it('duplicate JSON keys: the rule reads the value the server is sent', async () => {
    const init = await postMcp(d.info.mcp_url, d.mcpToken, initializeBody('dup'));
    expect(init.status).toBe(200);
    const session = {
      'mcp-session-id': String(init.headers['mcp-session-id']),
      'mcp-protocol-version': '2025-06-18',
    };
    await postMcp(
      d.info.mcp_url,
      d.mcpToken,
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      session,
    );
    for (const [first, second] of [
      [`${root}/drafts/none`, '.private/key'],
      ['.private/key', `${root}/drafts/none`],
      [`${root}/drafts/none`, `${root}/.private/key`],
    ]) {
      const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notes__read_text_file","arguments":{"path":${JSON.stringify(first)},"path":${JSON.stringify(second)}}}}`;
      const res = await postMcp(d.info.mcp_url, d.mcpToken, body, session);
      expect(res.status).toBe(200);
      expect(res.body).toContain('pending_id');
      expect(res.body).not.toContain(SECRET);
      const id = /"pending_id\\?":\\?"([^"\\]+)/.exec(res.body)?.[1];
      expect(id).toBeDefined();
      const r = structured(
        await call(ai, 'await_command_result', { pending_id: id, wait_seconds: 3 }).catch(() => ({
          content: [],
        })),
      );
      expect(JSON.stringify(r)).not.toContain(SECRET);
    }
  });
});

describe('[c11.path-rule-links] an allow rule or a when grant on a folder does not reach out of it', () => {
  it('the plain write under drafts/ is allowed by the rule (the control)', async () => {
    const r = await attempt('notes__write_file', { path: `${root}/drafts/ok.md`, content: 'ok' });
    expect(r.status).toBe('SUCCEEDED');
    expect(existsSync(join(root, 'drafts', 'ok.md'))).toBe(true);
  });

  it.each([
    ['a link out of drafts/', `${root}/drafts/link/x1`, 'x1'],
    ['an NFD spelling of a link named in NFC', `${root}/drafts/lie\u0301n/x2`, 'x2'],
    ['a link, relative', 'drafts/link/x3', 'x3'],
    ['relative inside drafts/', 'drafts/x4', 'x4'],
  ])('%s (%j) waits for the owners', async (what, path, name) => {
    const r = await attempt('notes__write_file', { path, content: 'escaped' });
    expect(r, what).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
    expect(existsSync(join(root, 'outside', name))).toBe(false);
  });

  it('a when grant on granted/ does not approve a write through its link', async () => {
    const g = await owner.request({
      type: 'grant',
      command: 'notes__write_file',
      client: '*',
      when: `path_under(args.path, '${root}/granted')`,
      ttl_s: 600,
    });
    expect(g.ok, JSON.stringify(g)).toBe(true);
    const ok = await attempt('notes__write_file', { path: `${root}/granted/ok.md`, content: 'ok' });
    expect(ok.status).toBe('SUCCEEDED');
    for (const [path, name] of [
      [`${root}/granted/link/g1`, 'g1'],
      ['granted/link/g2', 'g2'],
      ['granted/g3', 'g3'],
    ] as const) {
      const r = await attempt('notes__write_file', { path, content: 'escaped' });
      expect(r, path).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
      expect(existsSync(join(root, 'outside', name))).toBe(false);
    }
  });
});
