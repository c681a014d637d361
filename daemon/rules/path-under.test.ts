import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileExpression, type RuleFacts } from './environment.js';
import { MAX_STEPS, resolveLinks } from './links.js';
import { lexicalPath, pathUnder, withLinks } from './path-under.js';

/** pathUnder's answer, or 'error' when it throws (contract 11 v4: the rule is then not true / fails closed). */
function under(p: string, dir: string): boolean | 'error' {
  try {
    return pathUnder(p, dir);
  } catch {
    return 'error';
  }
}

describe('[c11.path-under] path_under (contract 11, v4)', () => {
  const dir = '/home/u/notes/drafts';
  it.each([
    ['/home/u/notes/drafts', true, 'the folder itself'],
    ['/home/u/notes/drafts/a.md', true, 'a file in it'],
    ['/home/u/notes/drafts/x/y/z.md', true, 'deeper'],
    ['/home/u/notes/drafts/', true, 'a trailing slash'],
    ['/home/u/notes/./drafts/a.md', true, 'a . segment'],
    ['/home//u///notes/drafts//a.md', true, 'repeated slashes'],
    ['/home/u/notes/other/../drafts/a.md', true, '.. that stays inside'],
    ['/home/u/notes/drafts/../secret.md', false, '.. escaping to the parent'],
    ['/home/u/notes/drafts/../../../../etc/passwd', false, '.. escaping far'],
    ['/home/u/notes/drafts/a/../../drafts-old/x', false, '.. into a sibling'],
    ['/home/u/notes/drafts-old/a.md', false, 'a sibling sharing the prefix'],
    ['/home/u/notes/draftsx', false, 'a longer name sharing the prefix'],
    ['/home/u/notes', false, 'the parent'],
    ['home/u/notes/drafts/a.md', 'error', 'relative'],
    ['./home/u/notes/drafts/a.md', 'error', 'relative with ./'],
    ['.private/key', 'error', 'relative, as the filesystem server would resolve it'],
    ['', 'error', 'empty'],
    ['/home/u/notes/drafts/a\0.md', 'error', 'a NUL'],
    ['/../home/u/notes/drafts/a.md', 'error', '.. above the root'],
    ['/home/../../home/u/notes/drafts/a.md', 'error', '.. above the root, then back'],
    [`/home/u/notes/drafts/${'x/'.repeat(50_000)}a.md`, true, 'very long, inside'],
    [`/home/u/notes/drafts/${'x/'.repeat(50_000)}${'../'.repeat(50_001)}a.md`, false, 'very long, out'],
    ['/home/u/notes/drafts/..', false, 'ends in ..'],
    ['/home/u/notes/drafts/.', true, 'ends in .'],
    ['/home/u/notes/drafts/...', true, '... is a name'],
    ['/home/u/notes/DRAFTS/a', false, 'case matters'],
    ['/home/u/notes/dra\u0066ts/a', true, 'an escape of a plain letter'],
  ] as Array<[string, boolean | 'error', string]>)('%j → %s (%s)', (p, want) => {
    expect(under(p, dir)).toBe(want);
  });

  it('compares NFC forms: an NFD spelling is the same folder, either way round', () => {
    expect(under('/srv/cafe\u0301/secret', '/srv/caf\u00e9')).toBe(true);
    expect(under('/srv/caf\u00e9/secret', '/srv/cafe\u0301')).toBe(true);
    expect(under('/srv/cafe/secret', '/srv/caf\u00e9')).toBe(false);
  });

  it('an error names what is wrong, never the path (it is logged)', () => {
    expect(() => pathUnder('.private/key', '/a')).toThrow(/the path is relative/);
    expect(() => pathUnder('/a/b', 'a')).toThrow(/the folder is relative/);
    expect(() => pathUnder('/../x', '/a')).toThrow(/climbs above/);
    expect(() => pathUnder('/a\0', '/a')).toThrow(/NUL/);
    try {
      pathUnder('secret-name/x', '/a');
    } catch (e) {
      expect(String(e)).not.toContain('secret-name');
    }
  });

  it('reads dir lexically too, and refuses a dir that is not absolute', () => {
    expect(under('/a/b/c', '/a//./b/')).toBe(true);
    expect(under('/a/b/c', '/a/x/../b')).toBe(true);
    expect(under('/a/b/c', 'a/b')).toBe('error');
    expect(under('/a/b/c', '')).toBe('error');
    expect(under('/a/b/c', '/..')).toBe('error');
    expect(under('/a/b/c', '/a\0')).toBe('error');
    expect(under('/anything', '/')).toBe(true);
    expect(under('/', '/')).toBe(true);
    expect(under('/..', '/')).toBe('error');
  });

  it('lexicalPath', () => {
    expect(lexicalPath('/a/./b//../c/')).toBe('/a/c');
    expect(lexicalPath('/')).toBe('/');
    expect(lexicalPath('/..')).toBeUndefined();
  });

  /**
   * A reference implementation of the lexical rule written another way (text rewriting until nothing
   * changes, as one would do by hand), against random paths over an alphabet that makes every case likely.
   */
  function reference(p: string, d: string): boolean | 'error' {
    const norm = (s: string): string | undefined => {
      if (!s.startsWith('/') || s.includes('\0')) return undefined;
      let t = `${s}/`;
      for (;;) {
        const before = t;
        t = t.replace(/\/\/+/g, '/').replace(/\/\.\//g, '/');
        if (t !== before) continue;
        if (/^\/\.\.\//.test(t)) return undefined;
        t = t.replace(/\/(?!\.\.\/)[^/]+\/\.\.\//, '/');
        if (t === before) break;
      }
      return t; // ends with '/'
    };
    const np = norm(p);
    const nd = norm(d);
    if (np === undefined || nd === undefined) return 'error';
    return np.startsWith(nd);
  }

  it('agrees with a reference implementation on 20,000 random paths', () => {
    let seed = 22;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      return (seed >>> 8) % n;
    };
    const parts = ['a', 'b', 'ab', '.', '..', '', '...', '\0', 'a.', '.a'];
    const gen = () => {
      const n = rand(7);
      const segs: string[] = [];
      for (let i = 0; i < n; i++) segs.push(parts[rand(parts.length)]!);
      return (rand(8) === 0 ? '' : '/') + segs.join('/');
    };
    let trues = 0;
    for (let i = 0; i < 20_000; i++) {
      const p = gen();
      const d = rand(3) === 0 ? gen() : ['/', '/a', '/a/b', '/ab', '/a/./b/..'][rand(5)]!;
      const want = reference(p, d);
      if (want === true) trues++;
      expect(under(p, d), `${JSON.stringify(p)} under ${JSON.stringify(d)}`).toBe(want);
    }
    // The generator must produce both answers often, or the comparison proves little.
    expect(trues).toBeGreaterThan(2000);
    expect(trues).toBeLessThan(17_000);
  });
});

describe('[c11.path-under] path_under with links resolved (a stdio upstream on this machine, contract 11 v4)', () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'ogf-path-under-')));
  for (const d of ['drafts', 'outside', 'café', 'private']) mkdirSync(join(root, d));
  symlinkSync(join(root, 'outside'), join(root, 'drafts', 'link'));
  symlinkSync('../outside', join(root, 'drafts', 'rel'));
  symlinkSync(join(root, 'outside'), join(root, 'drafts', 'lién'));
  symlinkSync(join(root, 'private'), join(root, 'drafts', 'priv'));
  symlinkSync(join(root, 'nowhere'), join(root, 'drafts', 'dangling'));
  symlinkSync(join(root, 'drafts', 'loop'), join(root, 'drafts', 'loop'));
  symlinkSync('.', join(root, 'drafts', 'self'));
  symlinkSync(join(root, 'drafts'), join(root, 'alias'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const linked = (p: string, d: string) => withLinks(resolveLinks, () => under(p, d));

  it.each([
    [`${root}/drafts/new/file.md`, true, 'a file not made yet'],
    [`${root}/drafts/link/x`, false, 'out through a link'],
    [`${root}/drafts/rel/x`, false, 'out through a relative link'],
    [`${root}/drafts/lie\u0301n/x`, false, 'out through a link spelled in NFD'],
    [`${root}/drafts/link/../drafts/x`, true, '.. is lexical first, as the server reads it'],
    [`${root}/alias/x`, true, 'in through a link to the folder itself'],
    [`${root}/drafts/self/self/self/x`, true, 'a link to . stays'],
    [`${root}/drafts/dangling`, 'error', 'a dangling link (a write would create its target)'],
    [`${root}/drafts/dangling/x`, 'error', 'below a dangling link'],
    [`${root}/drafts/loop/x`, 'error', 'a link loop'],
    [`${root}/drafts/${'self/'.repeat(MAX_STEPS)}x`, 'error', 'too many steps'],
  ] as Array<[string, boolean | 'error', string]>)('%j under drafts → %s (%s)', (p, want) => {
    expect(linked(p, `${root}/drafts`)).toBe(want);
  });

  it('resolves the folder too, and a link into a folder is under it', () => {
    expect(linked(`${root}/drafts/priv/key`, `${root}/private`)).toBe(true);
    expect(linked(`${root}/private/key`, `${root}/drafts/priv`)).toBe(true);
    expect(linked(`${root}/outside/x`, `${root}/drafts/link`)).toBe(true);
    expect(linked(`${root}/cafe\u0301/x`, `${root}/café`)).toBe(true);
  });

  it('two entries differing only in Unicode spelling: the exact one, else an error (ambiguous)', () => {
    // ẹ́ three ways: composed, canonical decomposed, and decomposed with the marks in the other order.
    const composed = 'x\u1eb9\u0301';
    const canonical = 'xe\u0323\u0301';
    const reordered = 'xe\u0301\u0323';
    expect(new Set([composed, canonical, reordered].map((n) => n.normalize('NFC'))).size).toBe(1);
    mkdirSync(join(root, 'amb'));
    mkdirSync(join(root, 'amb', composed));
    mkdirSync(join(root, 'amb', canonical));
    expect(linked(`${root}/amb/${composed}/x`, `${root}/amb`)).toBe(true);
    expect(linked(`${root}/amb/${canonical}/x`, `${root}/amb`)).toBe(true);
    expect(linked(`${root}/amb/${reordered}/x`, `${root}/amb`)).toBe('error');
  });

  it('without links (an HTTP upstream, the past) the same paths are read lexically', () => {
    expect(under(`${root}/drafts/link/x`, `${root}/drafts`)).toBe(true);
  });
});

