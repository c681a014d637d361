/**
 * The retention rule on a real daemon (issue 19 finding 3; docs/lifecycle.md "Retention"): a command that
 * finished more than 7 days ago loses its output at the next start, and what the AI and the owner see says
 * so truthfully — contract 3.2's shape, `detail` naming the size and SHA-256 — while the audit log stays as
 * it was. The seven days are made by moving the command's own times back in broker.db while the daemon is
 * stopped (the daemon reads the real clock).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { auditRows, call, httpClient, structured, TestOwner } from './helpers/mcp.js';
import { OwnerSocket } from './helpers/owner.js';

const OUT = 'o'.repeat(10_000);
const DAY = 86_400_000;

let d: RunningDaemon;
let mcp: Client | undefined;

beforeAll(async () => {
  d = await startDaemon({
    config: {
      commands: {
        loud: {
          description: 'Prints 10,000 bytes',
          argv: [process.execPath, '-e', 'process.stdout.write("o".repeat(10000))'],
          params: {},
          timeout_s: 30,
        },
      },
    },
  });
});
afterAll(async () => {
  await mcp?.close();
  await d?.stop();
});

/** Moves a command's times (row and record) back by `ms`, in a stopped daemon's broker.db. */
function age(dataDir: string, id: string, ms: number): void {
  const db = new Database(join(dataDir, 'broker.db'));
  try {
    const { body } = db.prepare('SELECT body FROM commands WHERE id = ?').get(id) as { body: string };
    const c = JSON.parse(body) as Record<string, unknown> & { phase: Record<string, unknown> };
    const back = (t: unknown) => new Date(Date.parse(String(t)) - ms).toISOString();
    c.created_at = back(c.created_at);
    c.review_expires_at = back(c.review_expires_at);
    for (const k of ['decided_at', 'started_at', 'finished_at'])
      if (k in c.phase) c.phase[k] = back(c.phase[k]);
    db.prepare('UPDATE commands SET created_at = ?, body = ? WHERE id = ?').run(
      c.created_at,
      JSON.stringify(c),
      id,
    );
  } finally {
    db.close();
  }
}

describe('[c3.2.retention] a real daemon prunes output 7 days after the end, truthfully', () => {
  it('the AI and the owner see the output gone, with its size and hash; the audit log is untouched', async () => {
    mcp = await httpClient(`${d.url}/mcp`, d.mcpToken);
    const owner = await TestOwner.connect(d);
    const queued = structured(
      await call(mcp, 'run_command_wait', { command: 'loud', args: {}, wait_seconds: 0 }),
    );
    const id = queued.pending_id as string;
    await owner.approve(id);
    const done = structured(await call(mcp, 'await_command_result', { pending_id: id, wait_seconds: 30 }));
    expect(done).toMatchObject({ status: 'SUCCEEDED', stdout: OUT });
    owner.close();
    await mcp.close();
    mcp = undefined;
    await d.stop();

    age(d.dataDir, id, 8 * DAY);
    const auditBefore = auditRows(d);
    d = await startDaemon({ dataDir: d.dataDir });
    mcp = await httpClient(`${d.url}/mcp`, d.mcpToken);
    const client = mcp;
    const pruned = await waitFor(async () => {
      const r = structured(await call(client, 'await_command_result', { pending_id: id, wait_seconds: 0 }));
      return typeof r.detail === 'string' && r.detail.includes('removed') ? r : undefined;
    }, 'the pruned result');
    const sha = createHash('sha256').update(OUT).digest('hex');
    expect(pruned).not.toHaveProperty('stdout');
    expect(pruned).toMatchObject({ status: 'SUCCEEDED', exit_code: 0, output_truncated: true });
    expect(pruned.detail).toMatch(
      new RegExp(
        `^Its stdout \\(10000 bytes, sha256 ${sha}\\) was removed 7 days after it ended, on .+ \\(retention rule\\)\\.$`,
      ),
    );

    const socket = await OwnerSocket.open(d);
    try {
      const view = socket.snapshotView(id);
      expect(view?.result?.detail).toBe(pruned.detail);
      expect(view?.result).not.toHaveProperty('stdout');
    } finally {
      await socket.close();
    }

    const auditAfter = auditRows(d);
    expect(auditAfter.slice(0, auditBefore.length)).toEqual(auditBefore);
    const prune = auditAfter.slice(auditBefore.length).filter((r) => r.action === 'prune');
    expect(prune).toHaveLength(1);
    expect(prune[0]).toMatchObject({ actor_kind: 'daemon', command_id: id });
    expect(JSON.parse(String(prune[0]!.detail))).toMatchObject({
      pruned: [{ field: 'stdout', bytes: 10_000, sha256: sha }],
    });
  }, 120_000);
});
