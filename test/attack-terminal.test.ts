/**
 * Attack: spoofing the owner's terminal (contracts.md 1.3, 3.2, 5 (v2)). The AI is the adversary. Before the
 * fix one queued value could clear the screen of `ogf-broker list` and redraw another command's lines, so
 * `ogf-broker approve ID` ran what the owner never saw.
 *
 * Two defences, each attacked here through the real daemon, real MCP and the real CLI, and judged by what a
 * real terminal emulator (@xterm/headless) renders from the CLI's bytes:
 * - input (c1.3.text-controls): a string param or justification holding a control or bidi character is refused;
 * - output (c5.terminal-escaped): `list` escapes every such character it prints — checked on a row written
 *   straight into broker.db, as an older version could have stored it, and on a newline-allowed value.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import xterm from '@xterm/headless';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon } from './helpers/daemon.js';
import { call, commandCount, textOf } from './helpers/mcp.js';
import { mcpClient, queue } from './helpers/owner.js';

const APPEND = 'require("fs").appendFileSync(process.argv[1], process.argv[2] + "\\n")';

/** `mark` is the command the attacker wants approved; `note` and `letter` carry the payloads. */
function catalog(markFile: string): Record<string, unknown> {
  const cmd = (params: Record<string, unknown>) => ({
    description: 'Append a line to a file',
    argv: [process.execPath, '-e', APPEND, markFile, `{${Object.keys(params)[0]}}`],
    params,
    timeout_s: 30,
  });
  return {
    review_timeout_s: 600,
    commands: {
      mark: cmd({ word: { type: 'string', max_length: 20, pattern: '^[a-z0-9]+$' } }),
      note: cmd({ text: { type: 'string', max_length: 1000 } }),
      letter: cmd({ text: { type: 'string', max_length: 1000, allow_newlines: true } }),
    },
  };
}

async function list(d: RunningDaemon): Promise<string> {
  const r = await runCli(['list', '--data-dir', d.dataDir]);
  expect(r, r.stderr).toMatchObject({ code: 0, stderr: '' });
  return r.stdout;
}

/**
 * What the owner sees: the bytes written to a real terminal emulator, read back from its screen. Tall enough
 * that nothing scrolls away (a clear-screen really erases what came before) and wide enough that no line wraps. `convertEol` stands for the
 * tty's own LF → CRLF.
 */
async function screen(bytes: string): Promise<string[]> {
  const term = new xterm.Terminal({
    cols: 1000,
    rows: 200,
    convertEol: true,
    allowProposedApi: true,
    logLevel: 'off',
  });
  try {
    await new Promise<void>((resolve) => term.write(bytes, resolve));
    const b = term.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < term.rows; i++) lines.push(b.getLine(b.viewportY + i)?.translateToString(true) ?? '');
    while (lines.at(-1) === '') lines.pop();
    return lines;
  } finally {
    term.dispose();
  }
}

/** The three lines `list` starts a command with: header, summary, argv (the screen's, not the bytes'). */
function entry(lines: string[], id: string): string[] {
  const headers = lines.filter((l) => l.startsWith(`${id}  `));
  expect(headers, `exactly one header line for ${id} on screen:\n${lines.join('\n')}`).toHaveLength(1);
  const at = lines.indexOf(headers[0]!);
  return lines.slice(at, at + 3);
}

/** Every C0 control but newline, DEL, every C1 control and every bidi control of contract 1.3. */
const RAW_CONTROL_RE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/**
 * The attack: a carrier value printed on the carrier's argv line. `list` is newest first, so a carrier queued
 * just before the victim is printed just below it; moving the cursor up, it erases its own lines and rewrites
 * the victim's summary and argv lines as `fake` ones, keeping the victim's header and its real id — which
 * the AI need not know in advance. `csi` is the ESC (C0) or the one-character C1 spelling.
 */
function redraw(fake: Lines, csi = '\u001b['): string {
  const up = (n: number) => `${csi}${n}A`;
  const erase = `${csi}2K`;
  // carrier argv, summary, header; victim decide-before; victim argv; victim summary; back down.
  return `\r${erase}${up(1)}${erase}${up(1)}${erase}${up(2)}${erase}${fake.argv}\r${up(1)}${erase}${fake.summary}${csi}3B\r`;
}

