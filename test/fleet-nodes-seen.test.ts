/**
 * Contract 16, what an owner sees of several nodes, against a real daemon on a real PostgreSQL 15: `status`
 * names the node and lists the live nodes of the `nodes` registry (a second node's row, and its finished
 * command, inserted straight into the database stand for another machine's daemon), and says when the
 * running daemon lost the database; `doctor` names the node; `list` names each command's node; and the
 * panel, in real Chromium at 1280 and 390 px, marks every card with its node once it holds two nodes'
 * commands (none before), and its history search takes a node. Then a second real daemon joins the
 * database: each lists the other live, and its waiting command shows, marked, in the first one's panel and
 * `list`. Screenshots go to test-output/.
 */
import { chmodSync, copyFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, launchBrowser, loginPage, screenshot } from './helpers/browser.js';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { mcpClient, OwnerSocket, ownerCatalog, queue } from './helpers/owner.js';
import { type Postgres, startPostgres } from './helpers/postgres.js';

let pg: Postgres;
let db: string;
let env: Record<string, string>;
let d: RunningDaemon;
let ai: Client;
let owner: OwnerSocket;
let browser: Browser | undefined;
/** alpha's finished and waiting commands, and beta's finished one. */
const ids = { done: '', waiting: '', beta: 'c_betanode00000001' };

/** The registry as the daemons keep it: this daemon's row (unless it wrote its own), beta live, two not. */
async function registerNodes(): Promise<void> {
  await pg.sql(
    db,
    `INSERT INTO nodes (name, host, pid, version, started_at, heartbeat_at)
       VALUES ('alpha', '${hostname()}', ${d.info.pid}, '${d.info.version}', now(), now())
       ON CONFLICT (name) DO NOTHING;
     INSERT INTO nodes (name, host, pid, version, started_at, heartbeat_at, stopped_at) VALUES
       ('beta', 'build-box.example', 4242, '0.1.0', now(), now(), NULL),
       ('gamma', 'old-box', 7, '0.1.0', now() - interval '1 hour', now() - interval '1 minute', NULL),
       ('delta', 'gone-box', 8, '0.1.0', now() - interval '1 hour', now(), now())
     ON CONFLICT (name) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, stopped_at = excluded.stopped_at`,
  );
}

beforeAll(async () => {
  pg = await startPostgres();
  const url = await pg.createDatabase();
  db = url.split('/').pop()!;
  env = { OGF_BROKER_DATABASE_URL: url };
  const dataDir = makeDataDir('ogf-fleet-nodes-');
  d = await startDaemon({
    dataDir,
    env,
    config: { ...ownerCatalog(join(dataDir, 'marks')), node_name: 'alpha' },
  });
  ai = await mcpClient(d);
  owner = await OwnerSocket.open(d);
  ids.done = await queue(ai, 'mark', { word: 'one' });
  expect((await owner.request({ type: 'approve', id: ids.done, version: 1 })).ok).toBe(true);
  await owner.view(ids.done, (v) => v.state === 'succeeded', 'the approved command to succeed');
  ids.waiting = await queue(ai, 'mark', { word: 'two' });
  await owner.view(ids.waiting, (v) => v.state === 'awaiting_review', 'the waiting command');
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await owner?.close();
  await ai?.close();
  await d?.stop();
  await pg?.destroy();
});

/** Another machine's daemon received and ran a command: its row, as that daemon would have written it. */
async function betaCommand(): Promise<void> {
  await pg.sql(
    db,
    `INSERT INTO commands (id, client, request_id, state, version, created_at, body, task, node)
       SELECT '${ids.beta}', client, NULL, state, version, created_at,
         jsonb_set(jsonb_set(body::jsonb, '{id}', '"${ids.beta}"'), '{node}', '"beta"')::text, NULL, 'beta'
       FROM commands WHERE id = '${ids.done}'`,
  );
}

