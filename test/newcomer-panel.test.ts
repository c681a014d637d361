/**
 * Issue 19 finding 5, in real Chromium: the empty panel of a new owner says how to connect an AI (the MCP
 * URL and the exact token command, never a token), what the AI can do right now (catalog commands, each
 * upstream with its state and exposed tool count, the avatar bridge) and where the docs are; an upstream
 * that connects after the panel opened shows as connected without a reload. Real daemon on a non-default
 * data dir, real upstream process held back by a gate file, real SDK client over HTTP.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser, loginPage, screenshot } from './helpers/browser.js';
import { ROOT, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { call, echoConfig, httpClient, type McpClient } from './helpers/mcp.js';

const UPSTREAM = join(ROOT, 'test', 'fixtures', 'test-upstream.mjs');
const top = mkdtempSync(join(tmpdir(), 'ogf-newcomer-panel-'));
/** The upstream process waits for this file before it starts serving: "connects after start", on cue. */
const gate = join(top, 'gate');
/** Not the default data dir, and a name that needs quoting in a shell. */
const dataDir = join(top, 'broker data');
mkdirSync(dataDir, { mode: 0o700 });
let d: RunningDaemon;
let mcp: McpClient;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  const waitThenServe = `while [ ! -e "$1" ]; do sleep 0.05; done; exec "$2" "$3" ok`;
  d = await startDaemon({
    dataDir,
    config: echoConfig({
      ogf_bridge: { url: 'ws://127.0.0.1:9/ogf-bridge' },
      upstreams: {
        notes: {
          argv: ['/bin/sh', '-c', waitThenServe, 'sh', gate, process.execPath, UPSTREAM],
          tools: ['echo', 'fail', 'reject', 'hang'],
        },
      },
    }),
  });
  mcp = await httpClient(d.info.mcp_url, d.mcpToken);
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await loginPage(page, d);
});

afterAll(async () => {
  await browser?.close();
  await mcp?.close();
  await d?.stop();
});

it('[c5.first-run-panel] the empty panel shows the MCP URL, the token command, what the AI can do and the docs; an upstream connecting later shows live', async () => {
  const help = page.locator('#first-run');
  await help.waitFor({ state: 'visible' });
  const notes = help.locator('[data-upstream="notes"]');
  expect(await notes.getAttribute('data-connected')).toBe('false');
  let text = await help.innerText();
  expect(text).toContain('Connect an AI');
  expect(text).toContain(d.info.mcp_url);
  // The same exact command as the start banner: --data-dir of this non-default data dir, shell-quoted.
  const banner = /^MCP token: (.+)$/m.exec(d.stdout())?.[1];
  expect(banner).toBeDefined();
  expect(await help.locator('.fr-cmd').innerText()).toBe(banner);
  expect(banner).toContain(`--data-dir '${d.dataDir}'`);
  expect(text).toMatch(/Catalog commands \(run_command_wait\): echo\./);
  expect(text).toContain('Avatar bridge (ogf_cue): on');
  expect(text).toContain('README.md');
  expect(text).toContain('docs/clients.md');
  expect(text).toContain('not connected yet');

  // The upstream starts serving now; the panel follows without a reload (a `setup` frame).
  writeFileSync(gate, '');
  await help.locator('[data-upstream="notes"][data-connected="true"]').waitFor({ timeout: 30_000 });
  text = await help.innerText();
  expect(text).toContain('Upstream notes: connected, 4 tools exposed');
  // Never a token in the panel.
  const html = await page.content();
  expect(html).not.toContain(d.mcpToken);
  expect(html).not.toContain(d.ownerToken);

  // What the panel says to run works as pasted: its token opens /mcp.
  const run = spawnSync('/bin/sh', ['-c', banner!], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  expect(run.stdout.trim().split('\n').at(-1)).toBe(d.mcpToken);

  await screenshot(page, 'newcomer-panel-1280');
  await page.setViewportSize({ width: 390, height: 844 });
  await help.waitFor({ state: 'visible' });
  await screenshot(page, 'newcomer-panel-390');
  await page.setViewportSize({ width: 1280, height: 900 });

  // A request arrives: the queue shows it, the help steps aside; it returns once nothing waits.
  const pending = call(mcp, 'run_command_wait', { command: 'echo', args: { word: 'hi' }, wait_seconds: 0 });
  await page.locator('article[data-status="PENDING"]').first().waitFor();
  await help.waitFor({ state: 'hidden' });
  await pending;
  await waitFor(async () => (await page.locator('article[data-status="PENDING"]').count()) === 1, 'card');
});
