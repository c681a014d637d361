/**
 * Contract 11: grants wider than one argument set. A grant carries `when` (a CEL expression) instead of
 * `args`; it is matched in the submit's transaction like any grant, so under 50 concurrent requests it takes
 * exactly its uses (the race of test/grants-race.test.ts, with an expression). Owner frames `grant` and
 * `approve … "grant"` accept it, `grant add --when` too, a bad expression is refused naming what is wrong,
 * and it survives a restart (compiled again from broker.db).
 */
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { type Frame, mcpClient, OwnerSocket, ownerCatalog, queue, readMarks } from './helpers/owner.js';

const CALLS = 50;
const USES = 3;
const ROUNDS = 3;

let d: RunningDaemon | undefined;
afterAll(async () => {
  await d?.stop();
});

function grantRow(dataDir: string, id: string): { uses_left: number; state: string; when?: string } {
  const db = new Database(join(dataDir, 'broker.db'), { readonly: true, fileMustExist: true });
  try {
    return JSON.parse((db.prepare('SELECT body FROM grants WHERE id = ?').get(id) as { body: string }).body);
  } finally {
    db.close();
  }
}

function approvedBy(dataDir: string, by: string): number {
  const db = new Database(join(dataDir, 'broker.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT body FROM commands').all() as Array<{ body: string }>;
    return rows.filter(
      (r) => (JSON.parse(r.body) as { phase: { decided_by?: string } }).phase.decided_by === by,
    ).length;
  } finally {
    db.close();
  }
}