interface Lines {
  summary: string;
  argv: string;
}

/** The summary and argv lines `list` prints for a benign `mark hello`: what the attacker wants shown. */
async function benignLines(): Promise<Lines> {
  const id = await queue(ai, 'mark', { word: 'hello' });
  const out = (await list(d)).split('\n');
  const at = out.findIndex((l) => l.startsWith(`${id}  `));
  await call(ai, 'cancel_command', { pending_id: id });
  return { summary: out[at + 1]!, argv: out[at + 2]! };
}

let dataDir: string;
let markFile: string;
let d: RunningDaemon;
let ai: Client;

beforeAll(async () => {
  dataDir = makeDataDir('ogf-attack-term-');
  markFile = join(dataDir, 'marks.txt');
  d = await startDaemon({ dataDir, config: catalog(markFile) });
  ai = await mcpClient(d);
});

afterAll(async () => {
  await ai?.close();
  await d?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('[c1.3.text-controls] the AI cannot send control or bidi characters (contract 1.3, 3.2)', () => {
  it('[c1.3.text-controls] the redraw payload over MCP is refused, and list shows the victim as it is', async () => {
    const fake = await benignLines();
    const before = commandCount(d);
    const r = await call(ai, 'run_command_wait', {
      command: 'note',
      args: { text: redraw(fake) },
      wait_seconds: 0,
    });
    expect(r.isError, textOf(r)).toBe(true);
    expect(textOf(r)).toMatch(/^InvalidArguments: args\.text must be a string .*, got a control character$/);
    expect(commandCount(d)).toBe(before);
    const victim = await queue(ai, 'mark', { word: 'evil' });
    const [header, summary, argv] = entry(await screen(await list(d)), victim);
    expect(header).toMatch(/PENDING \(awaiting review\)/);
    expect(summary).toBe('    Run mark with word="evil"');
    expect(argv).toMatch(/^ {4}argv: .* evil$/);
  });

  // covers: [c1.3.text-controls]
  const refused: Array<[string, string]> = [
    ['ESC (C0)', '\u001b[31m'],
    ['carriage return', 'safe\rrm'],
    ['backspace', 'x\b'],
    ['DEL', 'x\u007f'],
    ['CSI (C1)', '\u009b2J'],
    ['NEL (C1)', 'a\u0085b'],
    ['a newline where allow_newlines is false', 'a\nb'],
    ['a tab where allow_newlines is false', 'a\tb'],
    ['RIGHT-TO-LEFT OVERRIDE', 'txt.\u202eexe'],
    ['RIGHT-TO-LEFT ISOLATE', '\u2067x'],
    ['ARABIC LETTER MARK', 'a\u061cb'],
    ['RIGHT-TO-LEFT MARK', 'a\u200fb'],
  ];
  for (const [what, value] of refused) {
    it(`refuses ${what} in a string param, naming the param and never echoing the value`, async () => {
      const before = commandCount(d);
      const r = await call(ai, 'run_command_wait', {
        command: 'note',
        args: { text: value },
        wait_seconds: 0,
      });
      expect(r.isError, textOf(r)).toBe(true);
      expect(textOf(r)).toMatch(
        /^InvalidArguments: args\.text must be a string of at most 1000 characters without control or bidirectional characters, got a control character$/,
      );
      expect(commandCount(d)).toBe(before);
    });
  }

  it('[c1.3.text-controls] accepts plain Unicode; allow_newlines admits newline and tab but nothing else', async () => {
    const ok = await call(ai, 'run_command_wait', {
      command: 'note',
      args: { text: 'héllo wörld 😀 עברית' },
      wait_seconds: 0,
    });
    expect(ok.isError, textOf(ok)).toBeFalsy();
    const lines = await call(ai, 'run_command_wait', {
      command: 'letter',
      args: { text: 'line one\nline two\tend' },
      wait_seconds: 0,
    });
    expect(lines.isError, textOf(lines)).toBeFalsy();
    for (const bad of ['a\rb', '\u001b[2J', 'a\u202eb']) {
      const r = await call(ai, 'run_command_wait', {
        command: 'letter',
        args: { text: bad },
        wait_seconds: 0,
      });
      expect(textOf(r)).toBe(
        'InvalidArguments: args.text must be a string of at most 1000 characters without control or bidirectional characters other than newline and tab, got a control character',
      );
    }
  });

  it('[c1.3.text-controls] a justification refuses bidi controls as well as control characters', async () => {
    const before = commandCount(d);
    for (const justification of ['looks fine \u202e)lanigiro(', 'x\u2066y', 'bell\u0007']) {
      const r = await call(ai, 'run_command_wait', {
        command: 'mark',
        args: { word: 'why' },
        justification,
        wait_seconds: 0,
      });
      expect(r.isError, justification).toBe(true);
      expect(textOf(r)).toMatch(
        /^InvalidArguments: justification must be .*bidirectional.*, got a control character$/,
      );
    }
    expect(commandCount(d)).toBe(before);
    const ok = await call(ai, 'run_command_wait', {
      command: 'mark',
      args: { word: 'why' },
      justification: 'two lines\n\tand a tab',
      wait_seconds: 0,
    });
    expect(ok.isError, textOf(ok)).toBeFalsy();
  });
});

describe('[c5.terminal-escaped] ogf-broker list escapes every AI-supplied text (contract 5)', () => {
  it('[c5.terminal-escaped] a newline-allowed value cannot fake a line of its own in list', async () => {
    const forged = 'c_FORGEDFORGED01  PENDING (awaiting review)  client local  v1';
    const id = await queue(ai, 'letter', { text: `fine\n${forged}\n    Run mark with word="hello"\tx` });
    const lines = await screen(await list(d));
    const [, summary, argv] = entry(lines, id);
    expect(lines.filter((l) => l.startsWith('c_FORGEDFORGED01'))).toEqual([]);
    expect(summary).toContain(`fine\\n${forged}\\n`);
    expect(argv).toContain(`fine\\n${forged}\\n    Run mark with word="hello"\\tx`);
  });

  it('[c5.terminal-escaped] an old row holding a redraw payload: the screen shows the true command and the escapes', async () => {
    const fake = await benignLines();
    const placeholder = await queue(ai, 'note', { text: 'placeholder' });
    await ai.close();
    await d.stop();

    // A row as a version without input validation stored it: its value redraws the next command's lines
    // (ESC spelling), its justification hides itself (C1 spelling) behind a bidi override.
    const text = redraw(fake);
    const db = new Database(join(dataDir, 'broker.db'));
    try {
      const row = db.prepare('SELECT * FROM commands WHERE id = ?').get(placeholder) as Record<
        string,
        unknown
      >;
      const old = {
        ...(JSON.parse(String(row.body)) as Record<string, unknown>),
        id: 'c_OLDROWHOSTILE01',
        args: { text },
        display: [process.execPath, '-e', APPEND, markFile, text],
        justification: '\u202eok\u009b2K',
      };
      db.prepare(
        'INSERT INTO commands (id, client, request_id, state, version, created_at, body) VALUES (?, ?, NULL, ?, ?, ?, ?)',
      ).run(old.id, row.client, row.state, row.version, row.created_at, JSON.stringify(old));
    } finally {
      db.close();
    }
    d = await startDaemon({ dataDir, config: catalog(markFile) });
    ai = await mcpClient(d);
    const victim = await queue(ai, 'mark', { word: 'evil' });

    const bytes = await list(d);
    const lines = await screen(bytes);
    const [, summary, argv] = entry(lines, victim);
    expect(summary).toBe('    Run mark with word="evil"');
    expect(argv).toMatch(/^ {4}argv: .* evil$/);
    expect(bytes.match(RAW_CONTROL_RE), 'a raw control character reached the terminal').toBeNull();
    const hostile = entry(lines, 'c_OLDROWHOSTILE01');
    expect(hostile[1]).toContain('Run note with text="\\r\\u001b[2K\\u001b[1A');
    expect(hostile[2]).toMatch(/ \$'\\r\\u001b\[2K\\u001b\[1A.*Run mark with word="hello"\\u001b\[3B\\r'$/);
    expect(lines).toContain('    why: \\u202eok\\u009b2K');
  });
});
