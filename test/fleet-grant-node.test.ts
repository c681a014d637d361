/**
 * Contract 16 (v4), issue 35 finding 4: what a grant and the PENDING caps mean across nodes. Real daemons
 * (each its own data dir and `node_name`, as on its own machine) on one real PostgreSQL 15.
 *
 * The attacks, run as the AI would: (a) one command name is a different program on each node (`say` is
 * `/bin/echo`-like on alpha, something else on beta); the owner says "Allow…" on alpha's card, and the AI
 * sends the same name to beta, hoping alpha's grant approves beta's program unasked. (b) With
 * `max_pending_per_client` (then `max_pending`) 5 on both nodes, one client bursts at both at once,
 * hoping each node counts only its own and queues 5 more than the owners allowed.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, waitFor } from './helpers/daemon.js';
import { say, startFleetNode } from './helpers/fleet-node.js';
import { type Frame, mcpClient, OwnerSocket, queue, readMarks } from './helpers/owner.js';
import { type Postgres, postgresForFile } from './helpers/postgres.js';

const { server, daemons } = postgresForFile();
let pg: Postgres;
beforeAll(() => {
  pg = server();
});

/** Runs `command` on `ai` without waiting: its structured result, or the tool error's text. */
async function run(ai: Client, command: string, args: Record<string, unknown>): Promise<Frame> {
  const r = (await ai.callTool({
    name: 'run_command_wait',
    arguments: { command, args, wait_seconds: 0 },
  })) as CallToolResult;
  if (r.isError === true) return { error: (r.content[0] as { text: string }).text };
  return r.structuredContent as Frame;
}

describe('[c16.grant-node] a grant applies to the commands of the node it names', {
  timeout: 240_000,
}, () => {
  it('a grant made on alpha’s card never approves beta’s program of the same name; a grant for node "*" does; config grants are their node’s', async () => {
    const url = await pg.createDatabase();
    const db = url.split('/').pop()!;
    // Alpha's config grants `mark` to every client: alpha's config, so alpha's `mark` only.
    const alpha = await startFleetNode(daemons, url, 'alpha', undefined, (m) => ({
      commands: { say: say('alpha', m) },
      grants: [{ command: 'mark' }],
    }));
    const beta = await startFleetNode(daemons, url, 'beta', alpha, (m) => ({
      commands: { say: say('beta', m) },
    }));
    const aiA = await mcpClient(alpha.d);
    const aiB = await mcpClient(beta.d);
    const ownerA = await OwnerSocket.open(alpha.d);
    const ownerB = await OwnerSocket.open(beta.d);

    // The owner, on alpha's card: "Allow…" (approve, and the same again for any arguments).
    const first = await queue(aiA, 'say', { word: 'one' });
    await ownerA.view(first, (v) => v.state === 'awaiting_review', 'alpha’s say');
    const approved = await ownerA.request({
      type: 'approve',
      id: first,
      version: 1,
      grant: { same_args: false, ttl_s: 3600 },
    });
    expect(approved.ok, JSON.stringify(approved)).toBe(true);
    const grantId = (approved.grant as Frame).id as string;
    // Beta holds the grant (its owners heard of it) before the AI tries it there.
    const heard = await ownerB.waitFor(
      (f) => f.type === 'grant_upsert' && f.grant.id === grantId,
      'the grant on beta',
    );

    // The attack: the same command name on beta, a different program. It must wait for the owners.
    const onBeta = await run(aiB, 'say', { word: 'two' });
    expect(onBeta.pending_id, JSON.stringify(onBeta)).toEqual(expect.any(String));
    expect(onBeta.phase, JSON.stringify(onBeta)).toBe('awaiting_review');
    // On alpha the grant does what the owner meant.
    const onAlpha = await run(aiA, 'say', { word: 'three' });
    expect(onAlpha.phase, JSON.stringify(onAlpha)).not.toBe('awaiting_review');
    await waitFor(() => readMarks(alpha.marks).includes('alpha:three'), 'alpha’s granted say to run');
    // Alpha's config grant is alpha's: beta's `mark` waits, alpha's is approved.
    const markB = await run(aiB, 'mark', { word: 'cfgb' });
    expect(markB.phase, JSON.stringify(markB)).toBe('awaiting_review');
    const markA = await run(aiA, 'mark', { word: 'cfga' });
    expect(markA.phase, JSON.stringify(markA)).not.toBe('awaiting_review');

    // The grant names its node, everywhere it is shown.
    expect((approved.grant as Frame).node).toBe('alpha');
    expect(heard.grant.node).toBe('alpha');
    expect(await pg.sql(db, `SELECT body::jsonb->>'node' FROM grants WHERE id = '${grantId}'`)).toBe('alpha');

    // A grant for every node, on purpose: beta's next `say` is approved by it and runs beta's program.
    const star = await ownerA.request({
      type: 'grant',
      command: 'say',
      client: '*',
      ttl_s: 3600,
      node: '*',
    });
    expect(star.ok, JSON.stringify(star)).toBe(true);
    expect(star.grant.node).toBe('*');
    await ownerB.waitFor((f) => f.type === 'grant_upsert' && f.grant.id === star.grant.id, 'the * grant');
    const starred = await run(aiB, 'say', { word: 'four' });
    expect(starred.phase, JSON.stringify(starred)).not.toBe('awaiting_review');
    await waitFor(() => readMarks(beta.marks).includes('beta:four'), 'beta’s say to run');
    const decidedBy = await pg.sql(
      db,
      `SELECT body::jsonb->'phase'->>'decided_by' FROM commands WHERE id = '${starred.pending_id}'`,
    );
    expect(decidedBy).toBe(`grant:${star.grant.id}`);
    // A bare grant frame names the node the owner is connected to; `grant add` this node, or --node.
    const bare = await ownerB.request({ type: 'grant', command: 'say', client: '*', ttl_s: 600 });
    expect(bare.grant?.node, JSON.stringify(bare)).toBe('beta');
    const env = { OGF_BROKER_DATABASE_URL: url };
    const add = await runCli(
      ['grant', 'add', '--data-dir', alpha.d.dataDir, '--command', 'say', '--client', '*', '--ttl-s', '600'],
      env,
    );
    expect(add.code, add.stderr).toBe(0);
    const addedId = add.stdout.trim().split('\n').pop()!;
    expect(await pg.sql(db, `SELECT body::jsonb->>'node' FROM grants WHERE id = '${addedId}'`)).toBe('alpha');
    const addStar = await runCli(
      [
        'grant',
        'add',
        '--data-dir',
        beta.d.dataDir,
        '--command',
        'say',
        '--client',
        '*',
        '--ttl-s',
        '600',
      ].concat(['--node', '*']),
      env,
    );
    expect(addStar.code, addStar.stderr).toBe(0);
    const starId = addStar.stdout.trim().split('\n').pop()!;
    expect(await pg.sql(db, `SELECT body::jsonb->>'node' FROM grants WHERE id = '${starId}'`)).toBe('*');
    // `grant list` shows each grant's node.
    const list = await runCli(['grant', 'list', '--data-dir', beta.d.dataDir], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`${grantId}.*node alpha`));
    expect(list.stdout).toMatch(new RegExp(`${star.grant.id}.*node \\*`));

    // Beta's program never ran unasked: only the `*` grant's `four`.
    expect(readMarks(beta.marks)).toEqual(['beta:four']);
    // "Allow…" on beta's card, from alpha's panel: the grant is for beta's commands (the card's node).
    const fromAlpha = await ownerA.request({
      type: 'approve',
      id: onBeta.pending_id,
      version: 1,
      grant: { same_args: true, ttl_s: 600 },
    });
    expect(fromAlpha.ok, JSON.stringify(fromAlpha)).toBe(true);
    expect(fromAlpha.grant.node).toBe('beta');
    await waitFor(() => readMarks(beta.marks).includes('beta:two'), 'beta’s approved say to run');
    await Promise.all([aiA.close(), aiB.close(), ownerA.close(), ownerB.close()]);
    await beta.d.stop();
    await alpha.d.stop();
  });
});