describe('[c11.when] a grant with when', () => {
  it(`takes exactly its ${USES} uses under ${CALLS} concurrent requests, ${ROUNDS} rounds`, {
    timeout: 180_000,
  }, async () => {
    const dataDir = makeDataDir('ogf-when-race-');
    const markFile = join(dataDir, 'marks.txt');
    d = await startDaemon({
      dataDir,
      config: ownerCatalog(markFile, { max_pending_per_client: 10_000, max_pending: 100_000 }),
    });
    const clients: Client[] = await Promise.all(Array.from({ length: 5 }, () => mcpClient(d!)));
    const owner = await OwnerSocket.open(d);
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const prefix = `w${round}`;
        const r = await owner.request({
          type: 'grant',
          command: 'mark',
          client: '*',
          when: `args.word.startsWith('${prefix}')`,
          ttl_s: 3600,
          uses: USES,
        });
        expect(r.ok, JSON.stringify(r)).toBe(true);
        const id = (r.grant as Frame).id as string;
        expect(r.grant).toMatchObject({ when: `args.word.startsWith('${prefix}')`, uses_left: USES });
        expect(r.grant.args).toBeUndefined();
        // 50 different words, all matching: a grant with `when` is not one argument set.
        const answers = (await Promise.all(
          Array.from({ length: CALLS }, (_, i) =>
            clients[i % clients.length]!.callTool({
              name: 'run_command_wait',
              arguments: { command: 'mark', args: { word: `${prefix}x${i}` }, wait_seconds: 0 },
            }),
          ),
        )) as Array<{ structuredContent: Frame }>;
        const approved = answers.filter((a) => a.structuredContent.phase !== 'awaiting_review');
        expect(approved, `round ${round}`).toHaveLength(USES);
        expect(grantRow(dataDir, id)).toMatchObject({ uses_left: 0, state: 'spent' });
        expect(approvedBy(dataDir, `grant:${id}`)).toBe(USES);
        await waitFor(
          () => readMarks(markFile).filter((m) => m.startsWith(prefix)).length === USES,
          `round ${round} marks`,
        );
      }
    } finally {
      await owner.close();
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('matches only what its expression says; approve … grant {when}; survives a restart', {
    timeout: 120_000,
  }, async () => {
    const dataDir = d!.dataDir;
    const ai = await mcpClient(d!);
    let owner = await OwnerSocket.open(d!);
    const first = await queue(ai, 'mark', { word: 'keepa' });
    const v = await owner.view(first, () => true, 'the first request');
    const r = await owner.request({
      type: 'approve',
      id: first,
      version: v.version,
      grant: { when: "args.word.startsWith('keep')", ttl_s: 600 },
    });
    expect(r).toMatchObject({ ok: true, grant: { when: "args.word.startsWith('keep')", command: 'mark' } });
    const gid = r.grant.id as string;
    const yes = await queue(ai, 'mark', { word: 'keepb' });
    expect((await owner.view(yes, (c) => c.state !== 'awaiting_review', 'keepb approved')).decided_by).toBe(
      `grant:${gid}`,
    );
    const no = await queue(ai, 'mark', { word: 'other' });
    expect((await owner.view(no, () => true, 'other waits')).state).toBe('awaiting_review');
    await owner.close();
    await ai.close();
    await d!.stop();
    d = await startDaemon({
      dataDir,
      config: ownerCatalog(join(dataDir, 'marks.txt'), {
        max_pending_per_client: 10_000,
        max_pending: 100_000,
      }),
    });
    const ai2 = await mcpClient(d);
    owner = await OwnerSocket.open(d);
    const after = await queue(ai2, 'mark', { word: 'keepc' });
    expect((await owner.view(after, (c) => c.state !== 'awaiting_review', 'keepc approved')).decided_by).toBe(
      `grant:${gid}`,
    );
    await owner.close();
    await ai2.close();
  });

  it('a bad expression, or when with args or same_args, is a BadMessage saying what is wrong', async () => {
    const owner = await OwnerSocket.open(d!);
    try {
      const bad = await owner.request({
        type: 'grant',
        command: 'mark',
        client: '*',
        when: 'shell(args.word)',
        ttl_s: 600,
      });
      expect(bad).toMatchObject({ ok: false, error: { code: 'BadMessage' } });
      expect(bad.error.message).toMatch(/when does not type-check: .*shell/);
      const notBool = await owner.request({
        type: 'grant',
        command: 'mark',
        client: '*',
        when: 'args.word',
        ttl_s: 600,
      });
      expect(notBool.error.message).toMatch(/when must be a boolean expression/);
      const both = await owner.request({
        type: 'grant',
        command: 'mark',
        client: '*',
        when: 'true',
        args: { word: 'x' },
        ttl_s: 600,
      });
      expect(both.error.message).toMatch(/args and when cannot both be given/);
      const approveBoth = await owner.request({
        type: 'approve',
        id: 'c_whatever1',
        version: 1,
        grant: { when: 'true', same_args: true, ttl_s: 600 },
      });
      expect(approveBoth.error).toMatchObject({ code: 'BadMessage' });
      expect(approveBoth.error.message).toMatch(/exactly one of same_args .* and when/);
    } finally {
      await owner.close();
    }
  });

  it('grant add --when through the real CLI, and grant list shows the expression', async () => {
    const env = { OGF_BROKER_DATA_DIR: d!.dataDir };
    const add = await runCli(
      [
        'grant',
        'add',
        '--command',
        'mark',
        '--client',
        '*',
        '--when',
        "args.word == 'cli'",
        '--ttl-s',
        '600',
      ],
      env,
    );
    expect(add.code, add.stderr).toBe(0);
    const id = add.stdout.trim().split('\n').at(-1)!;
    const list = await runCli(['grant', 'list'], env);
    expect(list.stdout.split('\n').find((l) => l.startsWith(id))).toMatch(
      /mark {2}client \* {2}when args\.word == 'cli'/,
    );
    const bad = await runCli(
      ['grant', 'add', '--command', 'mark', '--client', '*', '--when', 'nope(', '--ttl-s', '600'],
      env,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^ogf-broker: BadMessage: .*when does not compile/);
    const both = await runCli(
      [
        'grant',
        'add',
        '--command',
        'mark',
        '--client',
        '*',
        '--when',
        'true',
        '--args',
        '{}',
        '--ttl-s',
        '600',
      ],
      env,
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--when: cannot be given with --args/);
  });
});
