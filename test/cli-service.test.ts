/**
 * `ogf-broker service install|uninstall` (contract 17; issue 36 item 5): the real CLI with a temp HOME writes
 * a systemd user unit that `systemd-analyze verify --user` accepts (Debian's systemd; skipped only where
 * that tool is absent), running this install's node and cli.js on the data dir, reload by SIGHUP, restart
 * on failure, a umask that is not 077; it never overwrites a different unit; uninstall removes it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, runCli } from './helpers/daemon.js';

const hasAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;

function tempHome(): { home: string; unit: string; dataDir: string } {
  const home = mkdtempSync(join(tmpdir(), 'ogf-service-'));
  return {
    home,
    unit: join(home, '.config', 'systemd', 'user', 'ogf-broker.service'),
    dataDir: join(home, 'state dir'),
  };
}

describe('[c17.service] a systemd user unit for this install', () => {
  it('install writes the unit: ExecStart this node + cli.js start --data-dir, ExecReload SIGHUP, Restart', async () => {
    const { home, unit, dataDir } = tempHome();
    const r = await runCli(['service', 'install', '--data-dir', dataDir], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('systemctl --user daemon-reload');
    expect(r.stdout).toContain('systemctl --user enable --now ogf-broker.service');
    const text = readFileSync(unit, 'utf8');
    expect(text).toContain(`ExecStart="${process.execPath}" "${CLI}" "start" "--data-dir" "${dataDir}"\n`);
    expect(text).toContain('ExecReload=/bin/kill -HUP $MAINPID\n');
    expect(text).toContain('Restart=on-failure\n');
    expect(text).toContain('WantedBy=default.target\n');
    const umask = /^UMask=(\d+)$/m.exec(text)?.[1];
    expect(umask).toBeDefined();
    expect(Number.parseInt(umask!, 8)).not.toBe(0o077);

    // Installing the same again is fine; a different unit (another data dir) is never overwritten.
    expect((await runCli(['service', 'install', '--data-dir', dataDir], { HOME: home })).code).toBe(0);
    const other = await runCli(['service', 'install', '--data-dir', join(home, 'other')], { HOME: home });
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/^ogf-broker: service install: .*exists and differs/);
    expect(readFileSync(unit, 'utf8')).toBe(text);
  });

  it.skipIf(!hasAnalyze)('systemd-analyze verify --user accepts the unit with no complaint', async () => {
    const { home, unit, dataDir } = tempHome();
    expect((await runCli(['service', 'install', '--data-dir', dataDir], { HOME: home })).code).toBe(0);
    const runtime = join(home, 'runtime');
    mkdirSync(runtime, { mode: 0o700 });
    const v = spawnSync('systemd-analyze', ['verify', '--user', unit], {
      env: { ...process.env, HOME: home, XDG_RUNTIME_DIR: runtime, XDG_CONFIG_HOME: join(home, '.config') },
      encoding: 'utf8',
    });
    expect(v.status, v.stderr).toBe(0);
    // A warning (an unknown key, a bad value) exits 0 too: any line naming the unit is a complaint.
    expect(v.stderr.split('\n').filter((l) => l.includes('ogf-broker.service'))).toEqual([]);
  });

  it('uninstall removes the unit it wrote, and leaves a unit it did not write', async () => {
    const { home, unit, dataDir } = tempHome();
    expect((await runCli(['service', 'install', '--data-dir', dataDir], { HOME: home })).code).toBe(0);
    const r = await runCli(['service', 'uninstall'], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('systemctl --user disable --now ogf-broker.service');
    expect(existsSync(unit)).toBe(false);

    writeFileSync(unit, '[Service]\nExecStart=/bin/true\n');
    const mine = await runCli(['service', 'uninstall'], { HOME: home });
    expect(mine.code).toBe(2);
    expect(existsSync(unit)).toBe(true);
  });
});
