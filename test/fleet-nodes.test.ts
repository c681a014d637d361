/**
 * Contract 16, several nodes on one PostgreSQL (issue 27): real daemons — each its own data dir and
 * `node_name`, as on its own machine — sharing one real PostgreSQL 15 (test/helpers/postgres.ts). Each
 * joins as docs/fleet.md says: the first node's owner.token and mcp.token copied into its data dir.
 *
 * Cross-node approval (an owner on alpha approves beta's command: beta launches it, alpha never does),
 * `AlreadyDecided` and quorum across nodes, a grant's uses exact under 50 requests split over two nodes,
 * kill -9 of a node (its commands wait for it; it alone applies rules 3–4 at its restart), and a node that
 * misses a notification (the trigger disabled: the catch-up still brings the approval).
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import {
  bearerSocket,
  callTool,
  type Frame,
  mcpClient,
  OwnerSocket,
  ownerCatalog,
  queue,
  readMarks,
} from './helpers/owner.js';
import { type Postgres, postgresForFile } from './helpers/postgres.js';

const { server, daemons } = postgresForFile();
let pg: Postgres;
beforeAll(() => {
  pg = server();
});

interface Node {
  d: RunningDaemon;
  marks: string;
}

/** A node on `url` named `name`; joining `first`'s fleet: its tokens copied, as docs/fleet.md says. */
async function startNode(
  url: string,
  name: string,
  first?: Node,
  extra: Record<string, unknown> = {},
  dataDir = makeDataDir(`ogf-node-${name}-`),
): Promise<Node> {
  const marks = join(dataDir, 'marks');
  if (first !== undefined) {
    for (const f of ['owner.token', 'mcp.token']) copyFileSync(join(first.d.dataDir, f), join(dataDir, f));
  }
  const base = ownerCatalog(marks);
  const commands = { ...(base.commands as object), ...((extra.commands as object | undefined) ?? {}) };
  const d = await startDaemon({
    dataDir,
    timeoutMs: 60_000,
    env: { OGF_BROKER_DATABASE_URL: url },
    config: { ...base, ...extra, commands, node_name: name },
  });
  daemons.push(d);
  return { d, marks };
}

async function twoNodes(extra: Record<string, unknown> = {}) {
  const url = await pg.createDatabase();
  const alpha = await startNode(url, 'alpha', undefined, extra);
  const beta = await startNode(url, 'beta', alpha, extra);
  return { url, db: url.split('/').pop()!, alpha, beta };
}