describe('[c16.caps-fleet] the PENDING caps count every node’s commands', { timeout: 240_000 }, () => {
  const burst = async (cap: Record<string, number>, pattern: RegExp) => {
    const url = await pg.createDatabase();
    const db = url.split('/').pop()!;
    const alpha = await startFleetNode(daemons, url, 'alpha', undefined, () => cap);
    const beta = await startFleetNode(daemons, url, 'beta', alpha, () => cap);
    const ais: Client[] = [];
    for (const n of [alpha, beta]) for (let i = 0; i < 3; i++) ais.push(await mcpClient(n.d));
    // One client (one token), many sessions, both nodes, all at once.
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => run(ais[i % ais.length]!, 'mark', { word: `w${i}` })),
    );
    const queued = results.filter((r) => r.pending_id !== undefined);
    const refused = results.filter((r) => r.error !== undefined);
    expect(queued.length + refused.length, JSON.stringify(results)).toBe(30);
    for (const r of refused) expect(r.error).toMatch(pattern);
    expect(queued, JSON.stringify(results)).toHaveLength(5);
    expect(await pg.sql(db, 'SELECT count(*) FROM commands')).toBe('5');
    const stale = (alpha.d.stderr() + beta.d.stderr()).match(/"stale_write_retried"/g)?.length ?? 0;
    console.info(
      `caps burst over two nodes: ${stale} batches refused at a cap by the database and run again`,
    );
    // Once one is decided, one more may queue (on either node).
    const owner = await OwnerSocket.open(beta.d);
    const one = queued[0]!;
    const v = await owner.view(
      one.pending_id as string,
      (x) => x.state === 'awaiting_review',
      'a queued one',
    );
    expect((await owner.request({ type: 'deny', id: v.id, version: v.version })).ok).toBe(true);
    const other = one.node === 'alpha' ? ais[3]! : ais[0]!;
    const again = await run(other, 'mark', { word: 'again' });
    expect(again.pending_id, JSON.stringify(again)).toEqual(expect.any(String));
    expect((await run(other, 'mark', { word: 'past' })).error).toMatch(pattern);
    await Promise.all([owner.close(), ...ais.map((a) => a.close())]);
    await beta.d.stop();
    await alpha.d.stop();
  };

  it('max_pending_per_client 5 on both nodes: a burst of 30 from one client over both queues exactly 5', async () => {
    await burst(
      { max_pending_per_client: 5 },
      // The count in the words is the refusing node's view at that instant (a batch the database refused may
      // still be in it); the invariant is the database's: exactly 5 queued (below).
      /^TooManyPending: max_pending_per_client is 5 and this client already has \d+ PENDING commands/,
    );
  });

  it('max_pending 5 on both nodes: a burst of 30 over both queues exactly 5', async () => {
    await burst(
      { max_pending: 5 },
      /^TooManyPending: max_pending is 5 and all clients together already have \d+ PENDING commands/,
    );
  });
});
