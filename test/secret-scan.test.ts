/**
 * Secret scan (issue 6 item 5; contracts.md 1.2, 3.3, 4): a full end-to-end run with the OGF bridge on —
 * cues submitted over MCP and delivered (owner approval, the real bridge client, an app-side endpoint
 * that is slow to apply so the child can be sampled), denied, expired and refused by the app, a catalog
 * command, a second client's token — then every place a secret could land is read as raw bytes:
 * the data dir (broker.db, -wal, -shm, every other file), the daemon's stdout and stderr, every owner
 * frame, every MCP result, and `/proc/<pid>/cmdline` and `/proc/<pid>/environ` of every process while
 * the bridge client runs. None may hold a session UUID (in any case, with or without dashes) or a token.
 *
 * The only allowed places: `owner.token` and `mcp.token` hold their tokens (contract 1.2), and the
 * daemon's stdout carries the owner login URL line (contract 5: printed at start, for the person).
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BridgeEndpoint } from '../bridge-client/endpoint.js';
import { CLI, makeDataDir, ROOT, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { httpClient, makeClientToken } from './helpers/mcp.js';
import { OwnerSocket } from './helpers/owner.js';

/** Every form a secret could be written in: as given, lower, upper, and a UUID without dashes. */
function forms(secret: string): string[] {
  const out = new Set([secret, secret.toLowerCase(), secret.toUpperCase()]);
  if (/^[0-9a-f-]{36}$/i.test(secret)) {
    out.add(secret.replace(/-/g, '').toLowerCase());
    out.add(secret.replace(/-/g, '').toUpperCase());
  }
  return [...out];
}

function findIn(haystack: Buffer | string, secrets: Record<string, string>): string[] {
  const buf = typeof haystack === 'string' ? Buffer.from(haystack) : haystack;
  const hits: string[] = [];
  for (const [name, s] of Object.entries(secrets)) {
    for (const f of forms(s)) if (buf.includes(Buffer.from(f))) hits.push(`${name} (${f.slice(0, 6)}…)`);
  }
  return hits;
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

interface ProcSample {
  pid: string;
  cmdline: string;
  environ: Buffer;
}

/** Every process we may read: its argv and environment, raw. */
function sampleProc(): ProcSample[] {
  const out: ProcSample[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      out.push({
        pid,
        cmdline: readFileSync(`/proc/${pid}/cmdline`).toString().replace(/\0/g, ' '),
        environ: readFileSync(`/proc/${pid}/environ`),
      });
    } catch {
      // Gone, or another user's: skip.
    }
  }
  return out;
}

