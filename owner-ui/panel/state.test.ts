/**
 * The panel's state between frames (state.ts): a snapshot replaces everything and forgets the old
 * connection's requests, an older upsert never overwrites a newer one, history never overwrites what is
 * held, and the skew follows the daemon's clock.
 */
import { describe, expect, it } from 'vitest';
import type { View } from '../../common/owner-messages.js';
import { PanelState } from './state.js';

const view = (id: string, version: number) => ({ id, version }) as View;

describe('PanelState', () => {
  it('a snapshot replaces the commands and forgets requests sent on the old connection', () => {
    const s = new PanelState();
    s.snapshot([view('a', 1)]);
    s.requests.set(s.reqId('p'), { id: 'a', action: 'approve' });
    s.snapshot([view('b', 1)]);
    expect([...s.views.keys()]).toEqual(['b']);
    expect(s.requests.size).toBe(0);
  });

  it('an upsert older than the version held is ignored; a newer one replaces it', () => {
    const s = new PanelState();
    expect(s.upsert(view('a', 3))).toBe(true);
    expect(s.upsert(view('a', 2))).toBe(false);
    expect(s.views.get('a')?.version).toBe(3);
    expect(s.upsert(view('a', 4))).toBe(true);
    expect(s.views.get('a')?.version).toBe(4);
  });

  it('history adds what is not held and keeps what is', () => {
    const s = new PanelState();
    s.upsert(view('a', 5));
    s.history([view('a', 1), view('b', 1)]);
    expect(s.views.get('a')?.version).toBe(5);
    expect(s.views.has('b')).toBe(true);
  });

  it('hello sets the owner and the skew; now() follows the daemon; req_ids are unique', () => {
    const s = new PanelState();
    s.hello('2026-01-01T00:00:10.000Z', 'alice', Date.parse('2026-01-01T00:00:00.000Z'));
    expect(s.me).toBe('alice');
    expect(s.skewMs).toBe(10_000);
    expect(s.now(0)).toBe(10_000);
    expect(new Set([s.reqId('p'), s.reqId('p'), s.reqId('h')]).size).toBe(3);
  });
});
