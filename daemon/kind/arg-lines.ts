/**
 * A command's arguments as `ogf-broker list` lines (daemon/owner/format.ts asks each kind for its lines;
 * a kind that lists its arguments uses this), every text escaped. Arguments over 16 KiB of JSON come as a
 * preview (View.args_truncated, core/args-preview.ts): `list` fetches nothing more (the panel loads them
 * whole), so it says they are shortened and prints each cut one by name, size and start — none hidden.
 */

import { escapeForTerminal as esc } from '../base/index.js';
import type { View } from '../core/index.js';

/** "1,000,004": sizes for people. */
function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** Every argument, one line each, in the order the AI gave them. */
export function argLines(v: View): string[] {
  const rows: Array<[number, string]> = Object.entries(v.args).map(([k, value], i) => [
    i,
    `    arg ${esc(k)}: ${esc(JSON.stringify(value))}`,
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
