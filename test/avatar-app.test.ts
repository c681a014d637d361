/**
 * The reference avatar app (`npm run avatar`, contract 6) as a user and a bridge client meet it: the real
 * process on a free port, its page in real Chromium, cues delivered by the real `ogf-bridge-client`.
 * Screenshots go to test-output/avatar-*.png.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { launchBrowser, OUTPUT_DIR, screenshot } from './helpers/browser.js';
import { BRIDGE_CLI, exited, ROOT, waitFor } from './helpers/daemon.js';

let app: ChildProcess;
let pageUrl: string;
let bridgeUrl: string;
let port: number;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let dir: string;
let seq = 0;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function shownSession(): Promise<string> {
  return (await page.locator('[data-session-id]').textContent())!.trim();
}

/** Delivers one cue with the real CLI; returns its line and exit code. */
async function deliver(
  session: string,
  cue: Record<string, unknown>,
): Promise<{ code: number | null; line: Record<string, string> }> {
  const path = join(dir, `cue-${++seq}.json`);
  writeFileSync(
    path,
    JSON.stringify({
      v: 1,
      pending_id: `c_${seq}`,
      bridge_url: bridgeUrl,
      session_id: session,
      cue: { action: 'none', emotion: 'neutral', intensity: 0.5, gaze: 'neutral', ttl_ms: 10_000, ...cue },
      deliver_by: new Date(Date.now() + 20_000).toISOString(),
      delivery_timeout_ms: 5000,
    }),
    { mode: 0o600 },
  );
  const child = spawn(process.execPath, [BRIDGE_CLI, 'deliver', '--session-file', path], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => {
    out += b.toString();
  });
  const code = await exited(child);
  return { code, line: JSON.parse(out) };
}

function rawRequest(opts: {
  method: string;
  path: string;
  headers: Record<string, string>;
}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, ...opts }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ogf-avatar-'));
  app = spawn(process.execPath, [join(ROOT, 'dist', 'examples', 'avatar-app', 'main.js'), '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  app.stdout!.on('data', (b: Buffer) => {
    out += b.toString();
  });
  const m = await waitFor(
    () =>
      /^ogf avatar app ready: page (http:\/\/127\.0\.0\.1:(\d+)\/) bridge (ws:\/\/\S+)$/m.exec(out) ??
      undefined,
    'the ready line',
  );
  pageUrl = m[1]!;
  port = Number(m[2]);
  bridgeUrl = m[3]!;
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1100, height: 720 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: pageUrl.slice(0, -1) });
  page = await context.newPage();
  await page.goto(pageUrl);
  await page.locator('[data-session-id]').filter({ hasText: /-/ }).waitFor();
});

