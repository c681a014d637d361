/**
 * Contract 15 (v4) in real Chromium, as the owner meets it (issue 35 findings 5, 7 and 8b): a flood of
 * /authorize calls from a stranger while the owner's consent card is open does not push it out (Allow still
 * works); a DCR client calling itself "acme" after acme was disconnected is offered `acme-2`, and choosing
 * `acme` by hand shows what it inherits with a box Allow needs ticked (screenshots at 1280 and 390 px in
 * test-output/); a redirect URI with a custom scheme is shown as such (`https.claude.ai://claude.ai/cb` is
 * "an app on this device: https.claude.ai:", never "claude.ai"); the panel's Disconnect ends the
 * connection's grants, the box ticked by default.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, loginPage, screenshot } from './helpers/browser.js';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { auditRows, echoConfig, httpClient, structured, TestOwner } from './helpers/mcp.js';
import {
  authorizeUrl,
  connectByHand,
  getAuthorize,
  pkce,
  startVendor,
  type Vendor,
} from './helpers/oauth.js';
import { OwnerSocket } from './helpers/owner.js';
import { type PanelLogin, panelLogin } from './helpers/panel.js';

let d: RunningDaemon;
let vendor: Vendor;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let login: PanelLogin;
let owner: TestOwner;
let grants: OwnerSocket;

beforeAll(async () => {
  vendor = await startVendor('Acme AI');
  d = await startDaemon({ config: echoConfig({ oauth: { enabled: true, allow_loopback_metadata: true } }) });
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  await loginPage(page, d);
  login = await panelLogin(d);
  owner = await TestOwner.connect(d);
  grants = await OwnerSocket.open(d);
});

afterAll(async () => {
  owner?.close();
  await grants?.close();
  await browser?.close();
  await d?.stop();
  await vendor?.close();
});

async function register(clientName: string, redirect: string): Promise<string> {
  const r = await fetch(`${d.url}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: clientName, redirect_uris: [redirect] }),
  });
  expect(r.status).toBe(201);
  return ((await r.json()) as { client_id: string }).client_id;
}

function authorizeLink(clientId: string, redirect: string): string {
  return authorizeUrl(d, {
    client_id: clientId,
    redirect_uri: redirect,
    state: 'st',
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
    resource: `${d.url}/mcp`,
  });
}

/** The owner opens the authorization link in the signed-in browser; the card once shown. */
async function openCard(link: string) {
  await page.goto(link);
  const card = page.locator('article.consent-card');
  await card.waitFor();
  return card;
}

const allow = () => page.getByRole('button', { name: 'Allow' }).and(page.locator(':enabled'));

/** Allow, then the browser back at the AI's callback (its navigation done, so the next goto is the test's). */
async function allowAndReturn(): Promise<URLSearchParams> {
  const before = vendor.callbacks.length;
  await allow().click();
  await page.waitForURL((u) => u.pathname === '/callback');
  await page.locator('#done').waitFor();
  await waitFor(() => vendor.callbacks.length > before, 'the redirect back to the AI');
  return vendor.callbacks.at(-1)!;
}

describe('[c15.flood] a flood of /authorize does not push out the card the owner has open', () => {
  it('100 stranger /authorize calls while the card is open; Allow still works', async () => {
    await openCard(authorizeLink(vendor.clientId, vendor.redirectUri));
    for (let i = 0; i < 100; i++) {
      const a = await getAuthorize(authorizeLink(vendor.clientId, vendor.redirectUri));
      expect(a.status).toBe(302);
    }
    await page.getByLabel('Client name for this connection').fill('owner-ai');
    expect((await allowAndReturn()).get('code')).toBeTruthy();
  });
});

