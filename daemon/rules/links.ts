/**
 * The link half of `path_under` (contracts.md 11, v4): for a command whose upstream is a stdio server on
 * this machine, the real path of a path's deepest existing ancestor, then the rest of it — so a path that
 * leaves a folder through a symbolic link is not under it (issue 35 finding 1: `drafts/link/x` with
 * `link → ../outside` was allowed by a rule on `drafts/`).
 *
 * It walks as the filesystem server does (its `validatePath`): the lexical path first, then each existing
 * entry from `/` down; an entry that does not exist under its exact name is looked up by its NFC form (the
 * server maps `lie\u0301n` to an entry `lién`, and so may follow a link by another spelling), two such
 * entries are ambiguous. Where nothing exists any more the rest is appended as written.
 *
 * Synchronous on purpose: rules are decided in the broker's synchronous submit step. It is cheap — one
 * `lstat` per existing segment, a `realpath` per link met, one `readdir` at most (at the first missing
 * segment) — and bounded (MAX_STEPS). Whatever it cannot read (a dangling link, a loop, no permission) is an
 * error: a deny rule then fails closed and an allow rule or grant does not match.
 */
import { lstatSync, readdirSync, realpathSync } from 'node:fs';
import type { LinkResolver } from './path-under.js';

/** Segments walked at most (links expanding into more included) before the path is refused. */
export const MAX_STEPS = 1024;

function codeOf(e: unknown): string | undefined {
  return e instanceof Error && 'code' in e ? String((e as NodeJS.ErrnoException).code) : undefined;
}

/** The one entry of `dir` spelled `name` in NFC, undefined for none, an Error for several. */
function equivalentEntry(dir: string, name: string): string | undefined | Error {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return undefined; // not a directory (or gone): nothing below it exists
  }
  const want = name.normalize('NFC');
  const found = entries.filter((e) => e.normalize('NFC') === want);
  if (found.length > 1) return new Error('names two entries that differ only in Unicode spelling');
  return found[0];
}

/** The segments of a real path (`/` → none). */
function split(real: string): string[] {
  return real.split('/').filter((s) => s !== '');
}

/** One entry as the walk finds it: absent, there (its name on disk), a link (its real path), or unreadable. */
type Entry = { kind: 'absent' } | { kind: 'there'; name: string } | { kind: 'link'; real: string[] } | Error;

/** `name` in the real directory `parent` (`''` for `/`), looked up as the filesystem server does. */
function lookUp(parent: string, name: string): Entry {
  const at = (n: string) => `${parent}/${n}`;
  let entry = name;
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(at(entry));
  } catch (e) {
    const code = codeOf(e);
    if (code === 'ENOTDIR') return { kind: 'absent' };
    if (code !== 'ENOENT') return new Error(`cannot be read (${code ?? 'error'})`);
    const other = equivalentEntry(parent === '' ? '/' : parent, name);
    if (other === undefined || other instanceof Error) return other ?? { kind: 'absent' };
    entry = other;
    try {
      stat = lstatSync(at(entry));
    } catch (e2) {
      return new Error(`cannot be read (${codeOf(e2) ?? 'error'})`);
    }
  }
  if (!stat.isSymbolicLink()) return { kind: 'there', name: entry };
  try {
    return { kind: 'link', real: split(realpathSync.native(at(entry))) };
  } catch (e) {
    // A dangling link (a write would create its target, wherever it points), a loop, no permission.
    return new Error(`goes through a link that cannot be resolved (${codeOf(e) ?? 'error'})`);
  }
}

/** Contract 11 (v4): `segments` (lexical, absolute) with the links of their existing part resolved. */
function walk(segments: readonly string[], look: (parent: string, name: string) => Entry): string[] | Error {
  let real: string[] = [];
  for (let i = 0; i < segments.length; i++) {
    if (i >= MAX_STEPS) return new Error(`is deeper than ${MAX_STEPS} segments`);
    const found = look(real.length === 0 ? '' : `/${real.join('/')}`, segments[i]!);
    if (found instanceof Error) return found;
    // Nothing exists from here on: the rest is what the server would create, as written.
    if (found.kind === 'absent') return [...real, ...segments.slice(i)];
    if (found.kind === 'there') real.push(found.name);
    else real = [...found.real]; // a copy: the entry is remembered for the request
  }
  return real;
}

/** Resolves without remembering anything (tests; one path). */
export const resolveLinks: LinkResolver = (segments) => walk(segments, lookUp);

/**
 * A resolver for one request: each entry looked up once, each path walked once — the rules of one decision
 * name the same folders and path, which share their parents (bench row 11 measures the decision). A new
 * request starts afresh: links may have changed since.
 */
export function linkResolverForOneRequest(): LinkResolver {
  const entries = new Map<string, Entry>();
  const paths = new Map<string, string[] | Error>();
  const look = (parent: string, name: string): Entry => {
    const key = `${parent}/${name}`;
    let e = entries.get(key);
    if (e === undefined) {
      e = lookUp(parent, name);
      entries.set(key, e);
    }
    return e;
  };
  return (segments) => {
    const key = segments.join('/');
    let r = paths.get(key);
    if (r === undefined) {
      r = walk(segments, look);
      paths.set(key, r);
    }
    return r;
  };
}
