/**
 * Contract 12 against our misbehaving test upstream (test/fixtures/test-upstream.mjs, mode `previews`):
 * a read tool not annotated read-only is never called (`PreviewUnavailable`), a read that says the file does
 * not exist is a new file, one that floods (2 MiB), answers garbage, hangs (10 s, then cancelled) or whose
 * upstream is down fails the preview in words — never blocking a decision; a decision cancels a preview
 * call in flight; a grant's approval makes no preview call; `append` diffs the current content plus the
 * appended text; and at most 4 preview calls run at once per upstream. Real daemon, real upstream
 * processes over stdio, real SDK client over HTTP, real owner socket.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { call, httpClient, type McpClient, structured } from './helpers/mcp.js';
import { type Frame, OwnerSocket } from './helpers/owner.js';
import { TEST_UPSTREAM } from './helpers/upstreams.js';

const dir = mkdtempSync(join(tmpdir(), 'ogf-previews-faults-'));
const log = (name: string) => join(dir, `${name}.log`);
const diff = (read: string, mode = 'replace') => ({
  kind: 'file_diff',
  read,
  path_arg: 'path',
  content_arg: 'content',
  mode,
});
const upstream = (name: string, mode: string, previews: Record<string, unknown>) => ({
  argv: [process.execPath, TEST_UPSTREAM, mode, log(name)],
  wait_seconds: 0,
  previews,
});

let d: RunningDaemon;
let ai: McpClient;
let owner: OwnerSocket;

/**
 * What the upstream `name` logged, one JSON object a line: its own instance in its log file, its preview's
 * instance (confined, nothing writable: contract 21) on stderr, which the daemon logs as upstream_stderr.
 */
function logged(name: string): Array<Record<string, unknown>> {
  const own = existsSync(log(name)) ? readFileSync(log(name), 'utf8').split('\n').filter(Boolean) : [];
  const preview = d
    .stderr()
    .split('\n')
    .filter((l) => l.includes('"event":"upstream_stderr"'))
    .map((l) => JSON.parse(l) as { upstream: string; line: string })
    .filter((e) => e.upstream === name && e.line.startsWith('record (not written: '))
    .map((e) => e.line.slice(e.line.indexOf(') ') + 2));
  return [...own, ...preview].map((l) => JSON.parse(l) as Record<string, unknown>);
}

beforeAll(async () => {
  d = await startDaemon({
    config: {
      upstreams: {
        t: upstream('t', 'previews', { put: diff('peek'), put_rw: diff('peek_rw') }),
        ta: upstream('ta', 'previews', { put: diff('peek', 'append') }),
        gate: upstream('gate', 'previews', { put: diff('peek') }),
        td: upstream('td', 'previews-once', { put: diff('peek') }),
      },
    },
  });
  ai = await httpClient(`${d.url}/mcp`, d.mcpToken);
  await waitFor(
    async () => {
      const names = (await ai.listTools()).tools.map((t) => t.name);
      return ['t__put', 'ta__put', 'gate__put', 'td__put'].every((n) => names.includes(n));
    },
    'every test upstream listed',
    30_000,
  );
  owner = await OwnerSocket.open(d);
});

afterAll(async () => {
  await owner?.close();
  await ai?.close();
  await d?.stop();
});

async function queued(tool: string, args: Record<string, unknown>): Promise<string> {
  const r = structured(await call(ai, tool, args));
  expect(r.status).toBe('PENDING');
  return String(r.pending_id);
}

function settled(id: string, timeoutMs = 20_000): Promise<Frame> {
  return owner
    .waitFor(
      (f) =>
        f.type === 'upsert' && f.command.id === id && ['ready', 'failed'].includes(f.command.preview?.status),
      `${id}'s preview`,
      timeoutMs,
    )
    .then((f) => f.command as Frame);
}

async function deny(v: Frame): Promise<void> {
  expect(await owner.request({ type: 'deny', id: v.id, version: v.version })).toMatchObject({ ok: true });
}

