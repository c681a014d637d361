/**
 * Attack: self-approval through the owner's cookie (contracts.md 5, v2). Browsers scope cookies by host,
 * not by port, and `SameSite=Strict` counts another 127.0.0.1 port as the same site — so any local server
 * the AI gets started (a "dev server" behind an approved command) receives `ogf_owner_session` as soon as
 * the owner opens it. That cookie alone must not open `/owner/ws`: the socket also needs the panel key,
 * which the login page keeps in `localStorage` (scoped by port) and sends as the subprotocol
 * `ogf-owner.<key>`.
 *
 * The attacker here is real: a second HTTP server of this test's own on another 127.0.0.1 port, visited by
 * real Chromium after it logged in from the printed URL. It records the Cookie header it receives, and then
 * — from Node, where it may forge any header — tries to open the owner WebSocket and approve a queued
 * command. Every try must be refused with 401, and the command must still be awaiting review.
 */
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { card, launchBrowser, loginPage } from './helpers/browser.js';
import { makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { callTool, mcpClient, OwnerSocket, ownerCatalog, queue, readMarks, wsUrl } from './helpers/owner.js';

let d: RunningDaemon;
let ai: Client;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let attacker: Server;
let attackerUrl: string;
let markFile: string;
/** Every Cookie header the attacker's server received (navigation, sub-resources, fetches). */
const stolen: string[] = [];
/** How many times an attacker page reported its attack done. */
let attackerDone = 0;

beforeAll(async () => {
  const dataDir = makeDataDir('ogf-attack-cookie-');
  markFile = join(dataDir, 'marks.txt');
  d = await startDaemon({ dataDir, config: ownerCatalog(markFile) });
  ai = await mcpClient(d);
  attacker = createServer((req, res) => {
    if (req.headers.cookie !== undefined) stolen.push(req.headers.cookie);
    if (req.url === '/logout-attack') {
      // Same site as the daemon (another port of 127.0.0.1), so the browser sends the owner's cookie along.
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><title>dev server</title><script>fetch(${JSON.stringify(`${d.url}/logout`)}, { method: 'POST', credentials: 'include', mode: 'no-cors' }).finally(() => fetch('/done'))</script>`,
      );
      return;
    }
    if (req.url === '/plant') {
      // A cookie for 127.0.0.1 (any port) with a longer Path: sent before the daemon's own on /owner/*.
      res.writeHead(200, {
        'Content-Type': 'text/html; charset=utf-8',
        'Set-Cookie': 'ogf_owner_session=planted-by-the-dev-server; Path=/owner',
      });
      res.end('<!doctype html><title>dev server</title><p>hello</p>');
      return;
    }
    if (req.url === '/done') attackerDone++;
    if (req.url === '/') {
      // The "dev server" page: a script that calls home, as any page may.
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>dev server</title><script>fetch("/api/ping")</script><p>hello</p>');
      return;
    }
    res.writeHead(204);
    res.end();
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`;
  browser = await launchBrowser();
  context = await browser.newContext();
  page = await context.newPage();
});

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (attacker ? attacker.close(() => resolve()) : resolve()));
  await ai?.close();
  await d?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

type Outcome = { status: number } | { approved: boolean; code?: string };

/**
 * What the attacker gets for one set of headers and subprotocols: the HTTP status of a refused upgrade,
 * or — when the socket opens — whether its approve of `id` went through.
 */
function tryToApprove(id: string, headers: Record<string, string>, protocols: string[]): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(d), protocols, { headers });
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0 });
    });
    ws.once('error', reject);
    ws.on('message', (data) => {
      const f = JSON.parse(String(data)) as {
        type: string;
        commands?: Array<{ id: string; version: number }>;
        ok?: boolean;
        error?: { code: string };
      };
      if (f.type === 'snapshot') {
        const v = f.commands?.find((c) => c.id === id);
        ws.send(JSON.stringify({ type: 'approve', req_id: 'steal', id, version: v?.version ?? 1 }));
      } else if (f.type === 'reply') {
        ws.close();
        resolve(f.ok === true ? { approved: true } : { approved: false, code: f.error?.code ?? '' });
      }
    });
  });
}

