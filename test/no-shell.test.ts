/**
 * No shell, ever (contracts.md 1.3 and 4; architecture "No shell, ever"): a param value is exactly one
 * argv element whatever it holds, a placeholder must be a whole element, and no product source reaches
 * for a shell (`exec`, `execSync`, `shell: true`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, makeDataDir, ROOT, type RunningDaemon, startDaemon } from './helpers/daemon.js';
import { callTool, mcpClient, OwnerSocket, queue } from './helpers/owner.js';

/** Argument texts a shell would act on; each must arrive as one literal argument. */
function hostile(mark: string): string[] {
  return [
    `$(touch ${mark})`,
    `\`touch ${mark}\``,
    `; touch ${mark}`,
    `| touch ${mark}`,
    `&& touch ${mark}`,
    `> ${mark}`,
    'a b\tc',
    '*',
    '~',
    '$HOME',
    `'"\\`,
    '--help',
    '-e',
  ];
}

describe('[c4.no-shell] no shell is ever involved', () => {
  let d: RunningDaemon;
  let mark: string;

  beforeAll(async () => {
    const dir = makeDataDir('ogf-noshell-');
    mark = join(dir, 'pwned');
    d = await startDaemon({
      dataDir: dir,
      config: {
        commands: {
          args: {
            description: 'Print the argv it received',
            argv: [
              process.execPath,
              '-e',
              'process.stdout.write(JSON.stringify(process.argv.slice(1)))',
              // Ends node's own options, so a text like --help reaches the script (argument injection is
              // the template author's concern; a shell is ours, and there is none).
              '--',
              '{text}',
            ],
            // allow_newlines: the tab in 'a b\tc' is shell-significant, and v2 refuses it otherwise (1.3).
            params: { text: { type: 'string', max_length: 200, allow_newlines: true } },
            timeout_s: 30,
          },
        },
      },
    });
  });
  afterAll(async () => {
    await d?.stop();
  });

  it('hostile param text reaches the program as exactly one literal argument; nothing else runs', async () => {
    const ai = await mcpClient(d);
    const owner = await OwnerSocket.open(d);
    try {
      for (const text of hostile(mark)) {
        const id = await queue(ai, 'args', { text });
        const v = await owner.upsert(id, () => true, `view of ${id}`);
        expect(v.display.at(-1)).toBe(text); // the owner sees the exact argv that will run
        expect((await owner.request({ type: 'approve', id, version: v.version })).ok).toBe(true);
        const r = await callTool(ai, 'await_command_result', { pending_id: id, wait_seconds: 30 });
        expect(r.status, text).toBe('SUCCEEDED');
        expect(
          String(r.stdout).startsWith('['),
          `${text}: ${String(r.stdout).slice(0, 80)} ${JSON.stringify(v.display)}`,
        ).toBe(true);
        expect(JSON.parse(String(r.stdout)), text).toEqual([text]);
      }
      expect(existsSync(mark)).toBe(false);
    } finally {
      await owner.close();
      await ai.close();
    }
  });

  it('a placeholder that is not a whole argv element is refused at start (exit 2, names the element)', () => {
    const dir = makeDataDir('ogf-noshell-cfg-');
    const file = join(dir, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        commands: {
          say: {
            description: 'x',
            argv: ['/bin/echo', '--text={text}'],
            params: { text: { type: 'string', max_length: 20 } },
          },
        },
      }),
    );
    const r = spawnSync(process.execPath, [CLI, 'start', '--data-dir', join(dir, 'd'), '--config', file], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('commands.say.argv[1]');
    expect(existsSync(join(dir, 'd'))).toBe(false);
  });

  it('no product source calls exec/execSync or passes shell: true', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const p = join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (/\.ts$/.test(name) && !name.endsWith('.test.ts')) {
          readFileSync(p, 'utf8')
            .split('\n')
            .forEach((line, i) => {
              // `re.exec(` is a regular expression, not a process: only a bare exec/execSync call counts.
              if (
                /(?<![.\w])exec(Sync)?\s*\(|shell\s*:\s*true|\{[^}]*\bexec(Sync)?\b[^}]*\} from 'node:child_process'/.test(
                  line,
                )
              )
                offenders.push(`${p.slice(ROOT.length + 1)}:${i + 1}: ${line.trim()}`);
            });
        }
      }
    };
    for (const d of ['daemon', 'bridge-client', 'examples']) walk(join(ROOT, d));
    expect(offenders).toEqual([]);
  });
});
