/**
 * Contract 15 end to end, as a remote AI connects: the real MCP client SDKs' own OAuth support against the
 * real daemon — the 2025 SDK (`@modelcontextprotocol/sdk`) presenting a Client ID Metadata Document served
 * over loopback (`allow_loopback_metadata`), the v2 SDK (`@modelcontextprotocol/client`) registering by DCR —
 * discovery from the 401, PKCE, state, resource, the owner's consent in real Chromium (signed out first:
 * the request survives the login), tokens, tools/list and a call over /mcp landing as the chosen client name
 * in both generations; then refresh rotation and reuse, Disconnect from the panel closing a live session.
 *
 * The SDKs refuse a non-https `clientMetadataUrl`, so the CIMD client hands its URL client_id to the SDK as
 * already known client information: the SDK then does everything else itself, as it would for an https one.
 */
import { mkdirSync } from 'node:fs';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttpTransport,
  UnauthorizedError as ModernUnauthorized,
} from '@modelcontextprotocol/client';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, loginPage, printedLoginUrl, screenshot } from './helpers/browser.js';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { auditRows, echoConfig, MODERN_OPTIONS, TestOwner } from './helpers/mcp.js';
import { postForm, RecordingProvider, startVendor, type Vendor } from './helpers/oauth.js';

const SHOTS = '/tmp/shots-25';
let d: RunningDaemon;
let vendor: Vendor;
let browser: Browser;
let context: BrowserContext;
let owner: TestOwner;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  vendor = await startVendor('Vendor AI');
  d = await startDaemon({ config: echoConfig({ oauth: { enabled: true, allow_loopback_metadata: true } }) });
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  owner = await TestOwner.connect(d);
});

afterAll(async () => {
  owner?.close();
  await browser?.close();
  await d?.stop();
  await vendor?.close();
});

/** The owner opens the authorization URL in Chromium, checks the card, names the connection, allows. */
async function consentInBrowser(page: Page, url: URL, name: string, shot?: string): Promise<URLSearchParams> {
  const before = vendor.callbacks.length;
  await page.goto(url.href);
  const card = page.locator('article.consent-card');
  await card.waitFor();
  if (shot !== undefined) {
    await page.screenshot({ path: `${SHOTS}/${shot}-1280.png`, fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: `${SHOTS}/${shot}-390.png`, fullPage: true });
    await screenshot(page, `oauth-${shot}-390`);
    await page.setViewportSize({ width: 1280, height: 900 });
  }
  await page.getByLabel('Client name for this connection').fill(name);
  await page.getByRole('button', { name: 'Allow' }).and(page.locator(':enabled')).click();
  await waitFor(() => vendor.callbacks.length > before, 'the redirect back to the AI');
  return vendor.callbacks.at(-1)!;
}

