/**
 * Contract 16, one daemon on a shared PostgreSQL (issue 27): the real daemon started with
 * OGF_BROKER_DATABASE_URL against a real PostgreSQL 15 (test/helpers/postgres.ts). A catalog command
 * submitted over MCP and approved from an owner socket runs, and lives in the database (no broker.db);
 * a restart keeps its history; with the database stopped, a new MCP call is the tool error `Unavailable`
 * and an owner's decision is refused, so nothing is queued or decided; once the database is back the same
 * daemon works again, without a restart.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import {
  bearerSocket,
  callTool,
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

describe('[c16.postgres] [c16.unavailable] one daemon on a shared PostgreSQL', () => {
  it('runs, keeps its history across a restart, refuses with Unavailable while the database is gone, and recovers by itself', async () => {
    const url = await pg.createDatabase();
    const db = url.split('/').pop()!;
    const dataDir = makeDataDir();
    const marks = join(dataDir, 'marks');
    const env = { OGF_BROKER_DATABASE_URL: url };
    const first = await startDaemon({ dataDir, env, config: ownerCatalog(marks) });
    daemons.push(first);
    const ai = await mcpClient(first);
    const owner = await OwnerSocket.open(first);
    const ran = await queue(ai, 'mark', { word: 'one' });
    expect((await owner.request({ type: 'approve', id: ran, version: 1 })).ok).toBe(true);
    await owner.view(ran, (v) => v.state === 'succeeded', 'the approved command to succeed');
    expect(readMarks(marks)).toEqual(['one']);
    // Everything is in PostgreSQL: the command, its audit trail, the owner's and the client's hashes.
    expect(await pg.sql(db, `SELECT state FROM commands WHERE id = '${ran}'`)).toBe('succeeded');
    expect(
      (await pg.sql(db, `SELECT action FROM audit WHERE command_id = '${ran}' ORDER BY seq`)).split('\n'),
    ).toEqual(expect.arrayContaining(['submit', 'approve']));
    expect(await pg.sql(db, 'SELECT name FROM owners')).toBe('owner');
    expect(await pg.sql(db, 'SELECT name FROM mcp_clients')).toBe('local');
    expect(existsSync(join(dataDir, 'broker.db'))).toBe(false);
    expect(first.stderr()).toMatch(/"daemon_ready".*"store":"postgres"/);
    const status = await runCli(['status', '--data-dir', dataDir], env);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^database: PostgreSQL\ncommands: .*succeeded 1/m);
    expect(status.stdout).not.toContain(url);
    const doctor = await runCli(['doctor', '--data-dir', dataDir], env);
    expect(doctor.stdout).toMatch(/^ok {3}database: PostgreSQL is reachable, 1 owner\(s\)$/m);
    expect(doctor.stdout + doctor.stderr).not.toContain(url);
    await ai.close();
    await owner.close();
    expect(await first.stop()).toBe(0);

    // A restart on the same database: the history is intact.
    const second = await startDaemon({ dataDir, env });
    daemons.push(second);
    const ai2 = await mcpClient(second);
    expect(await callTool(ai2, 'await_command_result', { pending_id: ran, wait_seconds: 0 })).toMatchObject({
      pending_id: ran,
      status: 'SUCCEEDED',
    });
    const owner2 = await OwnerSocket.open(second);
    expect(owner2.snapshotView(ran)).toMatchObject({ state: 'succeeded' });
    const waiting = await queue(ai2, 'mark', { word: 'two' });
    await owner2.view(waiting, (v) => v.state === 'awaiting_review', 'the waiting command');

    // The database goes away.
    await pg.stop('immediate');
    const refused = (await ai2.callTool({
      name: 'run_command_wait',
      arguments: { command: 'mark', args: { word: 'three' }, wait_seconds: 0 },
    })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect((refused.content[0] as { text: string }).text).toMatch(
      /^Unavailable: the shared database is out of reach/,
    );
    // An owner's approval cannot be recorded: that owner's socket is closed to resync (1011, as for any
    // store failure: owner/frames.ts), and nothing is decided. A new socket still opens (from memory).
    await expect(owner2.request({ type: 'approve', id: waiting, version: 1 })).rejects.toThrow(
      /socket closed \(1011\)/,
    );
    const owner3 = await OwnerSocket.open(second);
    expect(owner3.snapshotView(waiting)).toMatchObject({ state: 'awaiting_review', version: 1 });
    // Nothing was decided: the daemon still answers, and the command still waits.
    expect(
      await callTool(ai2, 'await_command_result', { pending_id: waiting, wait_seconds: 0 }),
    ).toMatchObject({
      status: 'PENDING',
      phase: 'awaiting_review',
    });
    expect(readMarks(marks)).toEqual(['one']);
    expect(second.child.exitCode).toBeNull();
    // `status` says where the data is, and that it cannot be read now.
    const away = await runCli(['status', '--data-dir', dataDir], env);
    expect(away.code).toBe(0);
    expect(away.stdout).toMatch(/^database: PostgreSQL, out of reach \(.+\)\ncommands: unknown$/m);
    const sick = await runCli(['doctor', '--data-dir', dataDir], env);
    expect(sick.code).toBe(1);
    expect(sick.stdout).toMatch(/^FAIL database: PostgreSQL, out of reach \(.+\)$/m);

    // Back: the same daemon works again, no restart.
    await pg.start();
    expect(await pg.sql(db, `SELECT state || ' ' || version FROM commands WHERE id = '${waiting}'`)).toBe(
      'awaiting_review 1',
    );
    expect(await pg.sql(db, "SELECT count(*) FROM commands WHERE body LIKE '%three%'")).toBe('0');
    // The pool reconnects on the next write: the first approval after the restart goes through.
    expect((await owner3.request({ type: 'approve', id: waiting, version: 1 })).ok).toBe(true);
    await owner3.view(waiting, (v) => v.state === 'succeeded', 'the approved command to succeed');
    const third = await queue(ai2, 'mark', { word: 'four' });
    expect((await owner3.request({ type: 'approve', id: third, version: 1 })).ok).toBe(true);
    await owner3.view(third, (v) => v.state === 'succeeded', 'a new command to run');
    expect(readMarks(marks)).toEqual(['one', 'two', 'four']);
    expect(second.stderr()).toMatch(/database_unavailable/);
    await waitFor(() => /database_back/.test(second.stderr()), 'the daemon to log that the database is back');
    expect(second.stderr()).not.toContain(url);
    await ai2.close();
    await owner3.close();
  });

  it('a command that finishes while the database is away keeps its outcome: recorded once it is back, run once', async () => {
    const url = await pg.createDatabase();
    const db = url.split('/').pop()!;
    const dataDir = makeDataDir();
    const marker = join(dataDir, 'marker');
    const d = await startDaemon({
      dataDir,
      env: { OGF_BROKER_DATABASE_URL: url },
      config: {
        commands: {
          // Runs ~1.5 s, then leaves its mark and exits 0: it finishes while the database is stopped.
          slow: {
            description: 'Mark after a moment',
            argv: [
              process.execPath,
              '-e',
              'setTimeout(() => require("fs").appendFileSync(process.argv[1], "done\\n"), 1500)',
              marker,
            ],
            timeout_s: 30,
          },
        },
      },
    });
    daemons.push(d);
    const ai = await mcpClient(d);
    const owner = await OwnerSocket.open(d);
    const id = await queue(ai, 'slow', {});
    expect((await owner.request({ type: 'approve', id, version: 1 })).ok).toBe(true);
    await owner.view(id, (v) => v.state === 'running', 'the command to run');
    await pg.stop('immediate');
    try {
      await waitFor(() => readMarks(marker).length > 0, 'the child to finish while the database is away');
      // The outcome cannot be written yet: the daemon retries it (core/runtime/launches.ts) and says why.
      await waitFor(() => /commit_failed/.test(d.stderr()), 'the failed outcome commit to be logged');
    } finally {
      await pg.start();
    }
    await owner.view(id, (v) => v.state === 'succeeded', 'the outcome recorded once the database is back');
    expect(await pg.sql(db, `SELECT state FROM commands WHERE id = '${id}'`)).toBe('succeeded');
    expect(readMarks(marker)).toEqual(['done']);
    await ai.close();
    await owner.close();
    await d.stop();
  });

  it('`token owner` on the shared database: a running daemon honours the new owner at once (the change feed)', async () => {
    const url = await pg.createDatabase();
    const env = { OGF_BROKER_DATABASE_URL: url };
    const d = await startDaemon({ env, config: ownerCatalog(join(makeDataDir(), 'marks')) });
    daemons.push(d);
    // Contract 16: a second live daemon with the same node_name (both default to the host name) exits 2.
    await expect(startDaemon({ env })).rejects.toThrow(
      /exited 2: .*node_name [a-z][a-z0-9-]*: another live ogf-broker daemon named [a-z][a-z0-9-]* uses this database \(pid \d+ on host/s,
    );
    // Another data dir, as on another machine: the owner lives in the database both share.
    const elsewhere = makeDataDir();
    const r = await runCli(['token', 'owner', '--data-dir', elsewhere, '--name', 'bob'], env);
    expect(r.code).toBe(0);
    const token = /#token=(\S+)$/.exec(r.stdout.trimEnd())?.[1];
    expect(token).toBeDefined();
    expect(existsSync(join(elsewhere, 'broker.db'))).toBe(false);
    // Heard through LISTEN/NOTIFY and read back into the daemon's memory: milliseconds, not a restart.
    const bob = await waitFor(() => bearerSocket(d, token!).catch(() => undefined), 'bob to log in', 5000);
    expect(bob.frames.find((f) => f.type === 'hello')).toMatchObject({ owner: 'bob' });
    await bob.close();
    await d.stop();
  });

  it('[c16.database-url] a bad database URL or variable exits 2 naming it, never echoing the URL (it may hold a password)', async () => {
    const secret = 'mysql://root:hunter2@db.example.com/x';
    const bad = await runCli(['start', '--data-dir', makeDataDir(), '--port', '0'], {
      OGF_BROKER_DATABASE_URL: secret,
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/OGF_BROKER_DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/);
    expect(bad.stderr).not.toContain('hunter2');
    const dir = makeDataDir();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ database_url_from_env: 'FLEET_DB' }));
    const unset = await runCli(['start', '--data-dir', dir, '--port', '0'], { FLEET_DB: undefined });
    expect(unset.code).toBe(2);
    expect(unset.stderr).toMatch(/database_url_from_env: names FLEET_DB, which is not set/);
  });
});
