/**
 * `doctor` and `notify test` beside a running daemon judge the daemon's environment, not the shell's
 * (contract 17; issue 36 item 6: they said "SLACK_WEBHOOK_URL is not set" and "bridge off" while the running
 * daemon had both). The daemon here has a webhook channel whose URL is in ITS environment only, and an
 * OGF_BRIDGE_URL the CLI's shell lacks; the CLI runs without either. A real daemon, the real CLI, an HTTP
 * receiver on loopback playing the webhook.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, runCli, startDaemon } from './helpers/daemon.js';
import { HttpReceiver } from './helpers/receivers.js';

let d: RunningDaemon;
let hook: HttpReceiver;

beforeAll(async () => {
  hook = await HttpReceiver.start();
  d = await startDaemon({
    config: { notify: [{ id: 'team', type: 'webhook', url_from_env: 'TEAM_HOOK_URL', format: 'json' }] },
    // Port 9 (discard) has no avatar app: the daemon's bridge check fails, where the shell's says "off".
    env: { TEAM_HOOK_URL: hook.url('/team'), OGF_BRIDGE_URL: 'ws://127.0.0.1:9/ogf-bridge' },
  });
});

afterAll(async () => {
  await d?.stop();
  await hook?.close();
});

describe('[c17.ask-daemon] the terminal asks the running daemon', () => {
  it('doctor reports the daemon’s channels and bridge, and says where it checked', async () => {
    const r = await runCli(['doctor', '--data-dir', d.dataDir], {
      TEAM_HOOK_URL: undefined,
      OGF_BRIDGE_URL: undefined,
    });
    expect(r.stdout).toContain(`ok   daemon: checked in the running daemon, pid ${d.info.pid}`);
    expect(r.stdout).toMatch(/^ok {3}notify team: json webhook, URL from TEAM_HOOK_URL/m);
    expect(r.stdout).not.toContain('TEAM_HOOK_URL is not set');
    // The daemon's bridge (from its OGF_BRIDGE_URL) is tried, not reported off.
    expect(r.stdout).toMatch(/^FAIL avatar app: /m);
    expect(r.stdout).not.toContain('the OGF bridge is off');
  });

  it('notify test sends through the daemon’s channel, with the daemon’s URL', async () => {
    const r = await runCli(['notify', 'test', '--data-dir', d.dataDir], { TEAM_HOOK_URL: undefined });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`checked in the running daemon, pid ${d.info.pid}`);
    expect(r.stdout).toMatch(/^ok {3}team \(webhook\/json\): accepted \(HTTP 200\)/m);
    expect(hook.json().some((m) => m.event === 'test' && m.channel === 'team')).toBe(true);
    const unknown = await runCli(['notify', 'test', '--data-dir', d.dataDir, '--channel', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^ogf-broker: --channel: must be one of team/);
  });
});
