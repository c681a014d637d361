/**
 * One cue end to end through the MCP surface (contracts.md 3.3, 4, 6): `ogf_cue` over real HTTP with an
 * upper-case session UUID, approval by a real owner on the owner WebSocket, delivery by the real
 * `ogf-bridge-client` to the reference avatar app, and the SUCCEEDED result with its `delivery`. The UUID
 * never appears in a result, the owner's view, the daemon's log or its database.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exited, ROOT, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import {
  call,
  GENERATIONS,
  httpClient,
  type McpClient,
  structured,
  TestOwner,
  textOf,
} from './helpers/mcp.js';

let app: ChildProcess;
let pageUrl: string;
let bridgeUrl: string;
let d: RunningDaemon;
let owner: TestOwner;

async function appState(): Promise<{ session_id: string; state: Record<string, unknown> }> {
  const r = await fetch(new URL('/state', pageUrl));
  return (await r.json()) as { session_id: string; state: Record<string, unknown> };
}

beforeAll(async () => {
  app = spawn(process.execPath, [join(ROOT, 'dist', 'examples', 'avatar-app', 'main.js'), '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  app.stdout!.on('data', (b: Buffer) => {
    out += b.toString();
  });
  const ready = await waitFor(() => /page (\S+) bridge (\S+)/.exec(out), 'the avatar app');
  pageUrl = ready[1]!;
  bridgeUrl = ready[2]!;
  d = await startDaemon({ config: { ogf_bridge: { url: bridgeUrl, delivery_timeout_ms: 5000 } } });
  owner = await TestOwner.connect(d);
});

afterAll(async () => {
  owner?.close();
  await d?.stop();
  if (app && app.exitCode === null) {
    app.kill('SIGTERM');
    await exited(app);
  }
});

it.each(GENERATIONS)(
  '[c3.3.session-secret] delivers an approved ogf_cue to the avatar app and answers SUCCEEDED with the delivery (%s)',
  async (generation) => {
    const mcp: McpClient = await httpClient(d.info.mcp_url, d.mcpToken, generation);
    const { session_id } = await appState();
    const upper = session_id.toUpperCase();
    const queued = await call(mcp, 'ogf_cue', {
      session_id: upper,
      action: 'wave',
      emotion: 'excited',
      intensity: 0.8,
      gaze: 'user',
      ttl_ms: 10000,
      message: 'Hello 👋',
      wait_seconds: 0,
    });
    expect(queued.isError, textOf(queued)).toBeFalsy();
    const q = structured(queued);
    expect(q).toMatchObject({ status: 'PENDING', phase: 'awaiting_review', command: 'ogf.cue' });
    const id = String(q.pending_id);

    const waiting = call(
      mcp,
      'await_command_result',
      { pending_id: id, wait_seconds: 60 },
      { timeout: 90_000 },
    );
    expect((await owner.approve(id)).ok).toBe(true);
    const r = await waiting;
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(structured(r)).toMatchObject({
      status: 'SUCCEEDED',
      pending_id: id,
      delivery: { cue_id: id, applied_at: expect.any(String) },
    });
    const shown = (await appState()).state;
    expect(shown).toMatchObject({ action: 'wave', emotion: 'excited', gaze: 'user' });

    // The secret stays secret: not in any result, the owner's view, the log or the database.
    for (const text of [
      JSON.stringify(queued),
      JSON.stringify(r),
      JSON.stringify([...owner.views.values()]),
    ]) {
      expect(text.toLowerCase()).not.toContain(session_id.toLowerCase());
    }
    expect(d.stderr().toLowerCase()).not.toContain(session_id.toLowerCase());
    const db = readFileSync(join(d.dataDir, 'broker.db'));
    const wal = readFileSync(join(d.dataDir, 'broker.db-wal'));
    for (const form of [session_id.toLowerCase(), upper]) {
      expect(db.includes(form)).toBe(false);
      expect(wal.includes(form)).toBe(false);
    }
    await mcp.close();
  },
);
