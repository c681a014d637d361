/**
 * Contract 18 on a shared database (contract 16): the owners' rules live in PostgreSQL, so a rule an owner
 * adds, disables or removes on one node decides (or stops deciding) every node's requests, and every node
 * counts the same decisions. Two real daemons (each its own data dir and `node_name`) on one real
 * PostgreSQL; each node learns of the other's change through the store's feed, and the tests wait for that
 * state (the node's `rules` answer), never for the notification itself.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './helpers/daemon.js';
import { startFleetNode } from './helpers/fleet-node.js';
import { type Frame, mcpClient, OwnerSocket, queue, readMarks } from './helpers/owner.js';
import { type Postgres, postgresForFile } from './helpers/postgres.js';

const { server, daemons } = postgresForFile();
let pg: Postgres;
beforeAll(() => {
  pg = server();
});

/** The owners' rules as `owner`'s node has them in force now. */
async function ownersRules(owner: OwnerSocket): Promise<Frame[]> {
  const r = await owner.request({ type: 'rules' });
  expect(r.type).toBe('rules');
  return (r.rules as Frame[]).filter((x) => x.source === 'owner');
}

describe('[c18.fleet] two nodes share the owners’ rules', { timeout: 240_000 }, () => {
  it('a rule made on alpha decides beta’s requests; disabled on beta, alpha stops; removed, gone everywhere; one count', async () => {
    const url = await pg.createDatabase();
    const alpha = await startFleetNode(daemons, url, 'alpha', undefined);
    const beta = await startFleetNode(daemons, url, 'beta', alpha);
    const aiA = await mcpClient(alpha.d);
    const aiB = await mcpClient(beta.d);
    const ownerA = await OwnerSocket.open(alpha.d);
    const ownerB = await OwnerSocket.open(beta.d);

    const made = await ownerA.request({
      type: 'rule_add',
      rule: { id: 'f-words', when: "command == 'mark' && args.word.startsWith('f')", decision: 'allow' },
    });
    expect(made, JSON.stringify(made)).toMatchObject({ type: 'rule_add', rule: { id: 'f-words' } });
    // Beta has it in force once its `rules` lists it (the list and the rule book change together).
    await waitFor(
      async () => (await ownersRules(ownerB)).some((r) => r.id === 'f-words'),
      'the rule on beta',
    );
    const onBeta = await queue(aiB, 'mark', { word: 'f1' });
    expect(await ownerB.view(onBeta, () => true, 'beta’s f1')).toMatchObject({
      state: 'approved',
      decided_by: 'rule:f-words',
      node: 'beta',
    });
    await waitFor(() => readMarks(beta.marks).includes('f1'), 'f1 to run on beta');
    // A second node cannot take the id.
    const twice = await ownerB.request({
      type: 'rule_add',
      rule: { id: 'f-words', when: 'true', decision: 'deny' },
    });
    expect(twice).toMatchObject({ type: 'reply', ok: false, error: { code: 'BadMessage' } });

    // Disabled from beta's panel: alpha stops applying it.
    const off = await ownerB.request({ type: 'rule_update', id: 'f-words', enabled: false });
    expect(off).toMatchObject({ type: 'rule_update', rule: { enabled: false } });
    await waitFor(
      async () => (await ownersRules(ownerA)).find((r) => r.id === 'f-words')?.enabled === false,
      'disabled on alpha',
    );
    const onAlpha = await queue(aiA, 'mark', { word: 'f2' });
    expect(await ownerA.view(onAlpha, () => true, 'alpha’s f2')).toMatchObject({
      state: 'awaiting_review',
      version: 1,
    });

    // Every node counts the decisions of every node: one, on both.
    for (const o of [ownerA, ownerB])
      expect((await ownersRules(o))[0]).toMatchObject({ id: 'f-words', decided: 1 });

    // Enabled again on alpha, then removed on alpha: beta follows both.
    await ownerA.request({ type: 'rule_update', id: 'f-words', enabled: true });
    await waitFor(
      async () => (await ownersRules(ownerB)).find((r) => r.id === 'f-words')?.enabled === true,
      'enabled on beta',
    );
    const again = await queue(aiB, 'mark', { word: 'f3' });
    expect(await ownerB.view(again, () => true, 'beta’s f3')).toMatchObject({ decided_by: 'rule:f-words' });
    expect(await ownerA.request({ type: 'rule_remove', id: 'f-words' })).toMatchObject({
      type: 'rule_remove',
      id: 'f-words',
    });
    await waitFor(async () => (await ownersRules(ownerB)).length === 0, 'removed on beta');
    const after = await queue(aiB, 'mark', { word: 'f4' });
    expect(await ownerB.view(after, () => true, 'beta’s f4')).toMatchObject({
      state: 'awaiting_review',
      version: 1,
    });

    for (const c of [ownerA, ownerB]) await c.close();
    for (const c of [aiA, aiB]) await c.close();
  });
});
