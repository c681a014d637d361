import { describe, expect, it } from 'vitest';
import { lexicalPath, pathUnder } from './path-under.js';

describe('[P.path-under] path_under (contract 11)', () => {
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
    ['home/u/notes/drafts/a.md', false, 'relative'],
    ['./home/u/notes/drafts/a.md', false, 'relative with ./'],
    ['', false, 'empty'],
    ['/home/u/notes/drafts/a\0.md', false, 'a NUL'],
    ['/../home/u/notes/drafts/a.md', false, '.. above the root'],
    ['/home/../../home/u/notes/drafts/a.md', false, '.. above the root, then back'],
    [`/home/u/notes/drafts/${'x/'.repeat(50_000)}a.md`, true, 'very long, inside'],
    [`/home/u/notes/drafts/${'x/'.repeat(50_000)}${'../'.repeat(50_001)}a.md`, false, 'very long, out'],
    ['/home/u/notes/drafts/..', false, 'ends in ..'],
    ['/home/u/notes/drafts/.', true, 'ends in .'],
    ['/home/u/notes/drafts/...', true, '... is a name'],
    ['/home/u/notes/DRAFTS/a', false, 'case matters'],
  ])('%j → %s (%s)', (p, want) => {
    expect(pathUnder(p, dir)).toBe(want);
  });

  it('reads dir lexically too, and refuses a dir that is not absolute', () => {
    expect(pathUnder('/a/b/c', '/a//./b/')).toBe(true);
    expect(pathUnder('/a/b/c', '/a/x/../b')).toBe(true);
    expect(pathUnder('/a/b/c', 'a/b')).toBe(false);
    expect(pathUnder('/a/b/c', '')).toBe(false);
    expect(pathUnder('/a/b/c', '/..')).toBe(false);
    expect(pathUnder('/a/b/c', '/a\0')).toBe(false);
    expect(pathUnder('/anything', '/')).toBe(true);
    expect(pathUnder('/', '/')).toBe(true);
    expect(pathUnder('/..', '/')).toBe(false);
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
  function reference(p: string, d: string): boolean {
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
    return np !== undefined && nd !== undefined && np.startsWith(nd);
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
      if (want) trues++;
      expect(pathUnder(p, d), `${JSON.stringify(p)} under ${JSON.stringify(d)}`).toBe(want);
    }
    // The generator must produce both answers often, or the comparison proves little.
    expect(trues).toBeGreaterThan(2000);
    expect(trues).toBeLessThan(19_000);
  });
});
