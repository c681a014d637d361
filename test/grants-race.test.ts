/**
 * The grant concurrency trials (issue 13, contract 8): a grant with 3 uses and 50 identical calls arriving
 * at once approves exactly 3, round after round; and with a kill -9 in the middle of the burst, after the
 * restart the uses the grant lost equal the commands it approved — read from broker.db itself.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDataDir, startDaemon, waitFor } from './helpers/daemon.js';
import { type Frame, mcpClient, OwnerSocket, ownerCatalog, readMarks } from './helpers/owner.js';

const ROUNDS = 12;
const KILL_ROUNDS = 6;
const CALLS = 50;
const USES = 3;
const CLIENTS = 5;

const dirs: string[] = [];

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function config(markFile: string) {
  return ownerCatalog(markFile, { max_pending_per_client: 10_000, max_pending: 100_000 });
}

/** Commands each grant approved, and each grant's stored uses_left, straight from the file. */
function fromDb(dataDir: string, grantId: string): { approvedBy: number; usesLeft: number; state: string } {
  const db = new Database(join(dataDir, 'broker.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT body FROM commands').all() as Array<{ body: string }>;
    const approvedBy = rows.filter(
      (r) =>
        (JSON.parse(r.body) as { phase: { decided_by?: string } }).phase.decided_by === `grant:${grantId}`,
    ).length;
    const g = JSON.parse(
      (db.prepare('SELECT body FROM grants WHERE id = ?').get(grantId) as { body: string }).body,
    ) as { uses_left: number; state: string };
    return { approvedBy, usesLeft: g.uses_left, state: g.state };
  } finally {
    db.close();
  }
}

async function burst(clients: Client[], word: string): Promise<Array<Promise<unknown>>> {
  return Array.from({ length: CALLS }, (_, i) =>
    clients[i % clients.length]!.callTool({
      name: 'run_command_wait',
      arguments: { command: 'mark', args: { word }, wait_seconds: 0 },
    }),
  );
}

async function newGrant(owner: OwnerSocket, word: string): Promise<string> {
  const r = await owner.request({
    type: 'grant',
    command: 'mark',
    client: '*',
    args: { word },
    ttl_s: 3600,
    uses: USES,
  });
  if (!r.ok) throw new Error(JSON.stringify(r));
  return (r.grant as Frame).id as string;
}

describe('[c8.atomic] a grant with 3 uses and 50 identical calls at once', () => {
  // Generous timeouts: every round restarts real daemons, and the suite runs beside heavier ones.
  it(`approves exactly 3, ${ROUNDS} rounds`, { timeout: 240_000 }, async () => {
    const dataDir = makeDataDir('ogf-grant-race-');
    dirs.push(dataDir);
    const markFile = join(dataDir, 'marks.txt');
    const d = await startDaemon({ dataDir, config: config(markFile) });
    const clients = await Promise.all(Array.from({ length: CLIENTS }, () => mcpClient(d)));
    const owner = await OwnerSocket.open(d);
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const word = `r${round}`;
        const id = await newGrant(owner, word);
        const answers = (await Promise.all(await burst(clients, word))) as Array<{
          structuredContent: Frame;
        }>;
        const approved = answers.filter((a) => a.structuredContent.phase !== 'awaiting_review');
        expect(approved, `round ${round}`).toHaveLength(USES);
        expect(fromDb(dataDir, id), `round ${round}`).toEqual({
          approvedBy: USES,
          usesLeft: 0,
          state: 'spent',
        });
        await waitFor(
          () => readMarks(markFile).filter((m) => m === word).length === USES,
          `round ${round} marks`,
        );
      }
      console.info(
        `grants-race: ${ROUNDS} rounds of ${CALLS} calls against ${USES} uses, each approved exactly ${USES}`,
      );
    } finally {
      await owner.close();
      await Promise.all(clients.map((c) => c.close()));
      await d.stop();
    }
  });

  it(`with kill -9 in the middle: after the restart the uses taken equal the commands approved, ${KILL_ROUNDS} rounds`, {
    timeout: 240_000,
  }, async () => {
    const dataDir = makeDataDir('ogf-grant-kill-');
    dirs.push(dataDir);
    const markFile = join(dataDir, 'marks.txt');
    const outcomes: string[] = [];
    for (let round = 0; round < KILL_ROUNDS; round++) {
      const d = await startDaemon({ dataDir, config: config(markFile) });
      const clients = await Promise.all(Array.from({ length: CLIENTS }, () => mcpClient(d)));
      const owner = await OwnerSocket.open(d);
      const word = `k${round}`;
      const id = await newGrant(owner, word);
      const calls = (await burst(clients, word)).map((p) => p.catch(() => undefined));
      // Kill at a different depth each round: after 1, 3, 5, ... commands of this round are in the file
      // (past 3, the grant is spent and the rest wait for the owner).
      const depth = 2 * round + 1;
      await waitFor(() => commandsOf(dataDir, word) >= depth, `${depth} commands of the burst to land`);
      await d.kill();
      // Closing the clients settles every call: one whose answer stream the kill cut (its commit was still
      // pending) is otherwise left waiting by the SDK for an answer that never comes.
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await Promise.all(calls);
      await owner.close();
      const after = await startDaemon({ dataDir, config: config(markFile) });
      const db = fromDb(dataDir, id);
      expect(USES - db.usesLeft, `round ${round}`).toBe(db.approvedBy);
      expect(db.approvedBy).toBeLessThanOrEqual(USES);
      outcomes.push(`${db.approvedBy}/${commandsOf(dataDir, word)}`);
      await after.stop();
    }
    console.info(`grants-race kill -9: approved/queued per round ${outcomes.join(', ')}`);
  });
});

function commandsOf(dataDir: string, word: string): number {
  const db = new Database(join(dataDir, 'broker.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT body FROM commands').all() as Array<{ body: string }>;
    return rows.filter((r) => (JSON.parse(r.body) as { args: { word?: string } }).args.word === word).length;
  } finally {
    db.close();
  }
}
