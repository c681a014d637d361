import { describe, expect, it } from 'vitest';
import { SessionLanes } from './session-lanes.js';

function lanes() {
  const started: string[] = [];
  const done = new Map<string, () => void>();
  const l = new SessionLanes((id, finish) => {
    started.push(id);
    done.set(id, finish);
  });
  return { l, started, finish: (id: string) => done.get(id)!() };
}

describe('[c2.rule-6] session lanes', () => {
  it('runs one launch per session at a time, in enqueue order; other sessions run alongside', () => {
    const { l, started, finish } = lanes();
    l.enqueue('a', 'a1');
    l.enqueue('a', 'a2');
    l.enqueue('b', 'b1');
    l.enqueue('a', 'a3');
    expect(started).toEqual(['a1', 'b1']);
    finish('a1');
    expect(started).toEqual(['a1', 'b1', 'a2']);
    finish('a2');
    finish('b1');
    expect(started).toEqual(['a1', 'b1', 'a2', 'a3']);
  });

  it('a held lane starts nothing until released; holding a busy lane is refused', () => {
    const { l, started, finish } = lanes();
    expect(l.hold('a')).toBe(true);
    expect(l.hold('a')).toBe(false);
    l.enqueue('a', 'a1');
    expect(started).toEqual([]);
    l.release('a');
    expect(started).toEqual(['a1']);
    expect(l.hold('a')).toBe(false); // busy with a1
    finish('a1');
    expect(l.hold('a')).toBe(true);
  });
});
