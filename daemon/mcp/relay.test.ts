import { describe, expect, it } from 'vitest';
import { isReconnectable } from './relay.js';

function netError(code: string): Error {
  return Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(code), { code }) });
}

describe('mcp-stdio resends a request only when that cannot run anything twice', () => {
  it('ECONNREFUSED (no daemon listened): always safe to resend', () => {
    expect(isReconnectable(netError('ECONNREFUSED'), false)).toBe(true);
    expect(isReconnectable(netError('ECONNREFUSED'), true)).toBe(true);
  });
  it('ECONNRESET (the daemon may have queued it): resent only when the request changes nothing', () => {
    expect(isReconnectable(netError('ECONNRESET'), false)).toBe(false);
    expect(isReconnectable(netError('ECONNRESET'), true)).toBe(true);
  });
  it('anything else is not resent', () => {
    expect(isReconnectable(netError('ETIMEDOUT'), true)).toBe(false);
    expect(isReconnectable(new Error('boom'), true)).toBe(false);
  });
});