afterAll(async () => {
  await browser?.close();
  if (app && app.exitCode === null) {
    app.kill('SIGTERM');
    await exited(app);
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('the avatar page', () => {
  it('shows its session UUID in the Bridge panel, and the avatar at rest', async () => {
    expect(await shownSession()).toMatch(UUID_RE);
    const avatar = page.locator('[data-avatar]');
    expect(await avatar.getAttribute('data-action')).toBe('none');
    expect(await avatar.getAttribute('data-emotion')).toBe('neutral');
    expect(await avatar.getAttribute('data-gaze')).toBe('neutral');
    await page.locator('[data-copy]').click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(await shownSession());
  });

  it('plays a delivered cue with its message, then returns to neutral after the TTL', async () => {
    const r = await deliver(await shownSession(), {
      action: 'wave',
      emotion: 'happy',
      intensity: 0.9,
      gaze: 'user',
      ttl_ms: 1500,
      message: 'Hello from the test!',
    });
    expect(r.code).toBe(0);
    const avatar = page.locator('[data-avatar][data-action="wave"][data-emotion="happy"][data-gaze="user"]');
    await avatar.waitFor();
    await expect.poll(() => page.locator('[data-message]').textContent()).toBe('Hello from the test!');
    await screenshot(page, 'avatar-cue');
    await page
      .locator('[data-avatar][data-action="none"][data-emotion="neutral"][data-gaze="neutral"]')
      .waitFor();
    await page.locator('[data-message]').waitFor({ state: 'hidden' });
  });

  it('shows every action, emotion and gaze distinctly', { timeout: 120_000 }, async () => {
    // One raw bridge connection carries all 18 cues (the CLI is exercised above and in bridge-client.test.ts).
    const ws = new WebSocket(bridgeUrl);
    await new Promise((r) => ws.once('open', r));
    const nextFrame = () =>
      new Promise<Record<string, unknown>>((r) => ws.once('message', (d) => r(JSON.parse(String(d)))));
    let welcome = nextFrame();
    ws.send(
      JSON.stringify({
        type: 'hello',
        protocol: 'ogf-bridge/1',
        session_id: await shownSession(),
        client: 'test/1',
      }),
    );
    expect(await welcome).toMatchObject({ type: 'welcome', ready: true });
    const play = async (cue: Record<string, unknown>) => {
      welcome = nextFrame();
      ws.send(
        JSON.stringify({
          type: 'cue',
          cue_id: `c_${++seq}`,
          action: 'none',
          emotion: 'neutral',
          gaze: 'neutral',
          ttl_ms: 10_000,
          deliver_by: new Date(Date.now() + 20_000).toISOString(),
          ...cue,
        }),
      );
      return welcome;
    };
    const signature = (what: string) =>
      page.evaluate((w) => {
        const q = (s: string) => document.querySelector(s)!;
        const cs = (s: string) => getComputedStyle(q(s));
        if (w === 'emotion') {
          const mouths = [...document.querySelectorAll('.mouth')].filter(
            (m) => getComputedStyle(m).display !== 'none',
          );
          return mouths.map((m) => m.getAttribute('class')).join(' ');
        }
        if (w === 'gaze') return cs('.eye-left .pupil').transform + cs('.features').transform;
        return ['.arm-left', '.arm-right', '.arm-right .forearm', '.head', '.figure']
          .map(
            (s) =>
              `${cs(s).animationName}|${cs(s).transform.startsWith('matrix') && cs(s).animationName === 'none' ? cs(s).transform : ''}`,
          )
          .join(',');
      }, what);
    const seen: Record<string, Set<string>> = { action: new Set(), emotion: new Set(), gaze: new Set() };
    const values = {
      action: ['none', 'wave', 'nod', 'shake_head', 'small_guts_pose', 'celebrate'],
      emotion: ['neutral', 'happy', 'excited', 'curious', 'surprised', 'concerned', 'sad', 'proud'],
      gaze: ['neutral', 'user', 'content', 'away'],
    } as const;
    for (const [what, list] of Object.entries(values)) {
      for (const v of list) {
        expect(await play({ [what]: v, intensity: 1 })).toMatchObject({ type: 'cue_ack', duplicate: false });
        await page.locator(`[data-avatar][data-${what}="${v}"]`).waitFor();
        await page.waitForTimeout(400); // let the 0.3 s transitions settle
        seen[what]!.add(await signature(what));
        await page.locator('.stage').screenshot({ path: join(OUTPUT_DIR, `avatar-${what}-${v}.png`) });
      }
      expect(seen[what]!.size, `${what}s look distinct`).toBe(list.length);
    }
    ws.close();
  });

  it('Rotate issues a new UUID and the old one stops working', async () => {
    const before = await shownSession();
    page.once('dialog', (d) => void d.accept());
    await page.locator('[data-rotate]').click();
    await expect.poll(shownSession).not.toBe(before);
    const after = await shownSession();
    expect(after).toMatch(UUID_RE);
    const old = await deliver(before, { action: 'nod' });
    expect(old).toMatchObject({ code: 2, line: { outcome: 'not_delivered', code: 'BridgeRejected' } });
    expect(old.line.detail).toContain('SessionUnknown');
    expect((await deliver(after, { action: 'nod' })).code).toBe(0);
  });

  it('unticking Ready makes cues AvatarNotReady', async () => {
    await page.locator('[data-ready]').uncheck();
    await expect
      .poll(() =>
        fetch(new URL('/state', pageUrl))
          .then((r) => r.json() as Promise<{ ready: boolean }>)
          .then((s) => s.ready),
      )
      .toBe(false);
    expect(await deliver(await shownSession(), { action: 'wave' })).toMatchObject({
      code: 2,
      line: { code: 'AvatarNotReady' },
    });
    await page.locator('[data-ready]').check();
    await expect
      .poll(() =>
        fetch(new URL('/state', pageUrl))
          .then((r) => r.json() as Promise<{ ready: boolean }>)
          .then((s) => s.ready),
      )
      .toBe(true);
  });
});

describe('the avatar app stays on loopback', () => {
  it('refuses a foreign Host (DNS rebinding) and a cross-site rotate', async () => {
    const session = await shownSession();
    expect(
      await rawRequest({ method: 'GET', path: '/state', headers: { host: `evil.example:${port}` } }),
    ).toBe(403);
    expect(await rawRequest({ method: 'GET', path: '/', headers: { host: `evil.example:${port}` } })).toBe(
      403,
    );
    expect(
      await rawRequest({
        method: 'POST',
        path: '/rotate',
        headers: { host: `127.0.0.1:${port}`, origin: 'http://evil.example' },
      }),
    ).toBe(403);
    expect(
      await rawRequest({ method: 'POST', path: '/rotate', headers: { host: `127.0.0.1:${port}` } }),
    ).toBe(403);
    expect(await shownSession()).toBe(session);
  });

  it('refuses a bridge upgrade from a foreign browser origin', async () => {
    const ws = new WebSocket(bridgeUrl, { origin: 'http://evil.example' });
    const status = await new Promise<string>((resolve) => {
      ws.on('unexpected-response', (_q, res) => resolve(String(res.statusCode)));
      ws.on('open', () => resolve('open'));
      ws.on('error', (e) => resolve(e.message));
    });
    expect(status).toBe('403');
  });
});
