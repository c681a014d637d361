/**
 * The Allow… dialog's wider scopes (contracts.md 11): for every string argument holding an absolute path,
 * "paths under DIR" for the path's own folder and each parent up to `/`, each made the grant expression
 * `path_under(args.<name>, "DIR")`; the expression the dialog shows for each scope; and the words for the
 * `policy_test` answer ("would have allowed 12 of your last 500 requests — 1 of them you denied").
 *
 * Folders are read lexically, as the daemon's `path_under` reads paths (daemon/rules/path-under.ts): a path
 * with a `..` above `/`, or a NUL, offers none.
 */
import type { PolicyTestMessage, View } from '../../common/owner-messages.js';

/** One "paths under DIR" choice. */
export interface PathScope {
  arg: string;
  dir: string;
  when: string;
}

/** Longest path offered, and how many folder choices a dialog shows at most. */
const PATH_MAX = 4096;
const SCOPES_MAX = 12;
const CEL_RESERVED = new Set(
  'in as break const continue else for function if import let loop package namespace return var void while true false null'.split(
    ' ',
  ),
);

/** The folders holding `p` (its own first, then each parent up to `/`), lexically; none when it is not a clean absolute path. */
export function folders(p: string): string[] {
  if (!p.startsWith('/') || p.includes('\0') || p.length > PATH_MAX) return [];
  const segs: string[] = [];
  for (const s of p.split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..') {
      if (segs.length === 0) return [];
      segs.pop();
    } else segs.push(s);
  }
  const out: string[] = [];
  for (let n = segs.length - 1; n >= 0; n--) out.push(`/${segs.slice(0, n).join('/')}`);
  return out;
}

/** `args.name`, or `args["my-name"]` when the name is not a plain CEL identifier. */
export function argRef(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !CEL_RESERVED.has(name)
    ? `args.${name}`
    : `args[${JSON.stringify(name)}]`;
}

/** Contract 11's path scopes for a card's arguments (JSON string literals are CEL string literals). */
export function pathScopes(v: View): PathScope[] {
  const out: PathScope[] = [];
  for (const [name, value] of Object.entries(v.args)) {
    if (typeof value !== 'string') continue;
    for (const dir of folders(value)) {
      if (out.length === SCOPES_MAX) return out;
      out.push({ arg: name, dir, when: `path_under(${argRef(name)}, ${JSON.stringify(dir)})` });
    }
  }
  return out;
}

/** The `policy_test` answer in words. */
export function testWords(m: Pick<PolicyTestMessage, 'of' | 'matched' | 'by_state'>): string {
  if (m.of === 0) return 'No requests recorded yet to test it against.';
  const denied = m.by_state.denied ?? 0;
  const last = m.of === 1 ? 'your last request' : `your last ${m.of} requests`;
  const base = `Would have allowed ${m.matched} of ${last}`;
  if (denied === 0) return `${base}.`;
  return `${base} — ${denied} of them you denied.`;
}
