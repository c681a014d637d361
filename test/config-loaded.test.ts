/**
 * The config on the record (contract 14 (v4)) and SIGHUP (contract 17). Code running as the owner's user can
 * edit the config; it cannot do so unseen. Each start appends `config_loaded` (the file's SHA-256, what needs a
 * passkey or several approvals, the rules' ids and decisions); a start whose config asks less of the owner
 * than the last one sends a `config` notification saying what weakened — here to a json webhook played
 * over loopback (test/helpers/receivers.ts). And SIGHUP, which Node turns into an exit by default, is caught:
 * the real daemon process gets it, reloads, and keeps answering (test/reload.test.ts tests the reload itself).
 */
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { callTool, type Frame, mcpClient, ownerCatalog } from './helpers/owner.js';
import { HttpReceiver } from './helpers/receivers.js';

let hook: HttpReceiver;
let dataDir: string;

/** The config: strict (a passkey for vault, two approvals for launch, a deny rule) or weakened. */
function config(strict: boolean): Record<string, unknown> {
  const base = ownerCatalog(join(dataDir, 'marks.txt')) as {
    commands: Record<string, Record<string, unknown>>;
  };
  const mark = base.commands.mark!;
  return {
    commands: {
      mark,
      vault: { ...mark, description: 'Vault', ...(strict ? { require_passkey: true } : {}) },
      launch: { ...mark, description: 'Launch', ...(strict ? { approvals: 2 } : {}) },
    },
    rules: strict
      ? [{ id: 'no-b', when: "args.word.startsWith('b')", decision: 'deny' }]
      : [{ id: 'marks-ok', when: "command == 'mark'", decision: 'allow' }],
    notify: [{ id: 'watch', type: 'webhook', url: hook.url(), format: 'json', events: ['config'] }],
  };
}

/** The chain's `config_loaded` entries, oldest first. */
function loaded(): Frame[] {
  const db = new Database(join(dataDir, 'broker.db'), { readonly: true });
  try {
    return (
      db.prepare('SELECT entry FROM audit WHERE hash IS NOT NULL ORDER BY seq').pluck().all() as string[]
    )
      .map((t) => JSON.parse(t) as Frame)
      .filter((e) => e.event === 'config_loaded');
  } finally {
    db.close();
  }
}

const configMessages = () => hook.json().filter((m) => m.event === 'config');

beforeAll(async () => {
  hook = await HttpReceiver.start('ok');
  dataDir = makeDataDir('ogf-config-loaded-');
});

afterAll(async () => {
  await hook?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('config_loaded (contract 14 (v4))', () => {
  it('[c14.config-loaded] each start records the config; a weaker one is told once, saying what weakened', async () => {
    const first = await startDaemon({ dataDir, config: config(true) });
    const firstLog = first.stderr();
    await first.stop();
    expect(firstLog).not.toContain('config_weakened');
    const sha = createHash('sha256')
      .update(readFileSync(join(dataDir, 'config.json')))
      .digest('hex');
    expect(loaded()).toEqual([
      expect.objectContaining({
        actor: 'daemon',
        data: {
          config_sha256: sha,
          require_passkey: ['vault'],
          approvals: { launch: 2 },
          rules: [{ id: 'no-b', decision: 'deny' }],
        },
      }),
    ]);

    // Someone edits the config: the passkey dropped, the approvals lowered, the deny rule swapped for an allow.
    const second = await startDaemon({ dataDir, config: config(false) });
    const message = await waitFor(() => configMessages()[0], 'a config notification');
    const weakened = [
      'require_passkey dropped from vault',
      'approvals of launch lowered from 2 to 1',
      'allow rule marks-ok added',
      'deny rule no-b removed',
    ];
    expect(message).toMatchObject({ event: 'config', weakened });
    for (const w of weakened) expect(message.summary).toContain(w);
    expect(second.stderr()).toContain('config_weakened');
    await second.stop();
    const entries = loaded();
    expect(entries).toHaveLength(2);
    expect(entries[1]!.data).toMatchObject({
      require_passkey: [],
      approvals: {},
      rules: [{ id: 'marks-ok', decision: 'allow' }],
      weakened,
    });
    expect(message.config_sha256).toBe(entries[1]!.data.config_sha256);

    // The same config again: recorded, nothing weakened since the last entry.
    const third = await startDaemon({ dataDir, config: config(false) });
    expect(third.stderr()).not.toContain('config_weakened');
    await third.stop();
    expect(loaded()).toHaveLength(3);
    expect(loaded()[2]!.data.weakened).toBeUndefined();
    expect(configMessages()).toHaveLength(1);
    const v = await runCli(['audit', 'verify', '--data-dir', dataDir]);
    expect(v.stdout).toMatch(/^ok: /m);
  });
});

describe('SIGHUP (contract 17)', () => {
  let d: RunningDaemon | undefined;
  afterAll(async () => {
    await d?.stop();
  });

  it('[c17.sighup] a real daemon process gets SIGHUP, reloads, and keeps answering', async () => {
    d = await startDaemon({ dataDir, config: config(false) });
    d.child.kill('SIGHUP');
    await waitFor(() => d!.stderr().includes('config_reloaded'), 'the SIGHUP reloaded the config');
    expect(d.child.exitCode).toBeNull();
    expect(d.child.signalCode).toBeNull();
    const ai = await mcpClient(d);
    try {
      const listed = await callTool(ai, 'list_commands', {});
      expect(JSON.stringify(listed)).toContain('vault');
    } finally {
      await ai.close();
    }
    expect(await d.stop()).toBe(0);
  });
});
