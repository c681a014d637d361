/**
 * Attack (issue 19, found while testing its fixes): blind the owner through the size of owner frames.
 * Output was already cut to 16 KiB per stream in owner Views (contract 5 (v2)), but every View carried its
 * command's `args` whole: an AI that queues ~1 MiB upstream calls — some left PENDING, the rest cancelled
 * at once, so the pending caps never bite and nothing reaches a decision — puts ~110 MB into every owner
 * snapshot (every non-final command plus the newest 200 final ones), which the panel must parse on every
 * (re)connect and which killed a test owner socket. Now a View carries arguments over 16 KiB of JSON as a
 * bounded preview (`args_truncated`, `args_bytes`, `args_cut`), the owner fetches the whole arguments on
 * demand with the `args` frame, and approving still sends exactly what the AI gave.
 *
 * Real daemon, the official filesystem server behind the gate, a real SDK client over HTTP, real owner
 * sockets, the real `ogf-broker list`, real Chromium.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, launchBrowser, loginPage, OUTPUT_DIR } from './helpers/browser.js';
import { type RunningDaemon, runCli } from './helpers/daemon.js';
import { call, type McpClient, structured, textOf } from './helpers/mcp.js';
import { type Frame, OwnerSocket } from './helpers/owner.js';
import { notesBehindGate } from './helpers/upstreams.js';

const files = mkdtempSync(join(tmpdir(), 'ogf-attack-frames-'));
/** Calls left PENDING (the per-client cap is 100) and calls queued and cancelled at once. */
const PENDING = 20;
const CANCELLED = 90;
/** Each call's `content`: just under the 1 MiB body limit of /mcp once wrapped in JSON-RPC. */
const BIG = 1_000_000;
/** What a snapshot of these 110 calls may weigh: was ~110 MB. */
const SNAPSHOT_MAX = 16 * 2 ** 20;

let d: RunningDaemon;
let ai: McpClient;
const sent = new Map<string, Record<string, unknown>>();

function floodArgs(i: number): Record<string, unknown> {
  return { path: join(files, `flood-${i}.txt`), content: `${i} ${'A'.repeat(BIG)}` };
}

/** UTF-8 bytes of a value's JSON. */
function jsonBytes(v: unknown): number {
  return Buffer.byteLength(JSON.stringify(v));
}

beforeAll(async () => {
  ({ d, ai } = await notesBehindGate(files, { wait_seconds: 0 }));
  for (let i = 0; i < PENDING + CANCELLED; i++) {
    const args = floodArgs(i);
    const r = await call(ai, 'notes__write_file', args);
    expect(r.isError, textOf(r)).toBeFalsy();
    const id = String(structured(r).pending_id);
    sent.set(id, args);
    if (i >= PENDING) await call(ai, 'cancel_command', { pending_id: id });
  }
}, 300_000);

afterAll(async () => {
  await ai?.close();
  await d?.stop();
});

describe('[c5.owner-frames-bounded] owner frames stay bounded whatever arguments the AI sends', () => {
  it('[c5.owner-frames-bounded] a snapshot of 110 calls of 1 MiB each is bounded; each View is a preview flagged args_truncated', async () => {
    const owner = await OwnerSocket.open(d);
    const raw = owner.raw.find((t) => t.startsWith('{"type":"snapshot"'))!;
    console.info(`snapshot of ${sent.size} calls of ~1 MiB: ${raw.length} bytes`);
    expect(raw.length).toBeLessThan(SNAPSHOT_MAX);
    const snapshot = owner.frames.find((f) => f.type === 'snapshot')!;
    const views = (snapshot.commands as Frame[]).filter((v) => sent.has(v.id));
    expect(views).toHaveLength(PENDING + CANCELLED);
    expect(views.filter((v) => v.status === 'PENDING')).toHaveLength(PENDING);
    for (const v of views) {
      const args = sent.get(v.id)!;
      expect(JSON.stringify(v).length).toBeLessThan(24 * 1024);
      expect(v.args_truncated).toBe(true);
      expect(v.args_bytes).toBe(jsonBytes(args));
      // Small arguments stay whole and exact; the large one is named, sized and started, never hidden.
      expect(v.args).toEqual({ path: args.path });
      expect(v.args_cut).toEqual([
        {
          name: 'content',
          at: 1,
          bytes: jsonBytes(args.content),
          start: JSON.stringify(args.content).slice(0, 512),
        },
      ]);
    }
    // A new call arrives as an upsert of the same bounded shape.
    const late = floodArgs(500);
    const r = await call(ai, 'notes__write_file', late);
    const lateId = String(structured(r).pending_id);
    const upsert = await owner.upsert(lateId, (v) => v.state === 'awaiting_review', 'the late upsert');
    expect(upsert.args_truncated).toBe(true);
    expect(
      owner.raw.find((t) => t.includes(lateId) && t.startsWith('{"type":"upsert"'))!.length,
    ).toBeLessThan(24 * 1024);
    await call(ai, 'cancel_command', { pending_id: lateId });
    // History pages are Views too (a page stops at ~8 MiB of stored records: a few of these).
    const history = await owner.request({ type: 'history', limit: 500 });
    const paged = (history.commands as Frame[]).filter((v) => sent.has(v.id));
    expect(paged.length).toBeGreaterThan(0);
    for (const v of paged) expect(v.args_truncated).toBe(true);
    expect(owner.raw.find((t) => t.startsWith('{"type":"history"'))!.length).toBeLessThan(SNAPSHOT_MAX);
    await owner.close();
  });

  it('[c5.owner-frames-bounded] the args frame returns the exact arguments; unknown ids are NotFound; bad frames name the field', async () => {
    const owner = await OwnerSocket.open(d);
    for (const [id, args] of [...sent].slice(0, 3).concat([...sent].slice(-2))) {
      const answer = await owner.request({ type: 'args', id });
      expect(answer.type).toBe('args');
      expect(answer.id).toBe(id);
      expect(answer.version).toBe(owner.snapshotView(id)!.version);
      expect(answer.args).toEqual(args);
    }
    expect(await owner.request({ type: 'args', id: 'c_nope' })).toMatchObject({
      type: 'reply',
      ok: false,
      error: { code: 'NotFound' },
    });
    const bad = await owner.request({ type: 'args', id: 7 });
    expect(bad).toMatchObject({ type: 'reply', ok: false, error: { code: 'BadMessage' } });
    expect(bad.error.message).toMatch(/^id must be a pending_id string/);
    await owner.close();
  });

  it('[c5.owner-frames-bounded] ogf-broker list prints the preview with a note, fetching nothing more', async () => {
    const list = await runCli(['list', '--data-dir', d.dataDir]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.length).toBeLessThan(PENDING * 4096);
    const [id, args] = [...sent][0]!;
    const block = list.stdout.slice(list.stdout.indexOf(id)).split(/\n(?=c_)/)[0]!;
    expect(block).toContain(`arg path: ${JSON.stringify(args.path)}`);
    expect(block).toMatch(/arguments shortened here: \d[\d,]* bytes of JSON in all/);
    expect(block).toContain(`arg content: "0 AAAA`);
    expect(block).toMatch(/… \(1,000,004 bytes of JSON; open the panel to read all\)/);
  });

  it('[c5.owner-frames-bounded] approving a call whose arguments were never loaded sends them whole', async () => {
    const owner = await OwnerSocket.open(d);
    const [id, args] = [...sent][0]!;
    expect(
      await owner.request({ type: 'approve', id, version: owner.snapshotView(id)!.version }),
    ).toMatchObject({ ok: true });
    await owner.view(id, (v) => v.status === 'SUCCEEDED', 'written');
    expect(readFileSync(String(args.path), 'utf8')).toBe(args.content);
    await owner.close();
  });
});

