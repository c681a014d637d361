/**
 * `ogf-broker doctor` and the config file's mode (issue 36): the config decides what the AI may run, so a
 * config.json that group or other can reach — in the data dir or wherever `--config` names it — is a failed
 * check whose line gives the exact fix (`chmod 600 <path>`); a private one is an `ok` line. Real CLI, real files.
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './helpers/daemon.js';

function configLine(stdout: string): string | undefined {
  return stdout.split('\n').find((l) => l.includes(' config file: '));
}

describe('[c1.2.modes] doctor checks that config.json is 0600', () => {
  it('[c1.2.modes] a config given by --config outside the data dir: 0644 fails with chmod 600, 0600 is ok', async () => {
    const top = mkdtempSync(join(tmpdir(), 'ogf-doctor-mode-'));
    const dataDir = join(top, 'state');
    const config = join(top, 'config.json');
    writeFileSync(config, '{}');
    chmodSync(config, 0o644);
    const open = await runCli(['doctor', '--data-dir', dataDir, '--config', config, '--port', '0']);
    expect(configLine(open.stdout), open.stdout).toBe(
      `FAIL config file: group/other can reach ${config} (mode 0644); fix with chmod 600 ${config}`,
    );
    expect(open.code, open.stdout).toBe(1);

    chmodSync(config, 0o600);
    const closed = await runCli(['doctor', '--data-dir', dataDir, '--config', config, '--port', '0']);
    expect(configLine(closed.stdout), closed.stdout).toBe(
      `ok   config file: ${config} is private (mode 0600)`,
    );
    expect(closed.code, closed.stdout).toBe(0);
  });

  it('[c1.2.modes] the data dir config.json (found without --config), even when it is not valid, is checked too', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ogf-doctor-mode-dd-'));
    chmodSync(dataDir, 0o700);
    const config = join(dataDir, 'config.json');
    writeFileSync(config, '{"no_such_key": 1}');
    chmodSync(config, 0o640);
    const r = await runCli(['doctor', '--port', '0'], { OGF_BROKER_DATA_DIR: dataDir });
    expect(configLine(r.stdout), r.stdout).toBe(
      `FAIL config file: group/other can reach ${config} (mode 0640); fix with chmod 600 ${config}`,
    );
    expect(r.code).toBe(1);
  });
});