describe('[c15.isolation] [c15.consent] a remote AI connects with OAuth, the owner consenting in the panel', () => {
  let cimd: RecordingProvider;
  let page: Page;

  it('the 2025 SDK with a CIMD client: 401 → discovery → consent after logging in → tokens → MCP as the chosen name', async () => {
    cimd = new RecordingProvider(vendor.redirectUri, 'Vendor AI', vendor.clientId);
    const first = new LegacyClient({ name: 'vendor', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${d.url}/mcp`), {
      authProvider: cimd as never,
    });
    await expect(first.connect(transport)).rejects.toThrow(UnauthorizedError);
    const url = cimd.authorizationUrl!;
    expect(url.origin + url.pathname).toBe(`${d.url}/authorize`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('resource')).toBe(`${d.url}/mcp`);
    expect(url.searchParams.get('client_id')).toBe(vendor.clientId);

    // Signed out: the consent page asks for the login, and the request survives the round trip.
    page = await context.newPage();
    await page.goto(url.href);
    await page.getByText('Sign in to the owner panel first').waitFor();
    await page.screenshot({ path: `${SHOTS}/consent-signed-out-1280.png`, fullPage: true });
    await page.goto(await printedLoginUrl(d));
    await page.waitForURL(`${d.url}/oauth/consent`);
    const card = page.locator('article.consent-card');
    await card.waitFor();
    // The host of the client_id, the redirect host, and the suggested name are on the card.
    const text = (await card.textContent()) ?? '';
    expect(text).toContain('Vendor AI');
    expect(text).toContain(new URL(vendor.clientId).host);
    expect(text).toContain(new URL(vendor.redirectUri).host);
    // Click-safe like every decision card: Allow is inert for its first second on screen.
    expect(await page.getByRole('button', { name: 'Allow' }).isDisabled()).toBe(true);
    await page.screenshot({ path: `${SHOTS}/consent-1280.png`, fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: `${SHOTS}/consent-390.png`, fullPage: true });
    await screenshot(page, 'oauth-consent-390');
    await page.setViewportSize({ width: 1280, height: 900 });
    // A name the contract refuses is said at once, and the daemon refuses it too.
    await page.getByLabel('Client name for this connection').fill('Bad Name');
    await page.getByText('must match ^[a-z][a-z0-9_-]{0,31}$').waitFor();
    await page.getByLabel('Client name for this connection').fill('vendorai');
    await page.getByRole('button', { name: 'Allow' }).and(page.locator(':enabled')).click();
    await waitFor(() => vendor.callbacks.length > 0, 'the redirect back to the AI');
    const cb = vendor.callbacks.at(-1)!;
    expect(cb.get('state')).toBe(cimd.lastState);
    expect(cb.get('iss')).toBe(d.url);

    await transport.finishAuth(cb.get('code')!);
    const client = new LegacyClient({ name: 'vendor', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${d.url}/mcp`), { authProvider: cimd as never }),
    );
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('run_command_wait');
    const r = await client.callTool({
      name: 'run_command_wait',
      arguments: { command: 'echo', args: { word: 'hi' }, wait_seconds: 0 },
    });
    const id = (r.structuredContent as { pending_id: string }).pending_id;
    const view = await waitFor(() => owner.views.get(id), 'the owner to see the call');
    expect(view.client).toBe('vendorai');
    await client.close();
    expect(
      auditRows(d).some(
        (a) => a.action === 'oauth_client_connected' && String(a.detail).includes('vendorai'),
      ),
    ).toBe(true);
  });

  it('the v2 SDK registering by DCR, in the 2026-07-28 generation, lands as its own name', async () => {
    const dcr = new RecordingProvider(vendor.redirectUri, 'Second AI');
    const transport = new ModernHttpTransport(new URL(`${d.url}/mcp`), { authProvider: dcr as never });
    const first = new ModernClient({ name: 'second', version: '1' }, MODERN_OPTIONS);
    await expect(first.connect(transport)).rejects.toThrow(ModernUnauthorized);
    expect(dcr.savedClientId).toMatch(/^dcr_/);
    const cb = await consentInBrowser(page, dcr.authorizationUrl!, 'second', 'consent-dcr');
    // The v2 SDK checks iss itself (RFC 9207) when handed the whole callback.
    await transport.finishAuth(cb);
    const client = new ModernClient({ name: 'second', version: '1' }, MODERN_OPTIONS);
    await client.connect(new ModernHttpTransport(new URL(`${d.url}/mcp`), { authProvider: dcr as never }));
    const r = await client.callTool({
      name: 'run_command_wait',
      arguments: { command: 'echo', args: { word: 'two' }, wait_seconds: 0 },
    });
    const id = (r.structuredContent as { pending_id: string }).pending_id;
    expect((await waitFor(() => owner.views.get(id), 'the owner to see the call')).client).toBe('second');
    await client.close();
  });

  it('[c15.tokens] refresh tokens rotate; presenting a rotated one revokes the whole connection', async () => {
    const t = cimd.savedTokens!;
    const next = await postForm(`${d.url}/token`, {
      grant_type: 'refresh_token',
      refresh_token: t.refresh_token,
      client_id: vendor.clientId,
    });
    expect(next.status).toBe(200);
    expect(next.body.refresh_token).not.toBe(t.refresh_token);
    const fresh = next.body.access_token as string;
    const ok = new LegacyClient({ name: 'vendor', version: '1' });
    await ok.connect(
      new StreamableHTTPClientTransport(new URL(`${d.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${fresh}` } },
      }),
    );
    await ok.listTools();
    // The old refresh token again: someone holds a copy. Refused, and everything of the connection ends.
    const reuse = await postForm(`${d.url}/token`, {
      grant_type: 'refresh_token',
      refresh_token: t.refresh_token,
      client_id: vendor.clientId,
    });
    expect(reuse).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const after = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${fresh}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{}',
    });
    expect(after.status).toBe(401);
    const newer = await postForm(`${d.url}/token`, {
      grant_type: 'refresh_token',
      refresh_token: next.body.refresh_token as string,
      client_id: vendor.clientId,
    });
    expect(newer.status).toBe(400);
    expect(
      auditRows(d).some(
        (a) => a.action === 'oauth_client_disconnected' && String(a.detail).includes('refresh_token_reused'),
      ),
    ).toBe(true);
    await ok.close().catch(() => {});
  });

  it('the panel lists connected clients, and Disconnect closes a live MCP session at once', async () => {
    // A fresh connection with a live 2025 session holding its GET stream open.
    const again = new RecordingProvider(vendor.redirectUri, 'Vendor AI', vendor.clientId);
    const t1 = new StreamableHTTPClientTransport(new URL(`${d.url}/mcp`), { authProvider: again as never });
    await expect(new LegacyClient({ name: 'v', version: '1' }).connect(t1)).rejects.toThrow(
      UnauthorizedError,
    );
    const cb = await consentInBrowser(page, again.authorizationUrl!, 'livewire');
    await t1.finishAuth(cb.get('code')!);
    const live = new LegacyClient({ name: 'v', version: '1' });
    let closed = false;
    live.onclose = () => {
      closed = true;
    };
    await live.connect(
      new StreamableHTTPClientTransport(new URL(`${d.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${again.savedTokens!.access_token}` } },
      }),
    );
    await live.listTools();

    const panel = await context.newPage();
    await loginPage(panel, d);
    const row = panel.locator('#oauth-list li[data-client="livewire"]');
    await row.waitFor();
    expect(await row.textContent()).toContain(new URL(vendor.clientId).host);
    // The earlier, revoked connection is gone from the list; the DCR one stays.
    await panel.locator('#oauth-list li[data-client="second"]').waitFor();
    expect(await panel.locator('#oauth-list li[data-client="vendorai"]').count()).toBe(0);
    await panel.screenshot({ path: `${SHOTS}/panel-connected-1280.png`, fullPage: true });
    await panel.getByRole('button', { name: 'Disconnect livewire' }).click();
    // Contract 15 (v4): a confirmation, its grants' box ticked by default.
    await row.getByRole('button', { name: 'Disconnect', exact: true }).click();
    await row.waitFor({ state: 'detached' });
    // The session is gone at once: its next request is refused, and the token with it.
    await expect(live.listTools()).rejects.toThrow();
    const r = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${again.savedTokens!.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{}',
    });
    expect(r.status).toBe(401);
    expect(
      auditRows(d).some(
        (a) =>
          a.action === 'oauth_client_disconnected' &&
          String(a.detail).includes('livewire') &&
          a.actor === 'owner',
      ),
    ).toBe(true);
    void closed;
    await live.close().catch(() => {});
  });

  it('another origin cannot frame the consent page (clickjacking: frame-ancestors none)', async () => {
    const page2 = await context.newPage();
    await page2.goto(`${vendor.base}/frame?src=${encodeURIComponent(`${d.url}/oauth/consent`)}`);
    await page2.locator('#f').waitFor();
    // Give the frame its chance to load, then look into every frame: none shows the consent page.
    await page2.waitForLoadState('load');
    for (const f of page2.frames()) expect(await f.locator('body.consent').count()).toBe(0);
    await page2.close();
  });
});
