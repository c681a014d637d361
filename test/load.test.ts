/**
 * Load (issue 6 item 6): many concurrent MCP clients submitting and awaiting, five owner sockets racing
 * to approve everything, the reference avatar app acking the cues. Every waiter gets its own final
 * result, each command launches once however many owners approve it (rule 5), every owner sees every
 * change of every command in commit order (versions 1, 2, 3, ... with none skipped, rule 8), cues of the
 * one session never overlap (rule 6), and the daemon's memory settles back after the burst.
 *
 * `npm test` runs a small share (40 clients, 2 bursts); `npm run test:soak` runs the full size
 * (OGF_LOAD_CLIENTS=200, more bursts). Sizes come from the environment so both use this one file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exited, makeDataDir, ROOT, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { makeClientToken } from './helpers/mcp.js';
import { type Frame, OwnerSocket } from './helpers/owner.js';

const CLIENTS = Number(process.env.OGF_LOAD_CLIENTS ?? 40);
const BURSTS = Number(process.env.OGF_LOAD_BURSTS ?? 2);
const OWNERS = 5;
/** One client in this many sends a cue (cues of one session run one at a time); the rest a catalog command. */
const CUE_EVERY = 5;
const TIMEOUT = Math.max(240_000, CLIENTS * BURSTS * 3000);
/**
 * Clients per MCP token. Contract 3.2 (v2) lets one client hold 64 sessions and (1.3) 100 PENDING commands,
 * so a load of many AIs is many client tokens, as it would be in life, not 200 sessions of client `local`.
 */
const PER_TOKEN = 40;

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0);
}

/** Starts the reference avatar app on a free port; resolves its bridge URL and current session UUID. */
async function startAvatar(): Promise<{ child: ChildProcess; bridgeUrl: string; session: string }> {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'dist', 'examples', 'avatar-app', 'main.js'), '--port', '0'],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const m = await waitFor(
    () => /page (http\S+) bridge (ws\S+)/.exec(out) ?? undefined,
    'the avatar app ready line',
  );
  const state = (await (await fetch(new URL('/state', m[1]!))).json()) as { session_id: string };
  return { child, bridgeUrl: m[2]!, session: state.session_id };
}

