/**
 * Help, version and error lines (contract 17; issue 36 item 5): `--version` prints the version alone; `help`,
 * `--help` and `<command> --help` print usage to stdout with exit 0 (before, `start --help` was "Unknown
 * option '--help'", exit 2); every flag a command accepts is on its help, one line each — read from the
 * command's own refusal of an unknown flag, so the help cannot drift from the code; every error line starts
 * `ogf-broker: `. The real CLI, as a person runs it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli } from './helpers/daemon.js';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** Each subcommand as typed (with a positional where it needs one), and the command whose help names its flags. */
const INVOCATIONS: Array<[string[], string]> = [
  [['start'], 'start'],
  [['mcp-stdio'], 'mcp-stdio'],
  [['status'], 'status'],
  [['list'], 'list'],
  [['approve', 'c_12345678'], 'approve'],
  [['deny', 'c_12345678'], 'deny'],
  [['reconcile', 'c_12345678'], 'reconcile'],
  [['grant', 'list'], 'grant'],
  [['grant', 'add'], 'grant'],
  [['grant', 'revoke', 'g_12345678'], 'grant'],
  [['token', 'owner'], 'token'],
  [['token', 'mcp'], 'token'],
  [['policy', 'test'], 'policy'],
  [['notify', 'test'], 'notify'],
  [['audit', 'key'], 'audit'],
  [['audit', 'verify'], 'audit'],
  [['audit', 'export'], 'audit'],
  [['doctor'], 'doctor'],
  [['init'], 'init'],
  [['backup', '/nonexistent/b.ogfbackup'], 'backup'],
  [['restore', '/nonexistent/b.ogfbackup'], 'restore'],
  [['service', 'install'], 'service'],
  [['service', 'uninstall'], 'service'],
];

describe('[c17.cli-help] help, version and error lines', () => {
  it('--version prints the version alone', async () => {
    const r = await runCli(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${VERSION}\n`);
  });

  it('help and --help list every command; help COMMAND prints its usage', async () => {
    for (const args of [['help'], ['--help']]) {
      const r = await runCli(args);
      expect(r.code).toBe(0);
      for (const [, command] of INVOCATIONS) expect(r.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    }
    const one = await runCli(['help', 'deny']);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^usage: ogf-broker deny ID/);
  });

  it('every command’s --help names every flag it accepts, one line each, exit 0', async () => {
    // Every invocation at once: each is a short-lived CLI process.
    const runs = await Promise.all(
      INVOCATIONS.map(async ([args, command]) => ({
        args,
        command,
        refused: await runCli([...args, '--no-such-flag']),
        help: await runCli([...args, '--help']),
      })),
    );
    for (const { args, command, refused, help } of runs) {
      expect(refused.code, args.join(' ')).toBe(2);
      const accepted = refused.stderr.slice(refused.stderr.indexOf('accept')).match(/--[a-z][a-z-]*/g) ?? [];
      expect(accepted.length, refused.stderr).toBeGreaterThan(0);
      expect(help.code, args.join(' ')).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^usage: ogf-broker ${command} `));
      for (const flag of accepted)
        expect(help.stdout, `${args.join(' ')} ${flag}`).toMatch(new RegExp(`^  ${flag} `, 'm'));
    }
  });

  it('every error line starts "ogf-broker: "', async () => {
    const runs = await Promise.all([
      runCli(['frobnicate']),
      runCli(['start', '--port', 'seventy']),
      runCli(['list', '--bogus']),
      runCli(['grant', 'add', '--command', 'x']),
      runCli(['help', 'frobnicate']),
    ]);
    for (const r of runs) {
      expect(r.code).toBe(2);
      for (const line of r.stderr.split('\n').filter(Boolean)) expect(line).toMatch(/^ogf-broker: /);
    }
  });
});