describe('[c5.owner-frames-bounded] the panel shows the preview, loads all arguments on demand, and approves them exactly', () => {
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  });

  afterAll(async () => {
    await browser?.close();
  });

  /** Saves `target` at desktop (1280) and phone (390) width as test-output/<name>-desktop.png and -phone.png. */
  async function shoot(target: Locator, name: string): Promise<void> {
    for (const [suffix, width] of [
      ['desktop', 1280],
      ['phone', 390],
    ] as const) {
      await page.setViewportSize({ width, height: 900 });
      await target.scrollIntoViewIfNeeded();
      const box = await target.boundingBox();
      if (box === null) throw new Error(`${name}: nothing to shoot`);
      const scrollY = await page.evaluate(() => window.scrollY);
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({
        path: join(OUTPUT_DIR, `${name}-${suffix}.png`),
        fullPage: true,
        clip: { x: 0, y: box.y + scrollY, width, height: Math.min(box.height, 1400) },
      });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  }

  it('[c5.owner-frames-bounded] a shortened card says so, Load all arguments shows them whole, and Approve writes exactly them', async () => {
    // A long multi-line text with characters of every UTF-8 width, as a note an AI might write.
    const content = 'línea ünïcode ✓ 😀 and some words\n'.repeat(9_000);
    const path = join(files, 'long-note.txt');
    const r = await call(ai, 'notes__write_file', { path, content });
    expect(r.isError, textOf(r)).toBeFalsy();
    const id = String(structured(r).pending_id);

    await loginPage(page, d);
    const c = card(page, id);
    await c.locator('button.approve:enabled').waitFor({ timeout: 30_000 });
    const note = c.locator('.args-shortened');
    expect(await note.textContent()).toMatch(/Arguments shortened/);
    expect(await c.locator('dd[data-arg="path"]').textContent()).toContain('long-note.txt');
    const cut = c.locator('dd[data-arg="content"]');
    expect(await cut.textContent()).toMatch(/bytes of JSON/);
    // Bounded: the page holds the preview, not the ~330,000 characters of the value.
    expect(await page.evaluate(() => document.body.innerHTML.length)).toBeLessThan(600_000);
    await shoot(c, 'attack-frames-shortened');

    await c.getByRole('button', { name: 'Load all arguments' }).click();
    await c.locator('.args-loaded').waitFor({ timeout: 30_000 });
    // The whole value, in the existing bounded renderer: as its lines, counted in characters.
    const loaded = c.locator('dd[data-arg="content"]');
    expect(await loaded.textContent()).toContain('9,000 lines, 297,000 characters');
    await shoot(c, 'attack-frames-loaded');

    await c.locator('button.approve:enabled').waitFor({ timeout: 30_000 });
    await c.getByRole('button', { name: /^Approve/ }).click();
    await page
      .locator(`article[data-pending-id="${id}"][data-status="SUCCEEDED"]`)
      .waitFor({ timeout: 30_000 });
    expect(readFileSync(path, 'utf8')).toBe(content);
  });
});
