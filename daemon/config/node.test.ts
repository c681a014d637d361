import { describe, expect, it } from 'vitest';
import { defaultNodeName, NODE_NAME_RE, nodeNameSchema } from './node.js';

describe('node_name (contract 16)', () => {
  it('defaults to the host name made to fit the pattern', () => {
    expect(defaultNodeName('Build-Box.example.com')).toBe('build-box');
    expect(defaultNodeName('ip-10-0-0-7')).toBe('ip-10-0-0-7');
    expect(defaultNodeName('7seas')).toBe('n-7seas');
    expect(defaultNodeName('my_laptop')).toBe('my-laptop');
    expect(defaultNodeName('')).toBe('node');
    expect(defaultNodeName('---')).toBe('node');
    const long = defaultNodeName('a'.repeat(40));
    expect(long).toHaveLength(32);
    for (const h of ['Build-Box.example.com', '7seas', `${'x'.repeat(31)}-y`, 'ÄÖÜ-host'])
      expect(defaultNodeName(h)).toMatch(NODE_NAME_RE);
  });

  it('refuses a name off the pattern, saying what it accepts', () => {
    for (const bad of ['Alpha', '1node', 'a'.repeat(33), 'a_b', '', 'a.b']) {
      const r = nodeNameSchema.safeParse(bad);
      expect(r.success).toBe(false);
      expect(r.error?.issues[0]?.message).toContain('^[a-z][a-z0-9-]{0,31}$');
    }
    expect(nodeNameSchema.safeParse('a').success).toBe(true);
    expect(nodeNameSchema.safeParse(`a${'b'.repeat(31)}`).success).toBe(true);
  });
});
