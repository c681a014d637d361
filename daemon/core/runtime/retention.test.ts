/**
 * The retention rule (retention-rule.ts) and its pass (retention-pass.ts) on a real broker over a real SQLite
 * file, real child processes for the output, and a fake clock for the seven days (issue 19 finding 3).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/helpers/fake-clock.js';
import { silentLogger } from '../../base/log.js';
import type { CatalogEntry } from '../../config/index.js';
import { Catalog } from '../../kinds/catalog/catalog.js';
import { CatalogExecutor } from '../../kinds/catalog/executor.js';
import { KINDS } from '../../kinds/index.js';
import { Store } from '../../store/sqlite/index.js';
import type { Command } from '../model/lifecycle.js';
import { toView } from '../model/owner-view.js';
import { RETENTION_MS } from '../model/retention-rule.js';
import { toResult } from '../model/tool-result.js';
import { Broker } from './broker.js';
import { RetentionPass } from './retention-pass.js';

const OUT = 'o'.repeat(10_000);
const commands: Record<string, CatalogEntry> = {
  loud: {
    description: 'prints 10,000 bytes',
    argv: [process.execPath, '-e', `process.stdout.write("o".repeat(10000))`],
    params: {},
    timeout_s: 30,
  },
};

let dir: string;
let store: Store;
let clock: FakeClock;
let broker: Broker;
let pass: RetentionPass;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ogf-retention-'));
  store = new Store(join(dir, 'broker.db'));
  clock = new FakeClock();
  const catalog = new Catalog({ commands });
  broker = new Broker({
    store,
    reviewTimeoutS: 300,
    kinds: KINDS,
    executors: { run_command_wait: new CatalogExecutor(catalog, 65536) },
    clock,
  });
  broker.start();
  pass = new RetentionPass({
    scan: (after, limit) => store.retentionScan(after, limit),
    prune: (id) => broker.prune(id),
    clock,
    log: silentLogger,
  });
});
afterEach(async () => {
  pass.close();
  await broker.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

async function finished(): Promise<Command> {
  const p = new Catalog({ commands }).prepare('loud', {}, 'local');
  if (!p.ok) throw new Error(p.message);
  const r = await broker.submit(p.request);
  if (!r.ok) throw new Error(r.message);
  await broker.approve(r.command.id, r.command.version, 'owner');
  for (let i = 0; i < 400; i++) {
    const c = broker.get(r.command.id)!;
    if (c.phase.state === 'succeeded') return c;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error('the command did not finish');
}

describe('[c3.2.retention] bulky fields go 7 days after the end, and the result says so', () => {
  it('[c12.diff] [c12.text-removed] a preview amended on at the same version loses its text when the command ends, and the result never names it', async () => {
    const p = new Catalog({ commands }).prepare('loud', {}, 'local');
    if (!p.ok) throw new Error(p.message);
    const r = await broker.submit(p.request);
    if (!r.ok) throw new Error(r.message);
    const diff = `--- f\n+++ f\n@@ -1,1 +1,1 @@\n-${'x'.repeat(6000)}\n+y\n`;
    const preview = { kind: 'file_diff' as const, status: 'ready' as const, diff };
    const amended = await broker.amend(r.command.id, {
      fields: { preview },
      action: 'preview_made',
      detail: { summary: '1 line added, 1 removed' },
    });
    // Contract 12: the same version, so the approval made on the earlier View is valid.
    expect(amended.ok && amended.command.version).toBe(r.command.version);
    expect(toView(broker.get(r.command.id)!, KINDS).preview).toEqual(preview);
    expect(store.auditSince(0).at(-1)).toMatchObject({
      action: 'preview_made',
      version: r.command.version,
      detail: { summary: '1 line added, 1 removed', state: 'awaiting_review' },
    });
    expect((await broker.approve(r.command.id, r.command.version, 'owner')).ok).toBe(true);
    // Once decided, no preview is set any more.
    expect(
      await broker.amend(r.command.id, { fields: { preview }, action: 'preview_made', detail: {} }),
    ).toMatchObject({
      ok: false,
      code: 'AlreadyDecided',
    });
    for (let i = 0; i < 400 && broker.get(r.command.id)!.phase.state !== 'succeeded'; i++)
      await new Promise((res) => setTimeout(res, 25));
    // Contract 12 (v4): the text left when the command ended, long before the retention rule.
    expect(broker.get(r.command.id)!.preview).toEqual({ kind: 'file_diff', status: 'ready' });
    expect(JSON.stringify(store.get(r.command.id))).not.toContain('xxxxxxxx');
    clock.advance(RETENTION_MS);
    expect(await pass.pass()).toBe(1);
    const pruned = broker.get(r.command.id)!;
    expect(pruned.preview).toEqual({ kind: 'file_diff', status: 'ready' });
    expect(pruned.pruned?.fields.map((f) => f.field)).toEqual(['stdout']);
    expect(toResult(pruned).detail).not.toContain('preview');
  });

  it('keeps everything until the command has been final for 7 days, then keeps size and hash', async () => {
    const done = await finished();
    expect(toResult(done).stdout).toBe(OUT);
    const auditBefore = store.auditSince(0);

    clock.advance(RETENTION_MS - 1);
    expect(await pass.pass()).toBe(0);
    expect(toResult(broker.get(done.id)!).stdout).toBe(OUT);

    clock.advance(1);
    expect(await pass.pass()).toBe(1);
    const pruned = broker.get(done.id)!;
    expect(pruned.version).toBe(done.version + 1);
    const r = toResult(pruned);
    // Contract 3.2's shape: the output that is gone is absent; output_truncated and detail say why.
    expect(r).not.toHaveProperty('stdout');
    expect(r.status).toBe('SUCCEEDED');
    expect(r.exit_code).toBe(0);
    expect(r.output_truncated).toBe(true);
    expect(r.detail).toBe(
      `Its stdout (10000 bytes, sha256 ${sha(OUT)}) was removed 7 days after it ended, on ${pruned.pruned!.at} (retention rule).`,
    );
    // The owner's View says the same.
    expect(toView(pruned, KINDS).result?.detail).toBe(r.detail);
    // The audit log: every earlier entry as it was, and one appended entry naming what went.
    const auditAfter = store.auditSince(0);
    expect(auditAfter.slice(0, auditBefore.length)).toEqual(auditBefore);
    expect(auditAfter.slice(auditBefore.length)).toMatchObject([
      {
        action: 'prune',
        actor: { kind: 'daemon' },
        command_id: done.id,
        detail: { pruned: [{ field: 'stdout', bytes: 10_000, sha256: sha(OUT) }] },
      },
    ]);
    // Once is enough: the next pass finds nothing.
    clock.advance(RETENTION_MS);
    expect(await pass.pass()).toBe(0);
    expect(broker.get(done.id)!.version).toBe(pruned.version);
  });

  it('prunes a large argument to a marker, and the same request_id with the same arguments still finds it', async () => {
    const text = 'a'.repeat(5000);
    const req = {
      tool: 'upstream' as const,
      command: 'ours__echo',
      args: { text, small: 'kept' },
      display: ['ours', 'echo'],
      client: 'local',
      request_id: 'big-1',
    };
    const r = await broker.submit(req);
    if (!r.ok) throw new Error(r.message);
    await broker.cancel(r.command.id, 'local');
    clock.advance(RETENTION_MS);
    expect(await pass.pass()).toBe(1);
    const c = broker.get(r.command.id)!;
    const json = JSON.stringify(text);
    expect(c.args).toEqual({
      text: `[pruned 7 days after the command ended: ${json.length} bytes of JSON, sha256 ${sha(json)}]`,
      small: 'kept',
    });
    expect(toView(c, KINDS).args).toEqual(c.args);
    // No output was pruned, so the result's detail is the cancellation's own sentence.
    expect(toResult(c).detail).toBe('The caller cancelled the request before the owner decided.');
    const again = await broker.submit(req);
    expect(again.ok && again.command.id).toBe(r.command.id);
    const other = await broker.submit({ ...req, args: { text: `${text}b`, small: 'kept' } });
    expect(other.ok ? 'ok' : other.code).toBe('RequestIdReused');
  });

  it('leaves a command that is not final, and small final ones, alone', async () => {
    const p = new Catalog({ commands }).prepare('loud', {}, 'local');
    if (!p.ok) throw new Error(p.message);
    const waiting = await broker.submit(p.request);
    if (!waiting.ok) throw new Error(waiting.message);
    expect(await broker.prune(waiting.command.id)).toMatchObject({ ok: false });
    // It expires (300 s review), a small final command: nothing to prune, however old.
    clock.advance(RETENTION_MS * 2);
    await broker.committed();
    const expired = broker.get(waiting.command.id)!;
    expect(expired.phase.state).toBe('denied');
    expect(await pass.pass()).toBe(0);
    expect(broker.get(waiting.command.id)!.version).toBe(expired.version);
  });
});