describe('[c16.status-nodes] status and doctor on a shared PostgreSQL', { timeout: 180_000 }, () => {
  it('status names the node and lists the live nodes; doctor names the node', async () => {
    await registerNodes();
    const status = await runCli(['status', '--data-dir', d.dataDir], env);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^running: pid \d+.*\nnode: alpha\nurl: /m);
    expect(status.stdout).toMatch(/^database: PostgreSQL\ncommands: .*succeeded 1.*\nlive nodes: 2\n/m);
    const lines = status.stdout.split('\n');
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^ {2}alpha \\(this data dir\\) {2}host ${hostname()} {2}pid \\d+ {2}version \\S+ {2}heartbeat \\d+\\.\\d s ago$`,
        ),
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^ {2}beta {2}host build-box\.example {2}pid 4242 {2}version 0\.1\.0 {2}heartbeat \d+\.\d s ago$/,
      ),
    );
    // A heartbeat older than 15 s, or a clean stop: not live.
    expect(status.stdout).not.toMatch(/gamma|delta/);
    expect(status.stdout).not.toContain(env.OGF_BROKER_DATABASE_URL);
    const doctor = await runCli(['doctor', '--data-dir', d.dataDir], env);
    expect(doctor.stdout).toMatch(/^ok {3}node: alpha, live on the shared database$/m);
    // Another data dir that would take a live node's name: doctor says a start there would fail.
    const twin = makeDataDir('ogf-fleet-twin-');
    writeFileSync(join(twin, 'config.json'), JSON.stringify({ node_name: 'beta' }));
    // beta beats (as a live daemon would), however long the lines above took on a loaded machine.
    await pg.sql(db, "UPDATE nodes SET heartbeat_at = now() WHERE name = 'beta'");
    const clash = await runCli(['doctor', '--data-dir', twin], env);
    expect(clash.code).toBe(1);
    expect(clash.stdout).toMatch(
      /^FAIL node: beta: a live daemon of that name runs on host build-box\.example \(pid 4242\); one started here would exit 2/m,
    );
  });

  it('status says when the running daemon lost the database, and stops saying it once it is back', async () => {
    await pg.stop('immediate');
    try {
      // The daemon learns it on its next write (or its feed's loss); an MCP call makes it write.
      await ai
        .callTool({
          name: 'run_command_wait',
          arguments: { command: 'mark', args: { word: 'x' }, wait_seconds: 0 },
        })
        .catch(() => undefined);
      await waitFor(() => /database_unavailable/.test(d.stderr()), 'the daemon to log database_unavailable');
      const away = await runCli(['status', '--data-dir', d.dataDir], env);
      expect(away.code).toBe(0);
      expect(away.stdout).toMatch(/^database: PostgreSQL, out of reach \(.+\)\ncommands: unknown\n/m);
      expect(away.stdout).toMatch(
        /^daemon's database: out of reach for \d+ s \(.*\); the daemon answers from memory, but queues and decides nothing until it is back$/m,
      );
      expect(away.stdout).not.toMatch(/^live nodes/m);
    } finally {
      await pg.start();
    }
    await waitFor(() => /database_back/.test(d.stderr()), 'the daemon to log database_back', 15_000);
    await registerNodes();
    const back = await runCli(['status', '--data-dir', d.dataDir], env);
    expect(back.stdout).not.toContain("daemon's database");
    expect(back.stdout).toMatch(/^live nodes: 2$/m);
  }, 60_000);
});

describe("[c16.nodes-list] [c16.nodes-panel] two nodes' commands in list and in the panel", {
  timeout: 240_000,
}, () => {
  /** Visible node marks of the cards on the page, by pending_id. */
  async function marks(page: Page): Promise<Record<string, string>> {
    return page.locator('article.card').evaluateAll((cards) =>
      Object.fromEntries(
        cards
          .filter((c) => !(c as HTMLElement).hidden)
          .map((c) => {
            const m = c.querySelector<HTMLElement>('.node-mark');
            const shown = m !== null && m.offsetWidth > 0;
            return [(c as HTMLElement).dataset.pendingId, shown ? (m.textContent ?? '') : ''];
          }),
      ),
    );
  }

  it('one node: no marks and no node field; two: every card marked, in list and at 1280 and 390 px; the search takes a node', async () => {
    browser = await launchBrowser();
    const wide = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await wide.newPage();
    await loginPage(page, d);
    await card(page, ids.waiting).waitFor();
    await expect.poll(() => marks(page)).toEqual({ [ids.done]: '', [ids.waiting]: '' });
    expect(await page.locator('#search-node').isVisible()).toBe(false);
    const single = await runCli(['list', '--all', '--data-dir', d.dataDir], env);
    expect(single.stdout).not.toMatch(/ node /);

    await betaCommand();
    // The other node's command reaches this daemon's memory through the feed: the next snapshot holds it.
    const list = await waitFor(async () => {
      const r = await runCli(['list', '--all', '--data-dir', d.dataDir], env);
      return r.stdout.includes(ids.beta) ? r.stdout : undefined;
    }, "beta's command in list");
    expect(list).toMatch(new RegExp(`^${ids.beta} {2}SUCCEEDED {2}client local {2}node beta {2}v\\d+`, 'm'));
    expect(list).toMatch(
      new RegExp(`^${ids.waiting} {2}PENDING \\(awaiting review\\) {2}client local {2}node alpha {2}v1`, 'm'),
    );

    await page.reload();
    await card(page, ids.beta).waitFor();
    const both = { [ids.done]: 'node alpha', [ids.waiting]: 'node alpha', [ids.beta]: 'node beta' };
    await expect.poll(() => marks(page)).toEqual(both);
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, 'fleet-nodes-1280');

    // The history search by node: beta's alone, then alpha's alone (search results carry the marks too).
    await page.locator('#search-node').fill('beta');
    await page.getByRole('button', { name: 'Search history' }).click();
    await expect.poll(() => page.locator('#search-status').textContent()).toBe('1 matching command.');
    const history = (p: Page) =>
      p
        .locator('#history article.card:not([hidden])')
        .evaluateAll((n) => n.map((c) => (c as HTMLElement).dataset.pendingId));
    await expect.poll(() => history(page)).toEqual([ids.beta]);
    await page.locator('#search-node').fill('alpha');
    await page.getByRole('button', { name: 'Search history' }).click();
    await expect.poll(() => history(page)).toEqual([ids.done]);
    await screenshot(page, 'fleet-nodes-search-1280');
    await wide.close();

    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
    });
    const small = await phone.newPage();
    await loginPage(small, d);
    await card(small, ids.beta).waitFor();
    await expect.poll(() => marks(small)).toEqual(both);
    const overflow = await small.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    for (const id of Object.keys(both)) {
      const box = await card(small, id).locator('.node-mark').boundingBox();
      expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    }
    await screenshot(small, 'fleet-nodes-390');
    await phone.close();
  }, 90_000);

  it("two real daemons on one database: each lists the other live, and a command waiting on one shows, marked, in the other's panel and list", async () => {
    const dir2 = makeDataDir('ogf-fleet-nodes-2-');
    // Another machine joins with the fleet's tokens (docs/fleet.md): the token hashes are shared.
    for (const f of ['owner.token', 'mcp.token']) {
      copyFileSync(join(d.dataDir, f), join(dir2, f));
      chmodSync(join(dir2, f), 0o600);
    }
    const d2 = await startDaemon({
      dataDir: dir2,
      env,
      config: { ...ownerCatalog(join(dir2, 'marks')), node_name: 'build-2' },
    });
    const ai2 = await mcpClient(d2);
    try {
      const waiting2 = await queue(ai2, 'mark', { word: 'three' });
      const status = await runCli(['status', '--data-dir', dir2], env);
      expect(status.stdout).toMatch(/^node: build-2$/m);
      expect(status.stdout).toMatch(
        new RegExp(`^ {2}alpha {2}host \\S+ {2}pid ${d.info.pid} {2}version `, 'm'),
      );
      expect(status.stdout).toMatch(
        new RegExp(`^ {2}build-2 \\(this data dir\\) {2}host \\S+ {2}pid ${d2.info.pid} {2}version `, 'm'),
      );
      const list = await waitFor(async () => {
        const r = await runCli(['list', '--data-dir', d.dataDir], env);
        return r.stdout.includes(waiting2) ? r.stdout : undefined;
      }, "build-2's waiting command in alpha's list");
      expect(list).toMatch(
        new RegExp(
          `^${waiting2} {2}PENDING \\(awaiting review\\) {2}client local {2}node build-2 {2}v1`,
          'm',
        ),
      );
      const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      await loginPage(page, d);
      await card(page, waiting2).waitFor();
      await expect.poll(() => marks(page).then((m) => m[waiting2])).toBe('node build-2');
      await expect.poll(() => marks(page).then((m) => m[ids.waiting])).toBe('node alpha');
      await page.evaluate(() => window.scrollTo(0, 0));
      await screenshot(page, 'fleet-nodes-two-daemons-1280');
      await context.close();
    } finally {
      await ai2.close();
      await d2.stop();
    }
  }, 90_000);
});