describe('previews from a misbehaving upstream (contract 12)', () => {
  it('[c12.readonly] a read tool not annotated read-only is never called', async () => {
    const id = await queued('t__put_rw', { path: 'rw.txt', content: 'x\n' });
    const v = await settled(id);
    expect(v.preview).toMatchObject({ kind: 'file_diff', status: 'failed' });
    expect(v.preview.error).toBe('PreviewUnavailable: peek_rw is not read-only');
    expect(logged('t').some((e) => e.call === 'peek_rw')).toBe(false);
    await deny(v);
  });

  it('[c12.readonly] …while the same preview through a read-only read is made', async () => {
    const id = await queued('t__put', { path: 'plain.txt', content: '# plain.txt\nalpha\ngamma\n' });
    const v = await settled(id);
    expect(v.preview.status).toBe('ready');
    expect(v.preview.diff).toContain('-beta\n+gamma\n');
    // The preview instance logs on its stderr, a pipe read beside its answer: wait for the line.
    await waitFor(
      () => logged('t').some((e) => e.call === 'peek' && (e.arguments as Frame)?.path === 'plain.txt'),
      "the preview instance's read of plain.txt in its log",
    );
    expect(logged('t').filter((e) => e.call === 'peek')).toContainEqual(
      expect.objectContaining({ arguments: { path: 'plain.txt' } }),
    );
    await deny(v);
  });

  it('[c12.enoent] a read saying the file does not exist is a new file', async () => {
    const id = await queued('t__put', { path: 'missing.txt', content: 'one\n' });
    const v = await settled(id);
    expect(v.preview).toMatchObject({ status: 'ready', new_file: true });
    expect(v.preview.diff).toBe('--- /dev/null\n+++ missing.txt\n@@ -0,0 +1,1 @@\n+one\n');
    await deny(v);
  });

  it('[c12.read-fails] a refused read, a flood and garbage fail the preview in words', async () => {
    const denied = await queued('t__put', { path: 'denied.txt', content: 'x' });
    const flood = await queued('t__put', { path: 'flood.txt', content: 'x' });
    const garbage = await queued('t__put', { path: 'garbage.txt', content: 'x' });
    const [a, b, c] = await Promise.all([settled(denied), settled(flood), settled(garbage)]);
    expect(a.preview.status).toBe('failed');
    expect(a.preview.error).toMatch(/refused to read the file: Access denied/);
    expect(b.preview.status).toBe('failed');
    expect(b.preview.error).toMatch(/more than 1 MiB/);
    expect(c.preview.status).toBe('failed');
    // The server's SDK refuses to send a result without content: either way, failed in words.
    expect(c.preview.error).toMatch(/answered an error|with a tool result/);
    expect(JSON.stringify(b)).not.toContain('xxxxxxxx');
    for (const v of [a, b, c]) await deny(v);
  });

  it('[c12.append] append diffs the current content plus the appended text', async () => {
    const id = await queued('ta__put', { path: 'notes.md', content: 'delta\n' });
    const v = await settled(id);
    expect(v.preview.diff).toBe(
      '--- notes.md\n+++ notes.md\n@@ -1,3 +1,4 @@\n # notes.md\n alpha\n beta\n+delta\n',
    );
    await deny(v);
  });

  it('[c12.decided] a decision cancels the preview call in flight; nothing is recorded after it', async () => {
    const id = await queued('t__put', { path: 'hang-1.txt', content: 'x' });
    const pending = await owner.view(id, (v) => v.preview?.status === 'pending', 'pending preview');
    await waitFor(
      () => logged('t').some((e) => e.call === 'peek' && (e.arguments as Frame)?.path === 'hang-1.txt'),
      'the peek sent',
    );
    await deny(pending);
    await waitFor(
      () => logged('t').some((e) => e.cancelled === 'peek' && e.path === 'hang-1.txt'),
      'the peek cancelled',
    );
    const final = await owner.view(id, (v) => v.status === 'DENIED', 'denied');
    expect(final.preview.status).toBe('pending');
  });

  it('[c12.timeout] a read that hangs fails after 10 s, and the decision was never blocked meanwhile', async () => {
    const id = await queued('t__put', { path: 'hang-2.txt', content: 'x' });
    const v = await settled(id, 30_000);
    expect(v.preview.error).toMatch(/did not answer the preview call within 10 s/);
    // The call was cancelled at its deadline (the upstream heard notifications/cancelled).
    await waitFor(
      () => logged('t').some((e) => e.cancelled === 'peek' && e.path === 'hang-2.txt'),
      'the peek cancelled',
    );
    await deny(v);
  }, 40_000);

  it('[c12.granted-no-preview] [c20.granted] a command approved by a grant gets no preview while waiting; one at launch, which the grant approves', async () => {
    const g = await owner.request({ type: 'grant', command: 't__put', client: '*', ttl_s: 900 });
    expect(g.ok).toBe(true);
    const r = structured(await call(ai, 't__put', { path: 'granted.txt', content: 'x' }));
    await waitFor(
      () => logged('t').some((e) => e.call === 'put' && (e.arguments as Frame)?.path === 'granted.txt'),
      'the granted put',
    );
    expect(r.pending_id ?? 'answered').toBeDefined();
    // It never awaited review, so no preview was made for the owners; contract 20 makes exactly one just
    // before it is sent — the preview its grant approves, kept on the command with `running`.
    const peeks = logged('t').filter(
      (e) => e.call === 'peek' && (e.arguments as Frame)?.path === 'granted.txt',
    );
    expect(peeks).toHaveLength(1);
    const done = await owner.view(String(r.pending_id), (v) => v.status === 'SUCCEEDED', 'granted put done');
    expect(done.preview).toMatchObject({ kind: 'file_diff', status: 'ready' });
    expect(await owner.request({ type: 'revoke', grant_id: g.grant.id })).toMatchObject({ ok: true });
  });

  it('[c12.slots] at most 4 preview calls run at once per upstream', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await queued('gate__put', { path: `gate-${i}.txt`, content: 'x' }));
    // Four reads start and hold their slots until the test releases them.
    await waitFor(
      () => logged('gate').filter((e) => e.peek_start !== undefined).length >= 4,
      'four reads in flight',
    );
    writeFileSync(`${log('gate')}.release`, '');
    const views = await Promise.all(ids.map((id) => settled(id)));
    for (const v of views) expect(v.preview.status).toBe('ready');
    const starts = logged('gate').filter((e) => e.peek_start !== undefined);
    expect(starts).toHaveLength(6);
    expect(Math.max(...starts.map((e) => Number(e.in_flight)))).toBe(4);
    for (const v of views) await deny(v);
  });

  it('[c12.upstream-down] an upstream that is down gives a failed preview, and the owner can still decide', async () => {
    // `die` ends the upstream; previews-once exits at every later start, so it stays down.
    const die = await queued('td__die', { text: 'bye' });
    const seen = await owner.view(die, () => true, 'die seen');
    expect(await owner.request({ type: 'approve', id: die, version: seen.version })).toMatchObject({
      ok: true,
    });
    await waitFor(async () => {
      const s = structured(await call(ai, 'list_commands', {}));
      return (
        (s.upstreams as Array<{ name: string; connected: boolean }>).find((u) => u.name === 'td')
          ?.connected === false
      );
    }, 'td down');
    const id = await queued('td__put', { path: 'plain.txt', content: 'x' });
    const v = await settled(id);
    expect(v.preview).toMatchObject({ status: 'failed' });
    expect(v.preview.error).toMatch(/not connected/);
    await deny(v);
  });
});
