import { describe, expect, it } from 'vitest';
import { connectionLimits, DEFAULT_MAX_CONNECTIONS, isAiPath } from './connections.js';

describe('connectionLimits', () => {
  it('[c5.http-connections] stays below the descriptor limit, keeping a reserve for launches and the database', () => {
    // A generous limit: the default cap, an eighth of it kept out of the AI's reach.
    expect(connectionLimits(1_048_576, {})).toEqual({
      max: DEFAULT_MAX_CONNECTIONS,
      aiMax: 1792,
      loginMax: 128,
    });
    expect(connectionLimits(undefined, {})).toEqual({
      max: DEFAULT_MAX_CONNECTIONS,
      aiMax: 1792,
      loginMax: 128,
    });
    // The common soft limit: a quarter kept for everything that is not a connection.
    expect(connectionLimits(1024, {})).toEqual({ max: 768, aiMax: 672, loginMax: 48 });
    // Small limits keep at least 64 descriptors, and the cap never drops below 16.
    expect(connectionLimits(256, {})).toEqual({ max: 192, aiMax: 168, loginMax: 12 });
    expect(connectionLimits(64, {})).toEqual({ max: 16, aiMax: 8, loginMax: 4 });
    for (const limit of [100, 300, 1000, 3000, 10_000, 100_000]) {
      const { max, aiMax, loginMax } = connectionLimits(limit, {});
      expect(max).toBeLessThanOrEqual(Math.max(16, limit - 64));
      expect(max - aiMax).toBeGreaterThanOrEqual(8);
      // Login attempts in the gate leave at least half of the rest to the owner (and 4 always fit).
      expect(loginMax).toBeGreaterThanOrEqual(4);
      expect(loginMax * 2).toBeLessThanOrEqual(max - aiMax);
    }
  });

  it('[c5.http-connections] takes OGF_BROKER_MAX_CONNECTIONS (16..65536) and warns about anything else', () => {
    const warnings: string[] = [];
    const warn = (w: string) => warnings.push(w);
    expect(connectionLimits(1024, { OGF_BROKER_MAX_CONNECTIONS: '64' }, warn)).toEqual({
      max: 64,
      aiMax: 56,
      loginMax: 4,
    });
    expect(connectionLimits(1024, { OGF_BROKER_MAX_CONNECTIONS: '4000' }, warn).max).toBe(4000);
    expect(warnings).toEqual([]);
    for (const bad of ['15', '65537', '1.5', 'many', '-1']) {
      expect(connectionLimits(1024, { OGF_BROKER_MAX_CONNECTIONS: bad }, warn).max).toBe(768);
    }
    expect(warnings).toHaveLength(5);
  });

  it('treats /mcp and the capability URL as the AI’s, and nothing else', () => {
    expect(isAiPath('/mcp')).toBe(true);
    expect(isAiPath('/mcp/some-token')).toBe(true);
    expect(isAiPath('/mcpx')).toBe(false);
    expect(isAiPath('/')).toBe(false);
    expect(isAiPath('/owner/ws')).toBe(false);
    expect(isAiPath('/login')).toBe(false);
  });
});
