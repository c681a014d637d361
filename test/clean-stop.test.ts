/**
 * A clean stop (contract 17; issue 36 item 3): on SIGTERM or SIGINT the daemon answers every MCP call that waits
 * for a decision with its command's current result — `PENDING` with its `pending_id` — before closing its
 * stream, tells panels it is stopping (their sockets close 1001 "daemon stopping"), and exits; nothing waiting
 * is lost: after a start the same `pending_id` still awaits review. Before, on Ctrl-C a waiting call's stream
 * ended with no result and the SDK client hung until its own timeout (an AI would then send the call again).
 * Real daemon processes, real SDK clients of both generations over HTTP.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { exited, makeDataDir, startDaemon } from './helpers/daemon.js';
import { call, echoConfig, GENERATIONS, httpClient, structured } from './helpers/mcp.js';
import { OwnerSocket } from './helpers/owner.js';

describe('[c17.clean-stop] a stop answers every waiting call with its current result', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal}: both generations’ waiting calls get PENDING with their pending_id; after a start they still await review`, async () => {
      const dataDir = makeDataDir();
      const d = await startDaemon({ dataDir, config: echoConfig() });
      const owner = await OwnerSocket.open(d);
      const clients = await Promise.all(GENERATIONS.map((g) => httpClient(`${d.url}/mcp`, d.mcpToken, g)));
      const calls = clients.map((c, i) =>
        call(
          c,
          'run_command_wait',
          { command: 'echo', args: { word: `w${'ab'[i]}` }, wait_seconds: 90 },
          { timeout: 120_000 },
        ),
      );
      // Both commands wait for the owner (the calls are open, waiting for a decision).
      const awaiting = () =>
        new Set(
          owner.frames
            .filter((f) => f.type === 'upsert' && f.command.state === 'awaiting_review')
            .map((f) => f.command.id),
        );
      await owner.waitFor(() => awaiting().size === 2, 'both commands awaiting review');
      d.child.kill(signal);
      const answers = (await Promise.all(calls)) as CallToolResult[];
      for (const a of answers) {
        expect(a.isError ?? false).toBe(false);
        expect(structured(a)).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
        expect(structured(a).pending_id).toMatch(/^[A-Za-z0-9_-]{8,64}$/);
      }
      expect(await exited(d.child)).toBe(0);
      // The panel was told the daemon stops.
      expect(owner.closeCode).toBe(1001);
      expect(owner.closeReason).toBe('daemon stopping');
      for (const c of clients) await c.close().catch(() => {});

      const again = await startDaemon({ dataDir, config: echoConfig() });
      try {
        const ai = await httpClient(`${again.url}/mcp`, again.mcpToken);
        for (const a of answers) {
          const r = await call(ai, 'await_command_result', {
            pending_id: structured(a).pending_id,
            wait_seconds: 0,
          });
          expect(structured(r)).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
        }
        await ai.close();
      } finally {
        await again.stop();
      }
    });
  }
});
