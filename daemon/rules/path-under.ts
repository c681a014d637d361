/**
 * `path_under(p, dir)` (contracts.md 11): true only when `p` is an absolute POSIX path that, after removing
 * `.` segments and repeated `/` and resolving `..` lexically, is `dir` or lies inside it. False for a
 * relative path, an empty string, a NUL, or a `..` that climbs above `/` (on either side).
 *
 * Lexical on purpose: the daemon never touches the filesystem to decide (a rule is decided at submit, in
 * the broker's synchronous step; the path may not exist yet — a write creates it). What a symlink inside
 * `dir` points at is the upstream's business (docs/security.md): the server behind the gate resolves the
 * path when it runs, and a filesystem server that refuses to follow links out of its roots is the guard for
 * that. Written by hand because node:path's `posix.normalize` clamps `/..` to `/` (a climb above the root
 * would then match `/`), and a rule must never widen what it names.
 */

/** The segments of an absolute path after `.`, `//` and `..` are resolved, or undefined when it cannot be. */
export function lexicalSegments(p: string): string[] | undefined {
  if (p.length === 0 || p.charCodeAt(0) !== 0x2f || p.includes('\0')) return undefined;
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      // Contract 11: a `..` that climbs above `/` never matches (it names nothing a server would accept).
      if (out.length === 0) return undefined;
      out.pop();
      continue;
    }
    out.push(seg);
  }
  return out;
}

/** The lexical form of an absolute path (`/a/./b//../c` → `/a/c`), or undefined (see lexicalSegments). */
export function lexicalPath(p: string): string | undefined {
  const segs = lexicalSegments(p);
  return segs === undefined ? undefined : `/${segs.join('/')}`;
}

/** Contract 11's `path_under`: `p` is `dir` or inside it, both read lexically. Never throws. */
export function pathUnder(p: string, dir: string): boolean {
  const ps = lexicalSegments(p);
  const ds = lexicalSegments(dir);
  if (ps === undefined || ds === undefined || ps.length < ds.length) return false;
  // Whole segments: `/home/u/notes-old` is not under `/home/u/notes`.
  for (let i = 0; i < ds.length; i++) if (ps[i] !== ds[i]) return false;
  return true;
}
