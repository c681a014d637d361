/**
 * The test run's own temp dir (test/helpers/run-tmp.ts): every temp file of a run lives under one dir that
 * the run removes when it ends, and a killed run's dir is removed by the next run — `npm test` used to
 * leave ~1,000 dirs (~1.2 GB) in /tmp each time.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import setup, { makeRunDir, RUN_PREFIX, restoreTmpdir, sweepEnded } from './helpers/run-tmp.js';

/** A pid that no process has now: a child that has already exited. */
function endedPid(): number {
  const r = spawnSync(process.execPath, ['-e', '0']);
  return r.pid ?? 0;
}

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

function base(): string {
  const d = mkdtempSync(join(tmpdir(), 'ogf-run-tmp-'));
  made.push(d);
  return d;
}

describe('the run temp dir', () => {
  test('this worker and the processes it starts write under the run dir, which names a live run', () => {
    const dir = tmpdir();
    expect(basename(dir).startsWith(RUN_PREFIX)).toBe(true);
    const child = spawnSync(process.execPath, ['-p', 'require("node:os").tmpdir()'], { encoding: 'utf8' });
    expect(child.stdout.trim()).toBe(dir);
    const pid = Number(readFileSync(join(dir, 'run.pid'), 'utf8'));
    expect(() => process.kill(pid, 0)).not.toThrow();
    expect(statSync(dir).mode & 0o777).toBe(0o755);
  });

  test('setup points TMPDIR at a new dir and its teardown removes it with everything in it', () => {
    const b = base();
    const before = process.env.TMPDIR;
    process.env.TMPDIR = b;
    try {
      const teardown = setup();
      const dir = process.env.TMPDIR;
      expect(dirname(dir)).toBe(b);
      const inner = join(dir, 'ogf-test-x', 'deep');
      mkdirSync(inner, { recursive: true, mode: 0o700 });
      writeFileSync(join(inner, 'broker.db'), 'x');
      teardown();
      expect(existsSync(dir)).toBe(false);
      expect(process.env.TMPDIR).toBe(b);
    } finally {
      restoreTmpdir(before);
    }
  });

  test("a run's dir is removed by the next run once its run has ended, never while it lives", () => {
    const b = base();
    const ended = makeRunDir(b);
    writeFileSync(join(ended, 'run.pid'), String(endedPid()));
    mkdirSync(join(ended, 'ogf-test-left'));
    const live = makeRunDir(b); // this process's pid
    const notOurs = mkdtempSync(join(b, RUN_PREFIX)); // no run.pid: made by something else
    const other = mkdtempSync(join(b, 'ogf-test-'));
    expect(sweepEnded(b)).toEqual([ended]);
    expect(existsSync(ended)).toBe(false);
    for (const d of [live, notOurs, other]) expect(existsSync(d)).toBe(true);
  });
});
