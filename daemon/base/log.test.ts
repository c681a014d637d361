/**
 * The logger (log.ts) writes a turn's lines together at its end, in order, and whatever the process still
 * holds when it exits — also through process.exit, the daemon's fatal path, and lines logged during the
 * exit itself — so batching loses no line.
 */
import { spawnSync } from 'node:child_process';
import { setImmediate as turnEnd } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createLogger } from './log.js';

const at = () => new Date('2026-12-06T22:00:00.000Z');

describe('createLogger', () => {
  it("writes one turn's lines in one write, in order, once the turn ends", async () => {
    const writes: string[] = [];
    const log = createLogger({ write: (s: string) => writes.push(s) }, at);
    log.log('info', 'first', { n: 1 });
    log.log('warn', 'second');
    expect(writes).toEqual([]);
    await turnEnd();
    expect(writes).toEqual([
      '{"time":"2026-12-06T22:00:00.000Z","level":"info","event":"first","n":1}\n' +
        '{"time":"2026-12-06T22:00:00.000Z","level":"warn","event":"second"}\n',
    ]);
    log.log('error', 'third');
    await turnEnd();
    expect(writes).toHaveLength(2);
    expect(JSON.parse(writes[1]!)).toMatchObject({ level: 'error', event: 'third' });
  });

  it('writes what it holds when the process exits in the same turn', () => {
    const logModule = new URL('../../dist/daemon/base/log.js', import.meta.url).href;
    const script = `const { createLogger } = await import(${JSON.stringify(logModule)});
      const a = createLogger(); const b = createLogger(process.stdout);
      a.log('info', 'before_exit', { k: 1 }); b.log('info', 'on_stdout'); a.log('error', 'last');
      process.on('exit', () => a.log('info', 'in_exit'));
      process.exit(3);`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.status).toBe(3);
    const lines = r.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string });
    // A line logged by an exit listener after the logger's own is written too.
    expect(lines.map((l) => l.event)).toEqual(['before_exit', 'last', 'in_exit']);
    expect(JSON.parse(r.stdout)).toMatchObject({ event: 'on_stdout' });
  });
});