describe('[c3.3.session-secret] [c1.2.tokens] [c4.child-env] secret scan after a full end-to-end run with the bridge on', () => {
  const SESSION = randomUUID();
  const OTHER_SESSIONS = [randomUUID(), randomUUID(), randomUUID()];
  /** Sent through `ogf-broker mcp-stdio` (client `local`), then denied. */
  const STDIO_SESSION = randomUUID();
  let server: Server;
  let endpoint: BridgeEndpoint;
  let d: RunningDaemon;
  let owner: OwnerSocket;
  let ai: Client;
  let otherToken: string;
  const results: string[] = [];
  const samples: ProcSample[][] = [];
  let applying = false;

  beforeAll(async () => {
    // The app side: slow to apply (the ack waits for apply), so the bridge client runs long enough to sample.
    endpoint = new BridgeEndpoint({
      sessionId: SESSION,
      apply: async () => {
        applying = true;
        const end = Date.now() + 1500;
        while (Date.now() < end) {
          samples.push(sampleProc());
          await new Promise((r) => setTimeout(r, 100));
        }
        applying = false;
      },
    });
    server = createServer((_q, r) => r.writeHead(404).end());
    server.on('upgrade', (req, socket, head) => endpoint.handleUpgrade(req, socket, head));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const bridgeUrl = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ogf-bridge`;
    const dataDir = makeDataDir('ogf-secret-');
    d = await startDaemon({
      dataDir,
      config: {
        review_timeout_s: 10,
        ogf_bridge: { url: bridgeUrl, delivery_timeout_ms: 4000 },
        commands: {
          env: {
            description: 'Print the environment it was given',
            argv: [process.execPath, '-e', 'process.stdout.write(JSON.stringify(process.env))'],
            timeout_s: 30,
          },
        },
      },
    });
    otherToken = await makeClientToken(d, 'other');
    owner = await OwnerSocket.open(d);
    ai = await httpClient(d.info.mcp_url, d.mcpToken);
  });

  afterAll(async () => {
    await ai?.close();
    await owner?.close();
    if (d && d.child.exitCode === null) await d.stop();
    await endpoint?.close();
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  });

  async function tool(name: string, args: Record<string, unknown>, client: Client = ai) {
    const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
    results.push(JSON.stringify(r));
    return r.structuredContent as Record<string, unknown>;
  }
  const cue = (session: string, extra: Record<string, unknown> = {}) => ({
    session_id: session,
    action: 'wave',
    emotion: 'happy',
    intensity: 0.7,
    gaze: 'user',
    ttl_ms: 1200,
    message: 'hello there',
    wait_seconds: 0,
    ...extra,
  });
  async function approve(id: string) {
    const v = await owner.upsert(id, () => true, `upsert of ${id}`);
    const reply = await owner.request({ type: 'approve', id, version: v.version });
    expect(reply.ok).toBe(true);
  }

  it('runs delivered, denied, expired, app-refused cues and a catalog command to their ends', async () => {
    // Delivered: the UUID sent upper-case (it is lower-cased on entry and still must appear nowhere).
    const delivered = await tool('ogf_cue', cue(SESSION.toUpperCase()));
    const expiring = await tool('ogf_cue', cue(OTHER_SESSIONS[1]!, { action: 'nod' }));
    const denied = await tool('ogf_cue', cue(OTHER_SESSIONS[0]!, { message: null }));
    const refused = await tool('ogf_cue', cue(OTHER_SESSIONS[2]!, { action: 'celebrate' }));
    const env = await tool('run_command_wait', { command: 'env', args: {}, wait_seconds: 0 });

    await approve(String(delivered.pending_id));
    await waitFor(() => applying, 'the app to start applying the cue', 20_000);
    const done = await tool('await_command_result', { pending_id: delivered.pending_id, wait_seconds: 30 });
    expect(done).toMatchObject({ status: 'SUCCEEDED', delivery: { cue_id: delivered.pending_id } });

    const v = await owner.upsert(String(denied.pending_id), () => true, 'denied upsert');
    expect((await owner.request({ type: 'deny', id: v.id, version: v.version, note: 'not now' })).ok).toBe(
      true,
    );
    expect(
      await tool('await_command_result', { pending_id: denied.pending_id, wait_seconds: 5 }),
    ).toMatchObject({
      status: 'DENIED',
      reason: 'OwnerDenied',
    });

    await approve(String(refused.pending_id));
    const r = await tool('await_command_result', { pending_id: refused.pending_id, wait_seconds: 30 });
    expect(r).toMatchObject({ status: 'ERROR', reason: 'BridgeRejected' });
    expect(
      (
        await owner.request({
          type: 'reconcile',
          id: refused.pending_id,
          outcome: 'not_delivered',
          note: 'seen',
        })
      ).ok,
    ).toBe(true);

    await approve(String(env.pending_id));
    const e = await tool('await_command_result', { pending_id: env.pending_id, wait_seconds: 30 });
    expect(e.status).toBe('SUCCEEDED');
    // [c4.child-env]: the child saw PATH/HOME/LANG only.
    const childEnv = Object.keys(JSON.parse(String(e.stdout)) as Record<string, string>);
    expect(childEnv).toContain('PATH');
    expect(
      childEnv.every((k) => ['HOME', 'LANG', 'PATH'].includes(k)),
      childEnv.join(','),
    ).toBe(true);

    const x = await tool('await_command_result', { pending_id: expiring.pending_id, wait_seconds: 20 });
    expect(x).toMatchObject({ status: 'DENIED', reason: 'ReviewExpired' });

    // The other client cannot see ours, and its own calls are scanned too.
    const other = await httpClient(d.info.mcp_url, otherToken);
    await tool('await_command_result', { pending_id: delivered.pending_id, wait_seconds: 0 }, other);
    await tool('list_commands', {}, other);
    await other.close();
    // Through the stdio front end too: its argv and environment are sampled while it runs.
    const stdio = new Client({ name: 'secret-scan-stdio', version: '1.0.0' });
    await stdio.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp-stdio', '--data-dir', d.dataDir],
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
        stderr: 'pipe',
      }),
    );
    const viaStdio = await tool('ogf_cue', cue(STDIO_SESSION, { gaze: 'away' }), stdio);
    samples.push(sampleProc());
    const sv = await owner.upsert(String(viaStdio.pending_id), () => true, 'stdio cue upsert');
    expect((await owner.request({ type: 'deny', id: sv.id, version: sv.version })).ok).toBe(true);
    expect(
      await tool('await_command_result', { pending_id: viaStdio.pending_id, wait_seconds: 5 }, stdio),
    ).toMatchObject({
      status: 'DENIED',
    });
    samples.push(sampleProc());
    await stdio.close();
    await owner.request({ type: 'history', limit: 500 });
  });

  it('the bridge client was sampled while it ran: no secret in any argv or environment, env reduced to PATH/HOME/LANG', () => {
    const all = samples.flat();
    const child = all.filter(
      // This daemon's bridge clients only (other suites may run their own in parallel).
      (p) => p.cmdline.includes('bridge-client/cli.js') && p.cmdline.includes(join(d.dataDir, 'run')),
    );
    expect(child.length, 'the bridge client was never seen running').toBeGreaterThan(0);
    expect(
      all.some((p) => p.cmdline.includes(' mcp-stdio ') && p.cmdline.includes(d.dataDir)),
      'the mcp-stdio front end was never sampled',
    ).toBe(true);
    const secrets = { SESSION, STDIO_SESSION, ownerToken: d.ownerToken, mcpToken: d.mcpToken, otherToken };
    for (const p of all) {
      expect(findIn(p.cmdline, secrets), `argv of pid ${p.pid}: ${p.cmdline.slice(0, 120)}`).toEqual([]);
      expect(findIn(p.environ, secrets), `environment of pid ${p.pid}: ${p.cmdline.slice(0, 120)}`).toEqual(
        [],
      );
    }
    for (const p of child) {
      const names = p.environ
        .toString()
        .split('\0')
        .filter(Boolean)
        .map((kv) => kv.split('=')[0]);
      expect(
        names.every((n) => ['PATH', 'HOME', 'LANG'].includes(n!)),
        names.join(','),
      ).toBe(true);
      expect(p.cmdline).toMatch(/deliver --session-file \S+\/run\/cue-[A-Za-z0-9_-]+\.json/);
    }
    process.stdout.write(
      `secret-scan: ${samples.length} /proc samples, ${child.length} of the bridge client\n`,
    );
  });

  it('no session UUID or token in MCP results, owner frames, daemon stderr, or stdout beyond the login URL line', () => {
    const secrets = {
      SESSION,
      session2: OTHER_SESSIONS[0]!,
      session3: OTHER_SESSIONS[1]!,
      session4: OTHER_SESSIONS[2]!,
      stdio: STDIO_SESSION,
      ownerToken: d.ownerToken,
      mcpToken: d.mcpToken,
      otherToken,
    };
    expect(results.length).toBeGreaterThan(8);
    for (const r of results) expect(findIn(r, secrets), r.slice(0, 200)).toEqual([]);
    expect(owner.raw.length).toBeGreaterThan(10);
    for (const f of owner.raw) expect(findIn(f, secrets), f.slice(0, 200)).toEqual([]);
    expect(findIn(d.stderr(), secrets)).toEqual([]);
    // Contract 5: the login URL is printed on stdout at start — the one sanctioned place for the owner token.
    const stdout = d.stdout().split('\n');
    const loginLines = stdout.filter((l) => l.includes('/login#token='));
    expect(loginLines).toHaveLength(1);
    expect(findIn(stdout.filter((l) => !l.includes('/login#token=')).join('\n'), secrets)).toEqual([]);
  });

  it('[c1.2.modes] after the run every file in the data dir is 0600 (broker.db-wal/-shm too), the dirs 0700', () => {
    const files = filesUnder(d.dataDir);
    expect(files.some((f) => f.endsWith('-wal'))).toBe(true);
    for (const f of files) expect([f, statSync(f).mode & 0o777]).toEqual([f, 0o600]);
    for (const dir of [d.dataDir, join(d.dataDir, 'run')])
      expect([dir, statSync(dir).mode & 0o777]).toEqual([dir, 0o700]);
  });

  it('no session UUID anywhere in the data dir, no token outside owner.token/mcp.token, run/ empty (running and after stop)', async () => {
    const scan = (when: string) => {
      const files = filesUnder(d.dataDir);
      expect(files.some((f) => f.endsWith('broker.db'))).toBe(true);
      for (const f of files) {
        const bytes = readFileSync(f);
        const base = f.slice(d.dataDir.length + 1);
        const sessions = {
          SESSION,
          s2: OTHER_SESSIONS[0]!,
          s3: OTHER_SESSIONS[1]!,
          s4: OTHER_SESSIONS[2]!,
          s5: STDIO_SESSION,
        };
        expect(findIn(bytes, sessions), `${when}: ${base}`).toEqual([]);
        const tokens: Record<string, string> = { otherToken };
        if (base !== 'owner.token') tokens.ownerToken = d.ownerToken;
        if (base !== 'mcp.token') tokens.mcpToken = d.mcpToken;
        expect(findIn(bytes, tokens), `${when}: ${base}`).toEqual([]);
      }
      expect(readdirSync(join(d.dataDir, 'run')), `${when}: session files left in run/`).toEqual([]);
      return files.map((f) => f.slice(d.dataDir.length + 1));
    };
    const running = scan('while running');
    expect(running.some((f) => f.endsWith('-wal'))).toBe(true);
    expect(await d.stop()).toBe(0);
    scan('after stop');
  });
});
