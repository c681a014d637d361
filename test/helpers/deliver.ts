/**
 * Runs the real `ogf-bridge-client deliver --session-file PATH` the way the daemon does (PATH/HOME/LANG
 * only, no shell) and collects what it printed.
 */
import { spawn } from 'node:child_process';
import { BRIDGE_CLI } from './daemon.js';

export interface DeliverRun {
  code: number | null;
  /** Non-empty stdout lines: the contract says exactly one. */
  lines: string[];
  stdout: string;
  stderr: string;
}

export function runDeliver(path: string): Promise<DeliverRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BRIDGE_CLI, 'deliver', '--session-file', path], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', LANG: 'C.UTF-8' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, lines: stdout.split('\n').filter((l) => l !== ''), stdout, stderr }),
    );
  });
}