describe('[c5.owner-key] a local server on another port gets the owner cookie, never the panel key', () => {
  it('the attacker server receives the session cookie once the logged-in owner visits it', async () => {
    await loginPage(page, d);
    await page.goto(attackerUrl);
    await waitFor(() => stolen.some((c) => c.includes('ogf_owner_session=')), 'the cookie at the attacker');
    // The key lives in the daemon origin's localStorage, which the attacker's origin cannot read.
    expect(await page.evaluate(() => JSON.stringify(localStorage))).toBe('{}');
  });

  it('that cookie, with or without Origin, with a guessed or no subprotocol, is refused 401 and approves nothing', async () => {
    const id = await queue(ai, 'mark', { word: 'stolen' }, 'Innocent-looking request.');
    const cookie = stolen
      .find((c) => c.includes('ogf_owner_session='))!
      .split(';')
      .map((p) => p.trim())
      .find((p) => p.startsWith('ogf_owner_session='))!;
    const tries: Array<[string, Record<string, string>, string[]]> = [
      ['cookie alone, no Origin', { Cookie: cookie }, []],
      ['cookie with the daemon’s own Origin', { Cookie: cookie, Origin: d.url }, []],
      ['cookie with the attacker’s Origin', { Cookie: cookie, Origin: attackerUrl.slice(0, -1) }, []],
      ['cookie with the bare subprotocol', { Cookie: cookie }, ['ogf-owner']],
      [
        'cookie with a guessed key',
        { Cookie: cookie, Origin: d.url },
        ['ogf-owner', `ogf-owner.${'A'.repeat(43)}`],
      ],
      ['cookie with an empty key', { Cookie: cookie }, ['ogf-owner.']],
    ];
    const outcomes: Record<string, Outcome> = {};
    for (const [what, headers, protocols] of tries)
      outcomes[what] = await tryToApprove(id, headers, protocols);
    expect(outcomes).toEqual(Object.fromEntries(tries.map(([what]) => [what, { status: 401 }])));
    // Nothing was decided: the command still waits for the owner, and nothing ran.
    const o = await OwnerSocket.open(d);
    expect(o.snapshotView(id)).toMatchObject({ state: 'awaiting_review', version: 1 });
    await o.close();
    expect(await callTool(ai, 'await_command_result', { pending_id: id, wait_seconds: 0 })).toMatchObject({
      status: 'PENDING',
    });
    expect(readMarks(markFile)).toEqual([]);
  });

  it('the owner’s own panel still works, also in a new tab, and the key is never logged or in a URL', async () => {
    const id = await queue(ai, 'mark', { word: 'owners' });
    const tab = await context.newPage();
    const urls: string[] = [];
    tab.on('request', (r) => urls.push(r.url()));
    await tab.goto(`${d.url}/`);
    await tab.locator('#connection[data-state="live"]').waitFor();
    const key = await tab.evaluate(() => localStorage.getItem('ogf-owner-key'));
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await card(tab, id)
      .getByRole('button', { name: /^Approve/ })
      .click();
    await tab.locator(`article[data-pending-id="${id}"][data-status="SUCCEEDED"]`).waitFor();
    expect(readMarks(markFile)).toEqual(['owners']);
    expect(d.stderr()).not.toContain(key);
    expect(d.stdout()).not.toContain(key);
    expect(urls.filter((u) => u.includes(key!))).toEqual([]);
    expect(stolen.filter((c) => c.includes(key!))).toEqual([]);
    await tab.close();
  });

  it('[c5.logout-origin] a page on the other port posting to /logout does not log the owner out', async () => {
    await page.goto(`${d.url}/`);
    await page.locator('#connection[data-state="live"]').waitFor();
    const evil = await context.newPage();
    await evil.goto(`${attackerUrl}logout-attack`);
    await waitFor(() => attackerDone > 0, 'the attacker page’s logout attempt');
    await evil.close();
    // The owner's session lives: its cookie and key still open the socket, and the panel is still live.
    const probe = await page.evaluate(async () => {
      const key = localStorage.getItem('ogf-owner-key') ?? '';
      return (await fetch('/owner/session', { headers: { 'X-OGF-Owner-Key': key } })).status;
    });
    expect(probe).toBe(200);
    const id = await queue(ai, 'mark', { word: 'stillhere' });
    await card(page, id).waitFor();
    expect(await page.locator('#connection').getAttribute('data-state')).toBe('live');
  });

  it('[c5.cookie-shadow] a session cookie the other port plants with a longer Path does not log the owner out', async () => {
    await loginPage(page, d);
    const evil = await context.newPage();
    await evil.goto(`${attackerUrl}plant`);
    const planted = (await context.cookies()).filter((c) => c.name === 'ogf_owner_session');
    expect(planted.map((c) => c.path).sort()).toEqual(['/', '/owner']);
    await evil.close();
    // A new tab: its socket upgrade to /owner/ws carries the planted value first, then the real one.
    const tab = await context.newPage();
    await tab.goto(`${d.url}/`);
    await tab.locator('#connection[data-state="live"]').waitFor();
    const id = await queue(ai, 'mark', { word: 'shadowed' });
    await card(tab, id).waitFor();
    await tab.close();
  });
});