async function connect(
  d: RunningDaemon,
  token: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'load', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(d.info.mcp_url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

/** Submits and awaits until final; returns the final result. PENDING only means "call again" (rule 7). */
async function submitAndAwait(client: Client, name: string, args: Record<string, unknown>): Promise<Frame> {
  const first = (await client.callTool({ name, arguments: { ...args, wait_seconds: 90 } }, undefined, {
    timeout: 120_000,
  })) as CallToolResult;
  let r = first.structuredContent as Frame;
  if (first.isError) throw new Error(`refused: ${JSON.stringify(first.content)}`);
  while (r.status === 'PENDING') {
    const next = (await client.callTool(
      { name: 'await_command_result', arguments: { pending_id: r.pending_id, wait_seconds: 90 } },
      undefined,
      { timeout: 120_000 },
    )) as CallToolResult;
    r = next.structuredContent as Frame;
  }
  return r;
}

describe(`[c5.load] ${CLIENTS} concurrent MCP clients, ${OWNERS} owners approving, the avatar app acking`, () => {
  let d: RunningDaemon;
  let avatar: Awaited<ReturnType<typeof startAvatar>>;
  let owners: OwnerSocket[] = [];
  let tokens: string[] = [];
  const rss: Array<{ when: string; kib: number }> = [];

  beforeAll(async () => {
    avatar = await startAvatar();
    d = await startDaemon({
      dataDir: makeDataDir('ogf-load-'),
      config: {
        ogf_bridge: { url: avatar.bridgeUrl, delivery_timeout_ms: 5000 },
        commands: {
          echo: {
            description: 'Print a word',
            argv: ['/bin/echo', '{word}'],
            params: { word: { type: 'string', max_length: 20, pattern: '^[a-z0-9]+$' } },
            timeout_s: 30,
          },
        },
      },
    });
    const extra = Math.ceil(CLIENTS / PER_TOKEN) - 1;
    tokens = [
      d.mcpToken,
      ...(await Promise.all(Array.from({ length: extra }, (_, k) => makeClientToken(d, `load${k}`)))),
    ];
    owners = await Promise.all(Array.from({ length: OWNERS }, () => OwnerSocket.open(d)));
    // Every owner approves whatever it sees awaiting review, racing the others (rule 5 under load).
    for (const o of owners) {
      o.ws.on('message', (data) => {
        const f = JSON.parse(String(data)) as Frame;
        if (f.type === 'upsert' && f.command.state === 'awaiting_review') {
          o.ws.send(
            JSON.stringify({
              type: 'approve',
              req_id: `a-${f.command.id}`,
              id: f.command.id,
              version: f.command.version,
            }),
          );
        }
      });
    }
  }, 60_000);

  afterAll(async () => {
    await Promise.all(owners.map((o) => o.close()));
    if (d) await d.stop();
    if (avatar) {
      avatar.child.kill('SIGTERM');
      await exited(avatar.child);
    }
  });

  async function burst(tag: string): Promise<Frame[]> {
    const conns = await Promise.all(
      Array.from({ length: CLIENTS }, (_, i) => connect(d, tokens[i % tokens.length]!)),
    );
    const results = await Promise.all(
      conns.map(({ client }, i) =>
        i % CUE_EVERY === 0
          ? submitAndAwait(client, 'ogf_cue', {
              session_id: avatar.session,
              action: 'nod',
              emotion: 'curious',
              intensity: 0.4,
              gaze: 'user',
              ttl_ms: 300,
              message: `${tag} ${i}`,
            })
          : submitAndAwait(client, 'run_command_wait', { command: 'echo', args: { word: `${tag}${i}` } }),
      ),
    );
    rss.push({ when: `${tag} peak`, kib: rssKiB(d.info.pid) });
    // Good citizens end their sessions (DELETE) so the daemon can free them at once.
    await Promise.all(
      conns.map(async ({ client, transport }) => {
        await transport.terminateSession().catch(() => {});
        await client.close();
      }),
    );
    results.forEach((r, i) => {
      if (i % CUE_EVERY === 0)
        expect(r, `cue ${i}`).toMatchObject({ status: 'SUCCEEDED', command: 'ogf.cue' });
      else expect(r, `command ${i}`).toMatchObject({ status: 'SUCCEEDED', stdout: `${tag}${i}\n` });
    });
    return results;
  }

  it(
    `[c2.rule-5] [c2.rule-6] [c2.rule-8] ${BURSTS} bursts: every waiter gets its final result; every owner sees every change in order`,
    async () => {
      await new Promise((r) => setTimeout(r, 1000));
      rss.push({ when: 'idle', kib: rssKiB(d.info.pid) });
      const all: Frame[] = [];
      for (let b = 0; b < BURSTS; b++) {
        all.push(...(await burst(`b${b}x`)));
        await new Promise((r) => setTimeout(r, 2000));
        rss.push({ when: `after burst ${b}`, kib: rssKiB(d.info.pid) });
      }
      const ids = all.map((r) => String(r.pending_id));
      expect(new Set(ids).size).toBe(CLIENTS * BURSTS);

      // Every owner: per id, versions 1, 2, 3, ... consecutively (every change seen, in commit order), ending final.
      const finalVersion = new Map<string, number>();
      for (const o of owners) {
        await waitFor(
          () =>
            ids.every((id) =>
              o.frames.some(
                (f) => f.type === 'upsert' && f.command.id === id && f.command.status !== 'PENDING',
              ),
            ),
          'every final upsert at every owner',
          30_000,
        );
        const seen = new Map<string, number[]>();
        for (const f of o.frames)
          if (f.type === 'upsert')
            seen.set(f.command.id, [...(seen.get(f.command.id) ?? []), f.command.version]);
        for (const id of ids) {
          const v = seen.get(id)!;
          expect(v, `versions of ${id}`).toEqual(v.map((_, i) => i + 1));
          if (finalVersion.has(id)) expect(v.length).toBe(finalVersion.get(id));
          else finalVersion.set(id, v.length);
        }
        // Rule 5: however many owners approved, each command was approved (and launched) once.
        for (const id of ids) {
          const approvals = o.frames.filter(
            (f) => f.type === 'upsert' && f.command.id === id && f.command.state === 'approved',
          );
          expect(approvals.length, `approved upserts of ${id}`).toBeLessThanOrEqual(1);
          const running = o.frames.filter(
            (f) => f.type === 'upsert' && f.command.id === id && f.command.state === 'running',
          );
          expect(running.length, `running upserts of ${id}`).toBe(1);
        }
      }

      // Rule 6: cues of the one session ran one at a time: their [started_at, finished_at] never overlap.
      const cues = all
        .filter((r) => r.command === 'ogf.cue')
        .map((r) => [Date.parse(String(r.started_at)), Date.parse(String(r.finished_at))] as const)
        .sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < cues.length; i++) expect(cues[i]![0]).toBeGreaterThanOrEqual(cues[i - 1]![1]);

      const idle = rss[0]!.kib;
      const firstAfter = rss.find((r) => r.when === 'after burst 0')!.kib;
      const lastAfter = rss.at(-1)!.kib;
      process.stdout.write(
        `load: ${CLIENTS} clients x ${BURSTS} bursts, ${OWNERS} owners; daemon RSS ${rss.map((r) => `${r.when} ${Math.round(r.kib / 1024)} MiB`).join(', ')}\n`,
      );
      // Memory settles: later bursts do not keep growing it (no leak per command), and it stays bounded.
      expect(lastAfter).toBeLessThan(firstAfter * 1.25 + 16 * 1024);
      expect(lastAfter).toBeLessThan(idle * 3 + 64 * 1024);
      expect(d.child.exitCode).toBeNull();
    },
    TIMEOUT,
  );
});
