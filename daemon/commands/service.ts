/**
 * `ogf-broker service install|uninstall [--data-dir D]` (contract 17): a systemd user unit that runs this
 * very install's `start` for the data dir — node's and cli.js's absolute paths, so it does not depend on the
 * PATH of the user manager — and the `systemctl --user` lines that enable it. A different unit already at
 * that place is never overwritten (exit 2); `uninstall` removes only a unit this command wrote.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseFlags, stringFlag, UsageError } from '../base/index.js';
import { resolveDataDir } from '../datadir/index.js';
import { serviceUnit, UNIT_MARK, UNIT_NAME } from './service-unit.js';

function unitPath(): string {
  return join(homedir(), '.config', 'systemd', 'user', UNIT_NAME);
}

function readUnit(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

export async function runService(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  if (action !== 'install' && action !== 'uninstall')
    throw new UsageError(
      `service: the action must be install or uninstall, got ${action === undefined ? 'nothing' : JSON.stringify(action)}`,
    );
  const p = parseFlags(`service ${action}`, rest, { 'data-dir': { type: 'string' } });
  const path = unitPath();
  const existing = readUnit(path);
  if (action === 'uninstall') {
    if (existing === undefined) {
      process.stdout.write(`No unit at ${path}: nothing to remove.\n`);
      return 0;
    }
    if (!existing.startsWith(UNIT_MARK))
      throw new UsageError(
        `service uninstall: ${path} was not written by ogf-broker service install; left as it is`,
      );
    process.stdout.write(
      `Stop and disable it first if it runs:\n  systemctl --user disable --now ${UNIT_NAME}\n`,
    );
    rmSync(path);
    process.stdout.write(`Removed ${path}. Then:\n  systemctl --user daemon-reload\n`);
    return 0;
  }
  const dataDir = resolveDataDir(stringFlag(p, 'data-dir'));
  // This install's cli.js (dist/daemon/cli.js), beside this file's folder.
  const cli = resolve(import.meta.dirname, '..', 'cli.js');
  const unit = serviceUnit(process.execPath, cli, dataDir);
  if (existing !== undefined && existing !== unit)
    throw new UsageError(
      `service install: ${path} exists and differs (another data dir or install?); run ogf-broker service uninstall first, or edit it yourself`,
    );
  if (existing === undefined) {
    mkdirSync(join(homedir(), '.config', 'systemd', 'user'), { recursive: true });
    writeFileSync(path, unit, { mode: 0o644, flag: 'wx' });
  }
  process.stdout.write(
    `${existing === undefined ? 'Wrote' : 'Already in place:'} ${path}\n  runs: ${process.execPath} ${cli} start --data-dir ${dataDir}\nEnable and start it:\n  systemctl --user daemon-reload\n  systemctl --user enable --now ${UNIT_NAME}\nIts log: journalctl --user -u ${UNIT_NAME}. Reload the config: systemctl --user reload ${UNIT_NAME}.\n`,
  );
  if (!existsSync(join(dataDir, 'config.json')))
    process.stdout.write(
      `No config in ${dataDir} yet: ogf-broker init --data-dir ${dataDir} writes a starter one.\n`,
    );
  return 0;
}
