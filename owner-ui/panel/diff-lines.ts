/**
 * A unified diff read line by line for display (contract 12): each body line's kind and its old and new
 * line numbers, counted from the hunk headers. This only reads the text the daemon's diff library
 * (jsdiff, kinds/upstream/previews/diff.ts) or the upstream's dry run wrote — it computes no diff, so the
 * panel's bundle needs no diff library for it. Pure string work (diff-lines.test.ts).
 */

export type DiffLineKind = 'add' | 'del' | 'ctx' | 'hunk' | 'note';

export interface DiffLine {
  kind: DiffLineKind;
  /** The line's text without its sign (the hunk header whole). */
  text: string;
  old?: number;
  new?: number;
}

export interface ParsedDiff {
  /** The `---` and `+++` file names, when the diff had them. */
  from?: string;
  to?: string;
  lines: DiffLine[];
}

const HUNK_RE = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** A file header's name without git's `a/`/`b/`-free tab suffix (`path\toriginal` → `path`). */
function headerName(line: string): string {
  const name = line.slice(4);
  const tab = name.indexOf('\t');
  return tab === -1 ? name : name.slice(0, tab);
}

/**
 * The diff's lines, or undefined when `text` holds no hunk (then it is shown as plain text). Each hunk
 * takes as many lines as its header counts; other lines outside hunks (an `Index:` line, a ``` fence, the
 * `---`/`+++` headers, whose names are kept) are not diff lines.
 */
export function parseDiff(text: string): ParsedDiff | undefined {
  const out: ParsedDiff = { lines: [] };
  let oldNo = 0;
  let newNo = 0;
  // Lines the current hunk still holds on each side, from its header: a removed line reading `-- x`
  // is then a removal, never a file header.
  let oldLeft = 0;
  let newLeft = 0;
  for (const line of text.split('\n')) {
    if (oldLeft > 0 || newLeft > 0) {
      const sign = line[0];
      if (sign === '+' && newLeft > 0) {
        out.lines.push({ kind: 'add', text: line.slice(1), new: newNo++ });
        newLeft--;
      } else if (sign === '-' && oldLeft > 0) {
        out.lines.push({ kind: 'del', text: line.slice(1), old: oldNo++ });
        oldLeft--;
      } else if (sign === '\\') out.lines.push({ kind: 'note', text: line.slice(1).trim() });
      else {
        // A context line (a blank one may have lost its leading space).
        out.lines.push({ kind: 'ctx', text: line.slice(1), old: oldNo++, new: newNo++ });
        oldLeft--;
        newLeft--;
      }
      continue;
    }
    const hunk = HUNK_RE.exec(line);
    if (hunk !== null) {
      oldNo = Number(hunk[1]);
      oldLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      newNo = Number(hunk[3]);
      newLeft = hunk[4] === undefined ? 1 : Number(hunk[4]);
      // An empty side starts one line lower (`@@ -0,0 +1,2 @@`): its first line would be number 1.
      if (oldLeft === 0) oldNo++;
      if (newLeft === 0) newNo++;
      out.lines.push({ kind: 'hunk', text: line });
    } else if (line.startsWith('\\')) out.lines.push({ kind: 'note', text: line.slice(1).trim() });
    else if (line.startsWith('--- ')) out.from = headerName(line);
    else if (line.startsWith('+++ ')) out.to = headerName(line);
  }
  return out.lines.some((l) => l.kind === 'hunk') ? out : undefined;
}