describe('[c15.inherit] the card shows what a used name inherits, and Allow needs the tick', () => {
  it('a DCR "acme" after acme was disconnected: offered acme-2; acme by hand shows its history and grants', async () => {
    const c = await connectByHand(d, login, vendor, 'acme');
    const mcp = await httpClient(`${d.url}/mcp`, c.access_token);
    const r = await mcp.callTool({
      name: 'run_command_wait',
      arguments: { command: 'echo', args: { word: 'secret' }, wait_seconds: 0 },
    });
    await owner.approve(structured(r as never).pending_id as string);
    await mcp.close();
    expect(
      await grants.request({ type: 'grant', command: 'echo', client: 'acme', ttl_s: 900 }),
    ).toMatchObject({
      ok: true,
    });
    // Disconnected from the panel with its grant kept (the box unticked).
    const panel = await context.newPage();
    await panel.goto(`${d.url}/`);
    const row = panel.locator('#oauth-list li[data-client="acme"]');
    await row.waitFor();
    await panel.getByRole('button', { name: 'Disconnect acme' }).click();
    const endGrants = row.getByLabel(/Also end its grants/);
    expect(await endGrants.isChecked()).toBe(true);
    expect(await row.textContent()).toContain('1 live grant');
    await screenshot(panel, 'oauth-disconnect-confirm-1280');
    await endGrants.uncheck();
    await row.getByRole('button', { name: 'Disconnect', exact: true }).click();
    await row.waitFor({ state: 'detached' });
    await panel.close();

    const stranger = await register('acme', vendor.redirectUri);
    await openCard(authorizeLink(stranger, vendor.redirectUri));
    const name = page.getByLabel('Client name for this connection');
    expect(await name.inputValue()).toBe('acme-2');
    await name.fill('acme');
    const inherit = page.getByLabel(/acme has 1 command in the history and 1 live grant/);
    await inherit.waitFor();
    expect(await inherit.isChecked()).toBe(false);
    await screenshot(page, 'oauth-consent-inherit-1280');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'oauth-consent-inherit-390');
    await page.setViewportSize({ width: 1280, height: 900 });
    // Unticked, Allow does not go through.
    const before = vendor.callbacks.length;
    await allow().click();
    await page
      .locator('.card-msg')
      .getByText(/tick the box/i)
      .waitFor();
    expect(vendor.callbacks.length).toBe(before);
    await inherit.check();
    expect((await allowAndReturn()).get('code')).toBeTruthy();
  });
});

describe('[c15.redirect-scheme] the card shows a redirect’s scheme when it is not https', () => {
  it('https.claude.ai://claude.ai/cb is an app on this device, never "claude.ai"; loopback http is said', async () => {
    const app = await register('Claude', 'https.claude.ai://claude.ai/cb');
    const card = await openCard(authorizeLink(app, 'https.claude.ai://claude.ai/cb'));
    const answers = card.locator('.consent-row', { hasText: 'Answers go to' });
    expect(await answers.textContent()).toContain('an app on this device: https.claude.ai:');
    expect(await answers.locator('.host').count()).toBe(0);
    await screenshot(page, 'oauth-consent-app-scheme-1280');

    const local = await openCard(authorizeLink(vendor.clientId, vendor.redirectUri));
    const there = local.locator('.consent-row', { hasText: 'Answers go to' });
    expect(await there.textContent()).toContain(
      `a program on this computer: http://${new URL(vendor.base).host}`,
    );
  });
});

describe('[c15.inherit] Disconnect in the panel ends the connection’s grants by default', () => {
  it('ticked by default: the grant ends with the connection', async () => {
    await connectByHand(d, login, vendor, 'ender');
    const g = await grants.request({ type: 'grant', command: 'echo', client: 'ender', ttl_s: 900 });
    const grantId = (g.grant as { id: string }).id;
    const panel = await context.newPage();
    await panel.goto(`${d.url}/`);
    const row = panel.locator('#oauth-list li[data-client="ender"]');
    await row.waitFor();
    await panel.getByRole('button', { name: 'Disconnect ender' }).click();
    await row.getByRole('button', { name: 'Disconnect', exact: true }).click();
    await row.waitFor({ state: 'detached' });
    await waitFor(
      () => auditRows(d).some((a) => a.action === 'grant_revoked' && String(a.detail).includes(grantId)),
      'the grant to end',
    );
    await panel.close();
  });
});
