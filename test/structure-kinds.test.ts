/**
 * Issue 20 item 1: a kind of tool is one folder. core/ asks the kinds (core/model/kind-policy.ts) and never names
 * one, every kind folder is registered in kinds/index.ts, and the panel knows how to show each.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KINDS } from '../daemon/kinds/index.js';

const root = join(import.meta.dirname, '..');

/** What names a kind: its tool, its command name, its own fields, its tool as a string literal. */
const KIND_NAMES: Array<[string, RegExp]> = [
  ['ogf_cue', /ogf_cue/],
  ['ogf.cue', /ogf\.cue/],
  ['run_command_wait', /run_command_wait/],
  ["'upstream' as a literal", /['"`]upstream['"`]/],
  ['session_key', /session_key/],
  ['session_file', /session_file\b/],
  ['session_fingerprint', /session_fingerprint/],
  ['.upstream', /\.upstream\b/],
];

function productFiles(dir: string): string[] {
  return readdirSync(join(root, dir))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((f) => join(dir, f));
}

describe('a kind is one folder (issue 20 item 1)', () => {
  it('no file under daemon/core/ names a kind', () => {
    const found: string[] = [];
    for (const file of productFiles('daemon/core')) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const [what, re] of KIND_NAMES) if (re.test(text)) found.push(`${file}: ${what}`);
    }
    expect(found).toEqual([]);
  });

  it('the check sees a kind where one is named', () => {
    // The check above must be able to fail: the cue kind's own policy names its tool and fields.
    const text = readFileSync(join(root, 'daemon/kinds/cue/kind.ts'), 'utf8');
    expect(KIND_NAMES.filter(([, re]) => re.test(text)).map(([w]) => w)).toEqual(
      expect.arrayContaining(['ogf_cue', 'session_key']),
    );
  });

  it('every folder in daemon/kinds/ is registered once in kinds/index.ts, and the panel knows its tool', () => {
    const folders = readdirSync(join(root, 'daemon/kinds'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    const registered = new Map<string, string>();
    for (const folder of folders) {
      const text = readFileSync(join(root, 'daemon/kinds', folder, 'kind.ts'), 'utf8');
      const kind = KINDS.all.find((k) => text.includes(`tool: '${k.tool}'`));
      expect(kind, `daemon/kinds/${folder}/kind.ts is not in KINDS`).toBeDefined();
      registered.set(folder, kind!.tool);
    }
    expect(KINDS.all).toHaveLength(folders.length);
    const panel = readFileSync(join(root, 'owner-ui/panel/kinds.ts'), 'utf8');
    for (const tool of registered.values()) expect(panel).toContain(`['${tool}', `);
  });

  it('the owner edge, its protocol and the terminal are handed the kind registry, never import it', () => {
    // Issue 37 item 2: owner/ reached for the global KINDS; the composition root (app/owner-context.ts)
    // now hands it over, and the terminal's commands pass it to formatView.
    const found: string[] = [];
    for (const dir of ['daemon/owner', 'daemon/owner-protocol', 'daemon/owner-terminal'])
      for (const file of productFiles(dir)) {
        const text = readFileSync(join(root, file), 'utf8');
        if (/from '\.\.\/kinds\//.test(text)) found.push(file);
      }
    expect(found).toEqual([]);
  });

  it('each kind folder holds its source, executor, fields and policy', () => {
    for (const folder of readdirSync(join(root, 'daemon/kinds'), { withFileTypes: true })) {
      if (!folder.isDirectory()) continue;
      const files = readdirSync(join(root, 'daemon/kinds', folder.name));
      expect(files).toEqual(
        expect.arrayContaining(['source.ts', 'executor.ts', 'fields.ts', 'kind.ts', 'module.ts']),
      );
    }
  });

  it('the daemon builds every source through the registry: no product file outside kinds/ imports a kind folder', () => {
    // A new kind is its folder and its registration lines; the panel's renderers (owner-ui/) read a kind's
    // tool and View fields from common/kinds.ts, never from the daemon (test/structure-imports.test.ts).
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const d of readdirSync(join(root, dir), { withFileTypes: true })) {
        const path = join(dir, d.name);
        if (d.isDirectory()) {
          if (path !== join('daemon', 'kinds')) walk(path);
        } else if (path.endsWith('.ts') && !path.endsWith('.test.ts')) {
          const text = readFileSync(join(root, path), 'utf8');
          for (const m of text.matchAll(/^import (type )?.*from '[./]*\/?(?:daemon\/)?kinds\/([a-z-]+)\//gm))
            found.push(`${path}: kinds/${m[2]}`);
        }
      }
    };
    walk('daemon');
    walk('owner-ui');
    expect(found).toEqual([]);
  });
});
