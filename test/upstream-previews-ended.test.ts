/**
 * Contract 12 (v4): when a command ends its preview's text is removed from the store, and its SHA-256 stays in
 * the audit record. A preview shows the file as it was (the owner's notes, a key in a config file): kept in
 * broker.db after the decision, it outlived its use by months. Every way a command ends is tried — approved
 * and succeeded, denied, expired, cancelled by the AI — and broker.db is read directly (better-sqlite3), as
 * anyone holding the file would. Real daemon, real @modelcontextprotocol/server-filesystem, real owner socket.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningDaemon } from './helpers/daemon.js';
import { auditRows, call, type McpClient, structured } from './helpers/mcp.js';
import { type Frame, OwnerSocket } from './helpers/owner.js';
import { notesBehindGate } from './helpers/upstreams.js';

const files = mkdtempSync(join(tmpdir(), 'ogf-previews-ended-'));
let d: RunningDaemon;
let ai: McpClient;
let owner: OwnerSocket;

beforeAll(async () => {
  // The shortest review deadline, so one command can expire.
  ({ d, ai } = await notesBehindGate(
    files,
    { preset: 'filesystem', wait_seconds: 0 },
    // Contract 20 keeps a succeeded write's preview text while a revert is offered: off here.
    { review_timeout_s: 10, revert_days: 0 },
  ));
  owner = await OwnerSocket.open(d);
});

afterAll(async () => {
  await owner?.close();
  await ai?.close();
  await d?.stop();
});

/** The stored command as the file holds it. */
function stored(id: string): string {
  const db = new Database(join(d.dataDir, 'broker.db'), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT body FROM commands WHERE id = ?').get(id) as { body: string }).body;
  } finally {
    db.close();
  }
}

/** Queues a write whose preview shows a secret line of the current file; returns the ready View. */
async function previewed(name: string): Promise<Frame> {
  const path = join(files, `${name}.env`);
  writeFileSync(path, `# ${name}\nTOKEN=secret-of-${name}\n`);
  const r = structured(await call(ai, 'notes__write_file', { path, content: `# ${name}\n` }));
  expect(r.status).toBe('PENDING');
  const id = String(r.pending_id);
  const v = await owner.view(id, (x) => x.preview?.status === 'ready', `${id}'s preview`);
  expect(v.preview.diff).toContain(`-TOKEN=secret-of-${name}`);
  // While it awaits review, the store holds the text the owner decides on.
  expect(stored(id)).toContain(`secret-of-${name}`);
  return v;
}

async function endsWithoutText(v: Frame, status: string, reason?: string): Promise<void> {
  const id = v.id as string;
  const done = await owner.view(id, (x) => x.status === status, `${id} ${status}`);
  if (reason !== undefined) expect(done.reason).toBe(reason);
  const body = JSON.parse(stored(id));
  expect(body.preview).toMatchObject({ kind: 'file_diff', status: 'ready' });
  expect(body.preview.diff).toBeUndefined();
  expect(body.preview.text).toBeUndefined();
  expect(JSON.stringify(body)).not.toContain('secret-of-');
  // Owners see the same: the final View carries no text either.
  expect(done.preview?.diff).toBeUndefined();
  // The audit keeps what proves what the owner saw: the SHA-256 and size of the text shown.
  const made = auditRows(d).find((a) => a.command_id === id && a.action === 'preview_made');
  const detail = JSON.parse(String(made?.detail));
  expect(detail.sha256).toBe(createHash('sha256').update(v.preview.diff, 'utf8').digest('hex'));
  expect(detail.bytes).toBe(Buffer.byteLength(v.preview.diff));
}

describe('[c12.text-removed] a preview text leaves the store when its command ends (contract 12 (v4))', () => {
  it('[c12.text-removed] approved and succeeded', async () => {
    const v = await previewed('approved');
    expect(await owner.request({ type: 'approve', id: v.id, version: v.version })).toMatchObject({
      ok: true,
    });
    await endsWithoutText(v, 'SUCCEEDED');
  });

  it('[c12.text-removed] denied by the owner', async () => {
    const v = await previewed('denied');
    expect(await owner.request({ type: 'deny', id: v.id, version: v.version })).toMatchObject({ ok: true });
    await endsWithoutText(v, 'DENIED', 'OwnerDenied');
  });

  it('[c12.text-removed] cancelled by the AI', async () => {
    const v = await previewed('cancelled');
    await call(ai, 'cancel_command', { pending_id: v.id });
    await endsWithoutText(v, 'DENIED', 'CancelledByCaller');
  });

  it('[c12.text-removed] expired', async () => {
    const v = await previewed('expired');
    await endsWithoutText(v, 'DENIED', 'ReviewExpired');
  }, 30_000);
});