describe('[c11.path-under] path_under in a rule: what CEL hands it', () => {
  const facts = (args: Record<string, unknown>): RuleFacts => ({
    client: 'c',
    command: 'notes__read_text_file',
    upstream: 'notes',
    tool: 'read_text_file',
    args,
    justification: '',
    now: new Date(0),
  });
  const rule = compileExpression("path_under(args.path, '/srv/notes/.private')");
  const negated = compileExpression("!path_under(args.path, '/srv/notes/drafts')");
  if (!rule.ok || !negated.ok) throw new Error('does not compile');

  it.each([
    [['/srv/notes/.private/key'], 'a list'],
    [7, 'a number'],
    [{ p: '/srv/notes/.private/key' }, 'a map'],
    [null, 'null'],
    [true, 'a boolean'],
    ['.private/key', 'a relative path'],
  ] as Array<[unknown, string]>)('%j (%s) is an error, negated too', (path) => {
    expect(rule.run(facts({ path }))).toBeInstanceOf(Error);
    expect(negated.run(facts({ path }))).toBeInstanceOf(Error);
  });

  it('a string path is answered', () => {
    expect(rule.run(facts({ path: '/srv/notes/.private/key' }))).toBe(true);
    expect(rule.run(facts({ path: '/srv/notes/x' }))).toBe(false);
  });
});
