/**
 * Reload (contract 17), through a real daemon process, the real filesystem server behind the gate twice,
 * a json webhook played over loopback (test/helpers/receivers.ts) and the real CLI: SIGHUP adds a rule, a
 * notification channel, a catalog command and changes one upstream without a restart — the other upstream
 * keeps its connection; a broken config is kept out (`ogf-broker reload` prints the error and exits 2, the
 * daemon goes on with the config it had); a field read only at start is named as needing a restart.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { callTool, type Frame, mcpClient, ownerCatalog, readMarks } from './helpers/owner.js';
import { HttpReceiver } from './helpers/receivers.js';
import { FILESYSTEM } from './helpers/upstreams.js';

let hook: HttpReceiver;
let dataDir: string;
let folders: string;
let marks: string;
let d: RunningDaemon;
let ai: Client;

/** The config as written to the data dir; `v2` adds the rule, the channel, `vault`, and changes `b`. */
function config(v2: boolean, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const catalog = ownerCatalog(marks) as { commands: Record<string, Record<string, unknown>> };
  const mark = catalog.commands.mark!;
  return {
    commands: v2 ? { mark, vault: { ...mark, description: 'Vault' } } : { mark },
    upstreams: {
      a: { argv: [process.execPath, FILESYSTEM, join(folders, 'a')] },
      b: { argv: [process.execPath, FILESYSTEM, join(folders, 'b')], ...(v2 ? { wait_seconds: 5 } : {}) },
    },
    ...(v2
      ? {
          rules: [{ id: 'marks-ok', when: "command == 'mark'", decision: 'allow' }],
          notify: [
            { id: 'watch', type: 'webhook', url: hook.url(), format: 'json', events: ['waiting', 'config'] },
          ],
        }
      : {}),
    ...extra,
  };
}

const write = (c: Record<string, unknown> | string) =>
  writeFileSync(join(dataDir, 'config.json'), typeof c === 'string' ? c : JSON.stringify(c), { mode: 0o600 });

/** The daemon's log lines of `event`. */
const logged = (event: string): Frame[] =>
  d
    .stderr()
    .split('\n')
    .filter((l) => l.includes(`"event":"${event}"`))
    .map((l) => JSON.parse(l) as Frame);

const connected = (upstream: string) =>
  logged('upstream_connected').filter((l) => l.upstream === upstream).length;

/** `mark word` as the AI asks it; an answer at once (wait_seconds 10) or PENDING. */
const mark = (word: string) =>
  callTool(ai, 'run_command_wait', { command: 'mark', args: { word }, wait_seconds: 10 });

beforeAll(async () => {
  hook = await HttpReceiver.start('ok');
  dataDir = makeDataDir('ogf-reload-');
  folders = mkdtempSync(join(tmpdir(), 'ogf-reload-files-'));
  for (const f of ['a', 'b']) mkdirSync(join(folders, f));
  marks = join(folders, 'marks.txt');
  d = await startDaemon({ dataDir, config: config(false) });
  ai = await mcpClient(d);
  await waitFor(() => connected('a') === 1 && connected('b') === 1, 'both upstreams connected', 30_000);
}, 60_000);

afterAll(async () => {
  await ai?.close();
  await d?.stop();
  await hook?.close();
  rmSync(folders, { recursive: true, force: true });
});

