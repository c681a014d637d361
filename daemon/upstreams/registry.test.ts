import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../test/helpers/fake-clock.js';
import { silentLogger } from '../base/log.js';
import { mcpClient } from '../base/mcp-client.js';
import type { UpstreamConfig } from '../config/index.js';
import { BACKOFF_MAX_MS, UpstreamRegistry } from './registry.js';

const config: UpstreamConfig = {
  argv: ['never-started'],
  timeout_s: 60,
  trust_read_only_hint: false,
  bind_previews: true,
  approvals: 1,
  wait_seconds: 50,
};

describe('UpstreamRegistry backoff', () => {
  it('[c7.restart] an upstream that keeps failing is tried again after 1 s, doubling up to 60 s', async () => {
    // As in the daemon after its first connection: the client SDK is loaded, so each attempt starts at once.
    await mcpClient();
    const clock = new FakeClock();
    const attempts: number[] = [];
    const registry = new UpstreamRegistry({
      upstreams: { bad: config },
      version: 'test',
      log: silentLogger,
      clock,
      // The world injected (architecture.md rule 7): every start fails at once.
      openTransport: () => {
        attempts.push(clock.now());
        throw new Error('cannot start');
      },
    });
    const t0 = clock.now();
    registry.start();
    expect(() => registry.start()).toThrow(/twice/);
    const expected = [0, 1000, 3000, 7000, 15_000, 31_000, 63_000, 123_000, 183_000];
    clock.advance(183_000);
    expect(attempts.map((a) => a - t0)).toEqual(expected);
    expect(registry.status()).toEqual([
      { name: 'bad', state: 'down', tools: 0, why: 'it could not be started: cannot start' },
    ]);
    expect(BACKOFF_MAX_MS).toBe(60_000);
    await registry.close();
    await registry.close();
    clock.advance(600_000);
    expect(attempts).toHaveLength(expected.length);
  });
});
