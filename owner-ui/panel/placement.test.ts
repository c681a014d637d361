/**
 * Where the panel's cards go (placement.ts, contract 5 (v2): arrivals never move the card the owner is on):
 * the order of the queue and the history, placing with as few moves as possible, and which arrivals are
 * held back. The DOM it touches is small (children, insertBefore, remove, contains, dataset), so a fake of
 * that much runs it here without a browser.
 */
import { describe, expect, it } from 'vitest';
import type { View } from '../../common/owner-messages.js';
import { arrivalsToHold, newestFirst, oldestFirst, place } from './placement.js';

const view = (id: string, created_at: string) => ({ id, created_at }) as View;

/** Just enough of an element for place() and arrivalsToHold(): an ordered child list that counts moves. */
class FakeNode {
  children: FakeNode[] = [];
  parent: FakeNode | undefined;
  moves = 0;
  dataset: Record<string, string> = {};
  constructor(readonly name = '') {}
  insertBefore(node: FakeNode, before: FakeNode | null): void {
    node.remove();
    const at = before === null ? this.children.length : this.children.indexOf(before);
    this.children.splice(at, 0, node);
    node.parent = this;
    this.moves++;
  }
  remove(): void {
    if (this.parent) this.parent.children.splice(this.parent.children.indexOf(this), 1);
    this.parent = undefined;
  }
  contains(node: FakeNode): boolean {
    return node === this || this.children.some((c) => c.contains(node));
  }
}
const el = (n: FakeNode) => n as unknown as HTMLElement;
const names = (parent: FakeNode) => parent.children.map((c) => c.name);

describe('order', () => {
  it('the queue runs oldest first and the history newest first, ties broken by id', () => {
    const views = [view('b', '2026-01-02'), view('a', '2026-01-01'), view('c', '2026-01-02')];
    expect([...views].sort(oldestFirst).map((v) => v.id)).toEqual(['a', 'b', 'c']);
    expect([...views].sort(newestFirst).map((v) => v.id)).toEqual(['c', 'b', 'a']);
  });
});

describe('place', () => {
  it('removes leavers first and moves no node whose place did not change', () => {
    const parent = new FakeNode();
    const [a, b, c, d] = [new FakeNode('a'), new FakeNode('b'), new FakeNode('c'), new FakeNode('d')];
    place(el(parent), [a, b, c].map(el));
    expect(names(parent)).toEqual(['a', 'b', 'c']);
    parent.moves = 0;
    place(el(parent), [b, c, d].map(el)); // `a` left, `d` arrived at the end
    expect(names(parent)).toEqual(['b', 'c', 'd']);
    expect(parent.moves).toBe(1); // only `d` was inserted
  });
});

describe('arrivalsToHold', () => {
  const queue = new FakeNode('queue');
  const history = new FakeNode('history');
  const card = (id: string, into: FakeNode) => {
    const n = new FakeNode(id);
    n.dataset.pendingId = id;
    into.insertBefore(n, null);
    return n;
  };
  const first = card('p1', queue);
  const second = card('p3', queue);
  const done = card('h1', history);
  const waiting = [view('p1', '1'), view('p2', '2'), view('p3', '3'), view('p4', '4')];

  it('holds every arrival when one would sort before the card the owner is on', () => {
    expect(arrivalsToHold(el(queue), waiting, new Set(['p2', 'p4']), [el(second)])).toEqual(
      new Set(['p2', 'p4']),
    );
  });

  it('holds nothing when the arrivals land after the engaged card', () => {
    expect(arrivalsToHold(el(queue), waiting, new Set(['p2']), [el(first)])).toEqual(new Set());
  });

  it('holds any arrival while the owner is on a card below the queue', () => {
    expect(arrivalsToHold(el(queue), waiting, new Set(['p4']), [el(done)])).toEqual(new Set(['p4']));
  });

  it('holds nothing with no engaged card or no arrival', () => {
    expect(arrivalsToHold(el(queue), waiting, new Set(['p2']), [])).toEqual(new Set());
    expect(arrivalsToHold(el(queue), waiting, new Set(), [el(second)])).toEqual(new Set());
  });
});
