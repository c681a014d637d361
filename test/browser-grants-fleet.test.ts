/**
 * Contract 16 (v4) in the panel, in real Chromium against two real daemons on one real PostgreSQL: once the
 * panel holds two nodes' commands, `Allow…` says which node's command the grant is for — the card's, by
 * default — and offers every node on purpose; the grant the daemon made names that node, and the grants area
 * shows it. Screenshots go to test-output/grants-fleet-*.png.
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { card, launchBrowser, loginPage, screenshot } from './helpers/browser.js';
import { say, startFleetNode } from './helpers/fleet-node.js';
import { mcpClient, OwnerSocket, queue } from './helpers/owner.js';
import { type Postgres, postgresForFile } from './helpers/postgres.js';

const { server, daemons } = postgresForFile();
let pg: Postgres;
beforeAll(() => {
  pg = server();
});

/**
 * Allow… on card `id`: any arguments, and the node choice `node` (its label), once its test against the past
 * says `tested`; the dialog's text first.
 */
async function allow(page: Page, id: string, node: RegExp, tested: RegExp): Promise<string> {
  const c = card(page, id);
  await c.locator('button.allow:enabled').waitFor();
  await c.getByRole('button', { name: /^Allow/ }).click();
  const dialog = page.getByRole('dialog', { name: /allow/i });
  await dialog.waitFor();
  const words = String(await dialog.textContent());
  await dialog.getByLabel(/^Any arguments/).check();
  await dialog.getByLabel(node).check();
  // The test against the past counts only the chosen node's requests (policy_test's grant.node).
  await dialog.locator('#allow-test').filter({ hasText: tested }).waitFor();
  await screenshot(page, `grants-fleet-${id}`);
  await dialog.getByRole('button', { name: 'Approve and allow' }).click();
  await dialog.waitFor({ state: 'hidden' });
  return words;
}

describe('[c16.grant-node] Allow… on several nodes', { timeout: 240_000 }, () => {
  it('names the card’s node by default and every node only when chosen; the grants area shows each', async () => {
    const url = await pg.createDatabase();
    const alpha = await startFleetNode(daemons, url, 'alpha', undefined, (m) => ({
      commands: { say: say('alpha', m) },
    }));
    const beta = await startFleetNode(daemons, url, 'beta', alpha, (m) => ({
      commands: { say: say('beta', m) },
    }));
    const aiA = await mcpClient(alpha.d);
    const aiB = await mcpClient(beta.d);
    const watcher = await OwnerSocket.open(alpha.d);
    const browser = await launchBrowser();
    try {
      const page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
      await loginPage(page, alpha.d);
      const onAlpha = await queue(aiA, 'say', { word: 'one' });
      const onBeta = await queue(aiB, 'say', { word: 'two' });
      await card(page, onAlpha).waitFor();
      await card(page, onBeta).waitFor();

      // Beta's card, in alpha's panel: by default the grant is beta's.
      const words = await allow(page, onBeta, /^Only node beta’s say/, /allowed 1 of your last 2 requests/);
      expect(words).toContain('On which node');
      expect(words).toMatch(/Every node’s say.*another program/);
      const betas = await watcher.waitFor(
        (f) => f.type === 'grant_upsert' && f.grant.command === 'say' && f.grant.node === 'beta',
        'the grant for beta',
      );
      // Alpha's card: every node, on purpose.
      await allow(page, onAlpha, /^Every node’s say/, /allowed 2 of your last 2 requests/);
      const everyNode = await watcher.waitFor(
        (f) => f.type === 'grant_upsert' && f.grant.command === 'say' && f.grant.node === '*',
        'the grant for every node',
      );
      const row = (gid: string) => page.locator(`#grants-list [data-grant-id="${gid}"]`);
      await row(betas.grant.id).filter({ hasText: 'on node beta' }).waitFor();
      await row(everyNode.grant.id).filter({ hasText: 'on every node' }).waitFor();
      await screenshot(page, 'grants-fleet-list');
    } finally {
      await browser.close();
      await Promise.all([aiA.close(), aiB.close(), watcher.close()]);
    }
    await beta.d.stop();
    await alpha.d.stop();
  });
});
