/**
 * A command's arguments as `ogf-broker list` lines (daemon/owner-terminal/format.ts asks each kind for its lines;
 * a kind that lists its arguments uses this), every text escaped. Arguments over 16 KiB of JSON come as a
 * preview (View.args_truncated, core/model/args-preview.ts): `list` fetches nothing more (the panel loads them
 * whole), so it says they are shortened and prints each cut one by name, size and start — none hidden.
 */

import { characterCount, escapeForTerminal as esc } from '../base/index.js';
import type { View } from '../core/index.js';

/** "1,000,004": sizes for people. */
function count(n: number): string {
  return n.toLocaleString('en-US');
}

/**
 * A text's lines behind a `| ` gutter, each escaped on its own (control and bidi characters as `\u001b`,
 * tabs as `\t`): a value can draw neither a line at the margin nor one that passes for a command's own
 * `argv:` or `why:` line. A final newline ends the last line; it does not start another.
 */
export function gutterLines(text: string, indent = '      '): string[] {
  const lines = text.split('\n');
  if (lines.length > 1 && lines.at(-1) === '') lines.pop();
  return lines.map((l) => `${indent}| ${esc(l)}`);
}

/**
 * One argument: a string holding newlines as its lines, with its size counted on the value itself
 * (contract 12: text read as text; notifications reuse it); any other value as its one line of JSON.
 */
export function argumentLines(name: string, value: unknown): string[] {
  if (typeof value !== 'string' || !value.includes('\n'))
    return [`    arg ${esc(name)}: ${esc(JSON.stringify(value))}`];
  const lines = gutterLines(value);
  const size = `${count(lines.length)} line${lines.length === 1 ? '' : 's'}, ${count(characterCount(value))} characters`;
  return [`    arg ${esc(name)}: text of ${size}:`, ...lines];
}

/** Every argument, in the order the AI gave them. */
export function argLines(v: View): string[] {
  const rows: Array<[number, string]> = Object.entries(v.args).map(([k, value], i) => [
    i,
    argumentLines(k, value).join('\n'),
  ]);
  if (v.args_truncated !== true) return rows.map(([, line]) => line);
  const cut = v.args_cut ?? [];
  const kept = rows.map(([, line]) => line);
  // Kept arguments keep their relative order; a cut one goes back to its place (`at`).
  const ordered: string[] = [];
  let k = 0;
  for (const c of [...cut].sort((a, b) => a.at - b.at)) {
    while (k < kept.length && ordered.length < c.at) ordered.push(kept[k++]!);
    const name =
      c.name_chars === undefined ? esc(c.name) : `${esc(c.name)}… (${count(c.name_chars)} characters)`;
    ordered.push(
      `    arg ${name}: ${esc(c.start)}… (${count(c.bytes)} bytes of JSON; open the panel to read all)`,
    );
  }
  ordered.push(...kept.slice(k));
  const hidden =
    v.args_hidden === undefined
      ? []
      : [`    … and ${count(v.args_hidden)} more arguments not listed here; open the panel to read all`];
  return [
    `    arguments shortened here: ${count(v.args_bytes ?? 0)} bytes of JSON in all; approving sends them whole`,
    ...ordered,
    ...hidden,
  ];
}
