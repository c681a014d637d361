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

/** Contract 11 (v4): `segments` (lexical, absolute) with the links of their existing part resolved. */
export const resolveLinks: LinkResolver = (segments) => {
  let real: string[] = [];
  for (let i = 0; i < segments.length; i++) {
    if (i >= MAX_STEPS) return new Error(`is deeper than ${MAX_STEPS} segments`);
    const name = segments[i]!;
    const parent = `/${real.join('/')}`;
    let entry = name;
    let stat: ReturnType<typeof lstatSync> | undefined;
    try {
      stat = lstatSync(`${parent === '/' ? '' : parent}/${entry}`);
    } catch (e) {
      const code = codeOf(e);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return new Error(`cannot be read (${code ?? 'error'})`);
      if (code === 'ENOENT') {
        const other = equivalentEntry(parent, name);
        if (other instanceof Error) return other;
        if (other !== undefined) {
          entry = other;
          try {
            stat = lstatSync(`${parent === '/' ? '' : parent}/${entry}`);
          } catch (e2) {
            return new Error(`cannot be read (${codeOf(e2) ?? 'error'})`);
          }
        }
      }
    }
    // Nothing exists from here on: the rest is what the server would create, as written.
    if (stat === undefined) return [...real, ...segments.slice(i)];
    const here = `${parent === '/' ? '' : parent}/${entry}`;
    if (!stat.isSymbolicLink()) {
      real.push(entry);
      continue;
    }
    try {
      real = split(realpathSync.native(here));
    } catch (e) {
      // A dangling link (a write would create its target, wherever it points), a loop, no permission.
      return new Error(`goes through a link that cannot be resolved (${codeOf(e) ?? 'error'})`);
    }
  }
  return real;
};