// Real daemons and a real PostgreSQL beside the rest of the suite: generous time, never a timing assertion.
describe('[c16.nodes] several daemons on one PostgreSQL', { timeout: 240_000 }, () => {
  it('an approval made on one node of another node’s command is launched by that node alone; a second live daemon with a name in use exits 2', async () => {
    const { url, db, alpha, beta } = await twoNodes();
    const ai = await mcpClient(beta.d);
    const ownerA = await OwnerSocket.open(alpha.d);
    const ownerB = await OwnerSocket.open(beta.d);
    const id = await queue(ai, 'mark', { word: 'crossed' });
    // Alpha's owner sees beta's command, marked by its node, through LISTEN/NOTIFY.
    const seen = await ownerA.view(id, (v) => v.state === 'awaiting_review', 'beta’s command on alpha');
    expect(seen.node).toBe('beta');
    expect(await pg.sql(db, `SELECT node FROM commands WHERE id = '${id}'`)).toBe('beta');
    expect((await ownerA.request({ type: 'approve', id, version: 1 })).ok).toBe(true);
    // Beta launches it: its own marks file, never alpha's.
    await ownerB.view(id, (v) => v.state === 'succeeded', 'beta to run it');
    await ownerA.view(id, (v) => v.state === 'succeeded', 'alpha to hear it ran');
    expect(readMarks(beta.marks)).toEqual(['crossed']);
    expect(readMarks(alpha.marks)).toEqual([]);
    const result = await callTool(ai, 'await_command_result', { pending_id: id, wait_seconds: 0 });
    expect(result).toMatchObject({ status: 'SUCCEEDED', node: 'beta' });
    // Who did what, where: the audit says alpha's owner approved and beta's daemon launched.
    const actions = (
      await pg.sql(db, `SELECT action FROM audit WHERE command_id = '${id}' ORDER BY seq`)
    ).split('\n');
    expect(actions).toEqual(['submit', 'approve', 'start', 'finish']);
    // The registry: both live; a third daemon named beta is refused while beta lives.
    expect(
      await pg.sql(db, "SELECT string_agg(name, ',' ORDER BY name) FROM nodes WHERE stopped_at IS NULL"),
    ).toBe('alpha,beta');
    await expect(startNode(url, 'beta', alpha)).rejects.toThrow(
      /exited 2: .*node_name beta: another live ogf-broker daemon named beta uses this database \(pid \d+/s,
    );
    await ai.close();
    await ownerA.close();
    await ownerB.close();
    expect(await beta.d.stop()).toBe(0);
    expect(await pg.sql(db, "SELECT stopped_at IS NOT NULL FROM nodes WHERE name = 'beta'")).toBe('t');
    await alpha.d.stop();
  });

  it('AlreadyDecided across nodes: two owners on two nodes decide one command at once, one wins; quorum with owners on different nodes', async () => {
    const { url, alpha, beta } = await twoNodes({
      commands: {
        vault: {
          description: 'needs two owners',
          argv: [process.execPath, '-e', 'process.exit(0)'],
          approvals: 2,
        },
      },
    });
    const ai = await mcpClient(alpha.d);
    const ownerA = await OwnerSocket.open(alpha.d);
    const ownerB = await OwnerSocket.open(beta.d);
    for (let round = 0; round < 5; round++) {
      const id = await queue(ai, 'mark', { word: `race${round}` });
      await ownerB.view(id, (v) => v.state === 'awaiting_review', 'the command on beta');
      const [a, b] = await Promise.all([
        ownerA.request({ type: 'approve', id, version: 1 }),
        ownerB.request({ type: 'deny', id, version: 1 }),
      ]);
      const oks = [a, b].filter((r) => r.ok === true);
      expect(oks, `round ${round}: ${JSON.stringify([a, b])}`).toHaveLength(1);
      const lost = [a, b].find((r) => r.ok !== true)!;
      // As on one machine (test/owner-ws.test.ts c2.rule-5): the loser is told it was already decided.
      expect(lost.error.code).toBe('AlreadyDecided');
      const final = await ownerB.view(
        id,
        (v) => v.state === 'succeeded' || v.state === 'denied',
        'the winner’s decision',
      );
      expect(final.state).toBe(a.ok === true ? 'succeeded' : 'denied');
    }
    // Each approved command ran once, on alpha (its node).
    const approvedRounds = readMarks(alpha.marks);
    expect(new Set(approvedRounds).size).toBe(approvedRounds.length);
    expect(readMarks(beta.marks)).toEqual([]);

    // Quorum: alice on alpha, bob on beta (owners are shared: added once, on either node).
    const add = async (node: Node, name: string) => {
      const r = await runCli(['token', 'owner', '--data-dir', node.d.dataDir, '--name', name], {
        OGF_BROKER_DATABASE_URL: url,
      });
      expect(r.code).toBe(0);
      return /#token=(\S+)$/.exec(r.stdout.trimEnd())![1]!;
    };
    const alice = await bearerSocket(alpha.d, await add(alpha, 'alice'));
    // Bob is added once; beta hears of him through the change feed, so his socket may be refused at first.
    // (The loop once added him again: `token owner` refused the second time, exit 2, on a loaded run.)
    const bobToken = await add(beta, 'bob');
    const bob = await waitFor(() => bearerSocket(beta.d, bobToken).catch(() => undefined), 'bob on beta');
    const vault = (
      (await ai.callTool({
        name: 'run_command_wait',
        arguments: { command: 'vault', args: {}, wait_seconds: 0 },
      })) as CallToolResult
    ).structuredContent as Frame;
    const vid = vault.pending_id as string;
    await bob.view(vid, (v) => v.state === 'awaiting_review', 'the vault command on beta');
    const [ra, rb] = await Promise.all([
      alice.request({ type: 'approve', id: vid, version: 1 }),
      bob.request({ type: 'approve', id: vid, version: 1 }),
    ]);
    // Both at version 1: one approval counts, the other is told the version moved (as on one machine).
    expect([ra, rb].filter((r) => r.ok === true)).toHaveLength(1);
    const second = ra.ok === true ? bob : alice;
    const moved = await second.view(vid, (v) => v.version === 2, 'the first approval');
    expect(moved.approvals).toHaveLength(1);
    expect((await second.request({ type: 'approve', id: vid, version: 2 })).ok).toBe(true);
    const done = await alice.view(vid, (v) => v.state === 'succeeded', 'the vault command to run');
    expect(done.approvals.map((x: Frame) => x.by).sort()).toEqual(['alice', 'bob']);
    await Promise.all([ai.close(), ownerA.close(), ownerB.close(), alice.close(), bob.close()]);
    await beta.d.stop();
    await alpha.d.stop();
  });

  it('a grant with 10 uses and 50 identical requests split over two nodes at once approves exactly 10', async () => {
    const { db, alpha, beta } = await twoNodes();
    const owner = await OwnerSocket.open(alpha.d);
    const ownerB = await OwnerSocket.open(beta.d);
    const clients: Client[] = [];
    for (const n of [alpha, beta]) for (let i = 0; i < 5; i++) clients.push(await mcpClient(n.d));
    for (let round = 0; round < 3; round++) {
      const word = `g${round}`;
      const g = await owner.request({
        type: 'grant',
        command: 'mark',
        client: '*',
        args: { word },
        ttl_s: 3600,
        uses: 10,
        // Contract 16 (v4): for both nodes' commands, on purpose (a grant is else its node's alone).
        node: '*',
      });
      expect(g.ok, JSON.stringify(g)).toBe(true);
      const grantId = (g.grant as Frame).id as string;
      // Beta knows the grant before the burst (as a second machine does, milliseconds later): its owners
      // hear of it (a grant_upsert), so its broker holds it.
      await ownerB.waitFor((f) => f.type === 'grant_upsert' && f.grant.id === grantId, 'the grant on beta');
      const answers = (await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          clients[i % clients.length]!.callTool({
            name: 'run_command_wait',
            arguments: { command: 'mark', args: { word }, wait_seconds: 0 },
          }),
        ),
      )) as CallToolResult[];
      const results = answers.map((a) => a.structuredContent as Frame);
      expect(results.filter((r) => r.pending_id === undefined)).toEqual([]);
      const granted = results.filter((r) => r.phase !== 'awaiting_review');
      expect(granted, `round ${round}`).toHaveLength(10);
      expect(await pg.sql(db, `SELECT state || ' ' || uses_left FROM grants WHERE id = '${grantId}'`)).toBe(
        'spent 0',
      );
      expect(
        await pg.sql(
          db,
          `SELECT count(*) FROM commands WHERE body::jsonb->'phase'->>'decided_by' = 'grant:${grantId}'`,
        ),
      ).toBe('10');
      // Both nodes took part, and each granted command ran once, on its own node.
      expect(new Set(results.map((r) => r.node))).toEqual(new Set(['alpha', 'beta']));
      await waitFor(
        () => [...readMarks(alpha.marks), ...readMarks(beta.marks)].filter((m) => m === word).length === 10,
        `round ${round}: 10 runs`,
      );
      // Deny the rest so the next round starts clean (from alpha, whichever node holds them).
      for (const r of results.filter((x) => x.phase === 'awaiting_review')) {
        const v = await owner.view(r.pending_id as string, (x) => x.state === 'awaiting_review', 'pending');
        expect((await owner.request({ type: 'deny', id: v.id, version: v.version })).ok).toBe(true);
      }
    }
    await new Promise((r) => setTimeout(r, 500));
    expect([...readMarks(alpha.marks), ...readMarks(beta.marks)]).toHaveLength(30);
    const stale = (alpha.d.stderr() + beta.d.stderr()).match(/"stale_write_retried"/g)?.length ?? 0;
    console.info(`grant race over two nodes: ${stale} calls refused as stale by the database and run again`);
    await Promise.all([owner.close(), ownerB.close(), ...clients.map((c) => c.close())]);
    await beta.d.stop();
    await alpha.d.stop();
  });

  it('kill -9 of a node: its commands wait for it, are approved meanwhile from another node, and it alone applies rules 3–4 at its restart', async () => {
    const url = await pg.createDatabase();
    const db = url.split('/').pop()!;
    const alpha = await startNode(url, 'alpha');
    const betaDir = makeDataDir('ogf-node-beta-');
    let beta = await startNode(url, 'beta', alpha, slowCatalog(), betaDir);
    const ai = await mcpClient(beta.d);
    const ownerA = await OwnerSocket.open(alpha.d);
    // One of beta's commands running (a slow one), one awaiting review.
    const running = await queueSlow(ai);
    // Alpha's owner decides what alpha's owner sees: wait for the state there, not for the submit.
    await ownerA.view(running, (v) => v.state === 'awaiting_review', 'beta’s slow command on alpha');
    expect((await ownerA.request({ type: 'approve', id: running, version: 1 })).ok).toBe(true);
    await ownerA.view(running, (v) => v.state === 'running', 'beta to start it');
    const waiting = await queue(ai, 'mark', { word: 'later' });
    await ownerA.view(waiting, (v) => v.state === 'awaiting_review', 'beta’s second command');
    await ai.close().catch(() => {});
    await beta.d.kill();
    // Alpha does not recover beta's commands: the running one stays running until beta returns.
    await waitFor(
      async () =>
        (await pg.sql(db, "SELECT count(*) FROM nodes WHERE name='beta' AND stopped_at IS NULL")) === '1',
      'beta still registered (killed, not stopped)',
    );
    await new Promise((r) => setTimeout(r, 2500)); // more than one catch-up round
    expect(await pg.sql(db, `SELECT state FROM commands WHERE id = '${running}'`)).toBe('running');
    // Approved on alpha while beta is down: nobody launches it yet (alpha never launches beta's).
    expect((await ownerA.request({ type: 'approve', id: waiting, version: 1 })).ok).toBe(true);
    await new Promise((r) => setTimeout(r, 2500));
    expect(await pg.sql(db, `SELECT state FROM commands WHERE id = '${waiting}'`)).toBe('approved');
    expect(readMarks(alpha.marks)).toEqual([]);
    // Beta restarts under its name at once (kill -9 closed its session: its lock went with it).
    beta = await startNode(url, 'beta', alpha, slowCatalog(), betaDir);
    // Rule 3: running at the crash → unknown (DaemonRestarted); rule 4: approved, never ran → launched.
    await ownerA.view(
      running,
      (v) => v.state === 'unknown' && v.reason === 'DaemonRestarted',
      'rule 3 by beta',
    );
    await ownerA.view(waiting, (v) => v.state === 'succeeded', 'rule 4 by beta');
    expect(readMarks(beta.marks)).toEqual(['later']);
    const restartedBy = await pg.sql(
      db,
      `SELECT actor FROM audit WHERE command_id = '${running}' AND action = 'restart'`,
    );
    expect(restartedBy).toBe('daemon');
    await ownerA.close();
    await beta.d.stop();
    await alpha.d.stop();
  });

  it('a node that misses a notification still launches the approval (the periodic catch-up)', async () => {
    const { db, alpha, beta } = await twoNodes();
    const ai = await mcpClient(beta.d);
    const ownerA = await OwnerSocket.open(alpha.d);
    const id = await queue(ai, 'mark', { word: 'missed' });
    await ownerA.view(id, (v) => v.state === 'awaiting_review', 'beta’s command on alpha');
    // No NOTIFY for this approval: as if beta's feed had lost it.
    await pg.sql(db, 'ALTER TABLE commands DISABLE TRIGGER commands_notify');
    try {
      expect((await ownerA.request({ type: 'approve', id, version: 1 })).ok).toBe(true);
      await waitFor(() => readMarks(beta.marks).includes('missed'), 'beta to launch it by its catch-up');
    } finally {
      await pg.sql(db, 'ALTER TABLE commands ENABLE TRIGGER commands_notify');
    }
    await waitFor(
      async () =>
        (await callTool(ai, 'await_command_result', { pending_id: id, wait_seconds: 0 })).status ===
        'SUCCEEDED',
      'the AI on beta to see it succeed',
    );
    expect(readMarks(alpha.marks)).toEqual([]);
    await ai.close();
    await ownerA.close();
    await beta.d.stop();
    await alpha.d.stop();
  });

  it('PostgreSQL stopped and started in the middle of a burst on two nodes: nothing lost, nothing run twice', {
    timeout: 180_000,
  }, async () => {
    const { db, alpha, beta } = await twoNodes();
    const owner = await OwnerSocket.open(alpha.d);
    const ownerB = await OwnerSocket.open(beta.d);
    // Every request granted at once, so each one the database stored is launched by its node.
    // Contract 16 (v4): `node: '*'`, so the grant approves both nodes' commands.
    const g = await owner.request({ type: 'grant', command: 'mark', client: '*', ttl_s: 3600, node: '*' });
    expect(g.ok).toBe(true);
    await ownerB.waitFor((f) => f.type === 'grant_upsert' && f.grant.id === g.grant.id, 'the grant on beta');
    await ownerB.close();
    const ais = [await mcpClient(alpha.d), await mcpClient(beta.d)];
    const answers = new Map<string, Frame>();
    const call = async (word: string, i: number) => {
      const r = (await ais[i % 2]!.callTool({
        name: 'run_command_wait',
        arguments: { command: 'mark', args: { word }, wait_seconds: 0 },
      })) as CallToolResult;
      answers.set(word, (r.structuredContent ?? { isError: r.isError, content: r.content }) as Frame);
    };
    const words = Array.from({ length: 60 }, (_, i) => `b${i}`);
    const burst = words.map((w, i) => new Promise((r) => setTimeout(r, i * 50)).then(() => call(w, i)));
    await waitFor(() => answers.size >= 15, 'the first answers');
    await pg.stop('immediate');
    await new Promise((r) => setTimeout(r, 1000));
    await pg.start();
    await Promise.all(burst);
    // Back without a restart of either node: a second wave is queued whole.
    const after = Array.from({ length: 10 }, (_, i) => `a${i}`);
    await Promise.all(after.map((w, i) => call(w, i)));
    for (const w of after) expect(answers.get(w)?.pending_id, w).toEqual(expect.any(String));
    words.push(...after);
    const stored = words.filter((w) => answers.get(w)?.pending_id !== undefined);
    const refused = words.filter((w) => answers.get(w)?.pending_id === undefined);
    console.info(
      `pg-restart burst: ${stored.length} queued, ${refused.length} refused while the database was away`,
    );
    expect(stored.length).toBeGreaterThanOrEqual(15);
    for (const w of refused) expect(JSON.stringify(answers.get(w))).toMatch(/Unavailable/);
    // Every acknowledged command is in the database and ends SUCCEEDED on its own node, run once.
    for (const w of stored) {
      const id = answers.get(w)!.pending_id as string;
      await waitFor(
        async () => (await pg.sql(db, `SELECT state FROM commands WHERE id = '${id}'`)) === 'succeeded',
        `${w} to succeed`,
        30_000,
      );
    }
    const ran = [...readMarks(alpha.marks), ...readMarks(beta.marks)];
    expect(new Set(ran).size).toBe(ran.length);
    for (const w of stored) expect(ran).toContain(w);
    // A refused request may still have been stored (its COMMIT answered while the connection went): if
    // so it runs once like any other; it never runs twice.
    const inDb = Number(
      await pg.sql(db, "SELECT count(*) FROM commands WHERE body::jsonb->'args'->>'word' ~ '^[ab][0-9]+$'"),
    );
    expect(inDb).toBeGreaterThanOrEqual(stored.length);
    await Promise.all([owner.close(), ...ais.map((a) => a.close())]);
    await beta.d.stop();
    await alpha.d.stop();
  });
});

/** A catalog with `slow`: a command that runs for a minute (long enough to be running at a kill). */
function slowCatalog(): Record<string, unknown> {
  return {
    commands: {
      slow: {
        description: 'Sleeps for a minute',
        argv: [process.execPath, '-e', 'setTimeout(() => {}, 60000)'],
        timeout_s: 120,
      },
    },
  };
}

async function queueSlow(ai: Client): Promise<string> {
  return queue(ai, 'slow', {});
}
