/**
 * Crash safety of the audit chain (contract 14, docs/reliability.md c14.crash): kill -9 the daemon in the
 * middle of a burst of requests that a config grant approves at once (each: submit, approve, grant use,
 * launch, outcome — five entries, several batches of the group commit in flight), at a different moment
 * each round; after each crash the record verifies without the daemon, and again after the restart that
 * recovers the interrupted commands and keeps appending.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon } from './helpers/daemon.js';
import { ownerCatalog } from './helpers/owner.js';

async function client(d: RunningDaemon): Promise<Client> {
  const c = new Client({ name: 'fault-audit', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(d.info.mcp_url), {
      requestInit: { headers: { authorization: `Bearer ${d.mcpToken}` } },
    }),
  );
  return c;
}

async function verify(dataDir: string): Promise<{ code: number | null; out: string }> {
  const r = await runCli(['audit', 'verify', '--data-dir', dataDir]);
  return { code: r.code, out: r.stdout.trim() };
}

describe('[c14.crash] kill -9 mid-burst: the chain still verifies', () => {
  it('verifies after each of 4 crashes and after each restart', async () => {
    const dataDir = makeDataDir('ogf-fault-audit-');
    const config = ownerCatalog(join(dataDir, 'marks.txt'), { grants: [{ command: 'mark', client: '*' }] });
    let entries = 0;
    for (let round = 0; round < 4; round++) {
      const d = await startDaemon({ dataDir, config });
      const ai = await client(d);
      const calls: Array<Promise<unknown>> = [];
      let answered = 0;
      for (let i = 0; i < 40; i++) {
        calls.push(
          ai
            .callTool({
              name: 'run_command_wait',
              arguments: { command: 'mark', args: { word: `r${round}n${i}` }, wait_seconds: 0 },
            })
            .catch(() => undefined)
            // Answered or refused: either way the call is through; the kill moment counts both.
            .finally(() => answered++),
        );
      }
      // A different moment each round: after 3, 10, 20 or 30 answers, with the rest still arriving.
      const at = [3, 10, 20, 30][round]!;
      while (answered < at) await new Promise((r) => setTimeout(r, 5));
      await d.kill();
      // Closing the client ends the calls the dead daemon will never answer (else each waits out the SDK's
      // 60 s request timeout).
      await ai.close().catch(() => undefined);
      await Promise.allSettled(calls);
      const after = await verify(dataDir);
      expect(after.out, `round ${round} after the crash`).toMatch(
        /^ok: \d+ entries, \d+ checkpoints, 0 passkey approvals verified$/,
      );
      expect(after.code).toBe(0);
      const n = Number(/^ok: (\d+)/.exec(after.out)![1]);
      expect(n).toBeGreaterThan(entries);
      entries = n;
    }
    // The restart recovers what was running (outcome entries by the daemon, when the kill caught any
    // running: a fast machine may have finished them all) and the chain goes on: one more call is chained.
    const d = await startDaemon({ dataDir, config });
    const ai = await client(d);
    await ai.callTool({
      name: 'run_command_wait',
      arguments: { command: 'mark', args: { word: 'after' }, wait_seconds: 0 },
    });
    await ai.close();
    expect(await d.stop()).toBe(0);
    const last = await verify(dataDir);
    expect(last.code, last.out).toBe(0);
    expect(Number(/^ok: (\d+)/.exec(last.out)![1])).toBeGreaterThan(entries);
    // Each round spawns up to 40 approved `node` children on this machine's two cores: a generous bound.
  }, 240_000);
});
