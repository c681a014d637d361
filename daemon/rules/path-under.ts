/**
 * `path_under(p, dir)` (contracts.md 11, v4): true when `p` is `dir` or lies inside it, both absolute POSIX
 * paths read lexically (`.` segments and repeated `/` removed, `..` resolved), compared segment by segment
 * after Unicode NFC normalisation; when the command's upstream is a stdio server on this machine, symbolic
 * links in the part of each path that exists are resolved first (links.ts), so a path that leaves `dir`
 * through a link is not under it.
 *
 * For a relative path, an empty string, a NUL or a `..` that climbs above `/` it is an *error*, not false
 * (contract 11 v4; issue 35 finding 1): the filesystem server resolves a relative path against its root and
 * clamps `/..` to `/`, so `.private/key` names the very file a `deny` rule on `<root>/.private` protects. An
 * error makes that deny rule fail closed (book.ts) and an `allow` rule or `when` grant not match. A
 * non-string never reaches this function: CEL refuses the call (`no matching overload`), an error as well.
 *
 * Written by hand because node:path's `posix.normalize` clamps `/..` to `/` (a climb above the root would
 * then match `/`), and a rule must never widen what it names. Error messages never quote the path: they go
 * to the log (book.ts), and the path is the AI's text.
 */

/** Resolves the links of an absolute path's existing part (links.ts), or says why it cannot. */
export type LinkResolver = (segments: readonly string[]) => string[] | Error;

/** Why a path is not one `path_under` can answer for, or undefined when it is. */
function refusal(p: string): string | undefined {
  if (p.length === 0) return 'is empty';
  if (p.includes('\0')) return 'holds a NUL';
  if (p.charCodeAt(0) !== 0x2f) return 'is relative (the server would resolve it against its own folder)';
  return undefined;
}

/** The segments of an absolute path after `.`, `//` and `..` are resolved, or undefined when it cannot be. */
export function lexicalSegments(p: string): string[] | undefined {
  if (refusal(p) !== undefined) return undefined;
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      // Contract 11: a `..` that climbs above `/` names nothing a rule can answer for.
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

/** The links resolved while a rule runs (environment.ts sets it around one synchronous evaluation). */
let currentLinks: LinkResolver | undefined;

/**
 * Runs `fn` (one synchronous CEL evaluation) with `links` resolving every `path_under` it calls. A module
 * variable because CEL calls a registered function with its arguments only; evaluation never awaits, so no
 * other evaluation can interleave.
 */
export function withLinks<T>(links: LinkResolver | undefined, fn: () => T): T {
  const before = currentLinks;
  currentLinks = links;
  try {
    return fn();
  } finally {
    currentLinks = before;
  }
}

/** `p` as NFC segments, links resolved when a resolver is given; throws the reason it cannot be read. */
function segmentsOf(p: string, which: 'path' | 'folder', links: LinkResolver | undefined): string[] {
  const why = refusal(p);
  if (why !== undefined) throw new Error(`path_under: the ${which} ${why}`);
  const lexical = lexicalSegments(p);
  if (lexical === undefined) throw new Error(`path_under: the ${which} climbs above / with ..`);
  const resolved = links === undefined ? lexical : links(lexical);
  if (resolved instanceof Error) throw new Error(`path_under: the ${which}: ${resolved.message}`);
  // NFC on each side: the filesystem server maps `cafe\u0301` to the entry `café` (and back).
  return resolved.map((s) => s.normalize('NFC'));
}

/**
 * Contract 11's `path_under`: `p` is `dir` or inside it. Throws (a CEL error: the rule is not true, and a
 * deny rule fails closed) for a path it cannot answer for.
 */
export function pathUnder(p: string, dir: string): boolean {
  const ps = segmentsOf(p, 'path', currentLinks);
  const ds = segmentsOf(dir, 'folder', currentLinks);
  if (ps.length < ds.length) return false;
  // Whole segments: `/home/u/notes-old` is not under `/home/u/notes`.
  for (let i = 0; i < ds.length; i++) if (ps[i] !== ds[i]) return false;
  return true;
}
