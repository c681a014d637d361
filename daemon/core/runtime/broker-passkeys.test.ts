/**
 * Passkey-required commands in the broker (contract 13.3) over a real SQLite file (only time is faked):
 * the broker trusts its edge's verdict on an assertion (owner/passkey-actions.ts) but never approves such a
 * command without a verified one, checks it after the contract 5/9 refusals, keeps it in the approval's audit
 * entry, and lets no grant (even one made before the config asked for passkeys) approve it at submit.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/helpers/fake-clock.js';
import type { CatalogEntry } from '../../config/index.js';
import { Catalog } from '../../kinds/catalog/catalog.js';
import { CatalogExecutor } from '../../kinds/catalog/executor.js';
import { KINDS } from '../../kinds/index.js';
import { Store } from '../../store/sqlite/index.js';
import type { Command } from '../model/lifecycle.js';
import type { SubmitRequest } from '../ports/broker-api.js';
import { Broker } from './broker.js';

const COMMANDS: Record<string, CatalogEntry> = {
  vault: {
    description: 'vault',
    argv: [process.execPath, '-e', '0', '{text}'],
    params: { text: { type: 'string', max_length: 50 } },
    timeout_s: 60,
  },
};
const KEPT = { credential_id: 'abc', challenge_input: { canonical: '{}', nonce: 'AAAA' } };

let dir: string;
let store: Store;
let broker: Broker;
let passkey = true;

function vault(text: string): SubmitRequest {
  const p = new Catalog({ commands: COMMANDS }).prepare('vault', { text }, 'local');
  if (!p.ok) throw new Error(p.message);
  return p.request;
}

async function submit(req: SubmitRequest): Promise<Command> {
  const r = await broker.submit(req);
  if (!r.ok) throw new Error(r.message);
  return r.command;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ogf-passkeys-'));
  store = new Store(join(dir, 'broker.db'));
  passkey = true;
  broker = new Broker({
    store,
    reviewTimeoutS: 300,
    kinds: KINDS,
    executors: { run_command_wait: new CatalogExecutor(new Catalog({ commands: COMMANDS }), 65536) },
    commandPolicy: (name) => (name in COMMANDS ? { approvals: 1 } : undefined),
    passkeyRequired: () => passkey,
    clock: new FakeClock(),
  });
  void broker.start();
});

afterEach(async () => {
  await broker.close(0);
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('[c13.3.approve] the broker and a passkey-required command (contract 13.3)', () => {
  it('without evidence: PasskeyRequired, nothing approved; with a refused one: its reason', async () => {
    const c = await submit(vault('a'));
    expect(c.passkey_required).toBe(true);
    expect(await broker.approve(c.id, 1, 'owner')).toMatchObject({ ok: false, code: 'PasskeyRequired' });
    const bad = await broker.approve(c.id, 1, 'owner', undefined, {
      ok: false,
      why: 'the signature does not verify',
    });
    expect(bad).toEqual({ ok: false, code: 'PasskeyRequired', message: 'the signature does not verify' });
    expect(broker.get(c.id)?.phase.state).toBe('awaiting_review');
    expect(broker.get(c.id)?.version).toBe(1);
  });

  it('the contract 5 refusals come first: NotFound, VersionConflict, AlreadyDecided', async () => {
    const c = await submit(vault('b'));
    expect(await broker.approve('c_none', 1, 'owner')).toMatchObject({ code: 'NotFound' });
    expect(await broker.approve(c.id, 7, 'owner')).toMatchObject({ code: 'VersionConflict' });
    await broker.deny(c.id, 1, 'owner');
    expect(await broker.approve(c.id, 2, 'owner')).toMatchObject({ code: 'AlreadyDecided' });
  });

  it('with verified evidence: approved, and the assertion kept in the approval’s audit entry', async () => {
    const c = await submit(vault('c'));
    const r = await broker.approve(c.id, 1, 'owner', undefined, { ok: true, kept: KEPT });
    expect(r.ok).toBe(true);
    await broker.committed();
    const entry = store.auditFor(c.id).find((e) => e.action === 'approve');
    expect(entry?.detail?.passkey).toEqual(KEPT);
    expect(entry?.version).toBe(2);
  });

  it('a grant is refused, and one made before the config asked for passkeys approves nothing', async () => {
    expect(await broker.grant({ command: 'vault', client: '*', ttl_s: 600 }, 'owner')).toMatchObject({
      ok: false,
      code: 'NotGrantable',
    });
    passkey = false;
    const g = await broker.grant({ command: 'vault', client: '*', ttl_s: 600 }, 'owner');
    expect(g.ok).toBe(true);
    passkey = true;
    const c = await submit(vault('d'));
    expect(c.phase.state).toBe('awaiting_review');
    expect(c.passkey_required).toBe(true);
  });
});