describe('[c17.reload] reload applies the config without a restart (contract 17)', () => {
  it('before: no rule, so mark waits for the owner', async () => {
    const r = await callTool(ai, 'run_command_wait', {
      command: 'mark',
      args: { word: 'one' },
      wait_seconds: 0,
    });
    expect(r).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
  });

  it('SIGHUP: the new rule decides, the new command and channel work, only the changed upstream restarts', async () => {
    write(config(true));
    d.child.kill('SIGHUP');
    const line = await waitFor(() => logged('config_reloaded')[0], 'the reload logged');
    expect(line).toMatchObject({
      changed: ['rules', 'notify', 'commands', 'upstreams'],
      restart_needed: [],
      upstreams_restarted: ['b'],
      upstreams_started: [],
      upstreams_stopped: [],
    });
    // The same process, still answering.
    expect(d.child.exitCode).toBeNull();
    const r = await mark('two');
    expect(r).toMatchObject({ status: 'SUCCEEDED' });
    expect(readMarks(marks)).toEqual(['two']);
    // `b` comes back with its new entry; `a` kept the connection it had.
    await waitFor(() => connected('b') === 2, 'b connected again', 30_000);
    expect(connected('a')).toBe(1);
    // The catalog's new command is listed and queued; the new channel tells of it.
    const listed = await callTool(ai, 'list_commands', {});
    expect((listed.commands as Frame[]).map((c) => c.name)).toEqual(['mark', 'vault']);
    const v = await callTool(ai, 'run_command_wait', {
      command: 'vault',
      args: { word: 'x' },
      wait_seconds: 0,
    });
    expect(v.status).toBe('PENDING');
    await waitFor(
      () => hook.json().some((m) => m.event === 'waiting' && JSON.stringify(m).includes(v.pending_id)),
      'the waiting message through the new channel',
    );
    // On the record: a second config_loaded, and an allow rule added is a weaker config, told to the owner.
    await waitFor(() => hook.json().some((m) => m.event === 'config'), 'the config notification');
    const audit = await runCli(['audit', 'export', '--data-dir', dataDir]);
    const entries = audit.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Frame)
      .filter((e) => e.event === 'config_loaded');
    expect(entries).toHaveLength(2);
    expect(entries[1]!.data.rules).toEqual([{ id: 'marks-ok', decision: 'allow' }]);
  });

  it('a field read only at start is named as needing a restart; the rest applies, the daemon keeps its URL', async () => {
    write({
      ...config(true),
      rules: [],
      review_timeout_s: 999,
      grants: [{ command: 'vault', args: { word: 'ok' } }],
    });
    const r = await runCli(['reload', '--data-dir', dataDir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('applied rules, grants');
    // The config grant is live at once.
    expect(
      await callTool(ai, 'run_command_wait', { command: 'vault', args: { word: 'ok' }, wait_seconds: 10 }),
    ).toMatchObject({ status: 'SUCCEEDED' });
    expect(r.stdout).toMatch(/applied only by a restart: review_timeout_s/);
    // The rule is gone: mark waits again.
    const p = await callTool(ai, 'run_command_wait', {
      command: 'mark',
      args: { word: 'three' },
      wait_seconds: 0,
    });
    expect(p).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
    const status = await runCli(['status', '--data-dir', dataDir]);
    expect(status.stdout).toContain(d.url);
  });
});

describe('[c17.reload-kept] a config that does not load changes nothing (contract 17)', () => {
  it('`ogf-broker reload` prints the error and exits 2; SIGHUP logs it; the old config stays in force', async () => {
    write(config(true));
    expect((await runCli(['reload', '--data-dir', dataDir])).code).toBe(0);
    // Its grant left the config: revoked, so vault waits again.
    const again = await callTool(ai, 'run_command_wait', {
      command: 'vault',
      args: { word: 'ok' },
      wait_seconds: 0,
    });
    expect(again).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
    write('{"commands": ');
    const r = await runCli(['reload', '--data-dir', dataDir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^ogf-broker: reload: the daemon \(pid \d+\) kept its config: config .*not valid JSON/m,
    );
    write({ ...config(true), rules: [{ id: 'bad', when: 'command ==', decision: 'allow' }] });
    const bad = await runCli(['reload', '--data-dir', dataDir]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('bad');
    // Contract 21: a confined entry that cannot be confined here is refused at a reload as at a start.
    write({ ...config(true), sandbox_default: { writable: [join(folders, 'nowhere')] } });
    const unconfinable = await runCli(['reload', '--data-dir', dataDir]);
    expect(unconfinable.code).toBe(2);
    expect(unconfinable.stderr).toMatch(/commands\.mark\.sandbox\.writable\[0\]: .*nowhere does not exist/);
    d.child.kill('SIGHUP');
    await waitFor(() => logged('reload_failed').length >= 4, 'the SIGHUP’s failure logged');
    // The config loaded before stays: its rule still decides.
    expect(await mark('four')).toMatchObject({ status: 'SUCCEEDED' });
    expect(d.child.exitCode).toBeNull();
  });

  it('no daemon running: exit 2 naming the data dir', async () => {
    const empty = makeDataDir('ogf-reload-none-');
    const r = await runCli(['reload', '--data-dir', empty]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`ogf-broker: reload: no daemon runs for the data dir ${empty}`);
  });
});
