/**
 * The one status-file writer (issue 37 item 5): what daemon.json, rules.json, upstreams.json, notify.json
 * and database.json share — written whole at 0600 with the writer's pid, read back only for that pid,
 * removed quietly.
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readStatusFile, removeStatusFile, writeStatusFile } from './status-file.js';

const dirs: string[] = [];
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'ogf-status-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('status files', () => {
  it('writes {pid, ...fields} at 0600, leaving no temp file, and reads it back for that pid only', () => {
    const d = dir();
    const path = join(d, 'rules.json');
    writeStatusFile(path, 4242, { active: 3 });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(d)).toEqual(['rules.json']);
    expect(readStatusFile(path, 4242)).toEqual({ pid: 4242, active: 3 });
    expect(readStatusFile(path)).toEqual({ pid: 4242, active: 3 });
    expect(readStatusFile(path, 4243)).toBeUndefined();
    writeStatusFile(path, 4242, { active: 4 });
    expect(readStatusFile(path, 4242)?.active).toBe(4);
  });

  it('reads a missing, broken or pid-less file as nothing, and removes one gone already', () => {
    const d = dir();
    const path = join(d, 'notify.json');
    expect(readStatusFile(path)).toBeUndefined();
    writeFileSync(path, '{"pid":');
    expect(readStatusFile(path)).toBeUndefined();
    writeFileSync(path, '[1]');
    expect(readStatusFile(path)).toBeUndefined();
    writeFileSync(path, '{"channels":[]}');
    expect(readStatusFile(path)).toBeUndefined();
    removeStatusFile(path);
    removeStatusFile(path);
    expect(readdirSync(d)).toEqual([]);
  });
});
