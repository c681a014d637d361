/**
 * Attack: an upstream's inputSchema (contract 7: "a call is validated against the upstream's inputSchema").
 * The AI chooses the arguments; the upstream chose the schema. Before the fix the SDK's validator (Ajv)
 * compiled `pattern` and `patternProperties` into JavaScript RegExps, so `^(a+)+$` and one 41-character
 * argument held the daemon's event loop for ever (every client, every owner, every upstream). And it cached
 * compiled schemas by `$id`: the second schema with an `$id` already seen — another tool's, or another
 * upstream's — was validated as the first one.
 *
 * Now every pattern is matched by RE2 in linear time; a pattern RE2 cannot compile keeps its tool from
 * being exposed (logged `upstream_tool_skipped`); and each tool's schema is compiled on its own.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { call, commandCount, httpClient, makeClientToken, structured, textOf } from './helpers/mcp.js';
import { TEST_UPSTREAM } from './helpers/upstreams.js';

const HOSTILE = `${'a'.repeat(40)}!`;

let d: RunningDaemon;
let ai: Client;
let bystander: Client;

beforeAll(async () => {
  d = await startDaemon({
    config: {
      upstreams: {
        ours: { argv: [process.execPath, TEST_UPSTREAM, 'schemas'], wait_seconds: 0 },
        other: { argv: [process.execPath, TEST_UPSTREAM, 'schemas-other'], wait_seconds: 0 },
      },
    },
  });
  ai = await httpClient(d.info.mcp_url, d.mcpToken);
  bystander = await httpClient(d.info.mcp_url, await makeClientToken(d, 'bystander'));
  await waitFor(
    async () => {
      const names = (await ai.listTools()).tools.map((t) => t.name);
      return names.includes('ours__same_id_b') && names.includes('other__same_id_b');
    },
    'both upstreams listed',
    30_000,
  );
});

afterAll(async () => {
  await ai?.close();
  await bystander?.close();
  await d?.stop();
});

/** The status of a call that was queued (PENDING at once: wait_seconds 0), or the refusal text. */
async function outcome(tool: string, args: Record<string, unknown>): Promise<string> {
  const r = await call(ai, tool, args);
  return r.isError ? textOf(r) : String(structured(r).status);
}

describe('[c1.3.linear-patterns] [c7.exposed] upstream inputSchemas are matched in linear time, each on its own', () => {
  it('[c1.3.linear-patterns] a catastrophic pattern is answered InvalidArguments, and another client is served meanwhile', async () => {
    const before = commandCount(d);
    // A stalled daemon answers neither call (2^40 steps of backtracking), and the test fails.
    const [refused, listed] = await Promise.all([
      call(ai, 'ours__redos', { s: HOSTILE }),
      call(bystander, 'list_commands', {}),
    ]);
    expect(textOf(refused)).toBe(
      'InvalidArguments: s must match pattern "^(a+)+$" (the inputSchema of ours__redos)',
    );
    expect(listed.isError, textOf(listed)).toBeFalsy();
    expect(commandCount(d)).toBe(before);
    // The pattern still means what it says.
    expect(await outcome('ours__redos', { s: 'a'.repeat(500) })).toBe('PENDING');
  });

  it('[c1.3.linear-patterns] so is one applied to property names (patternProperties)', async () => {
    const before = commandCount(d);
    const [refused, listed] = await Promise.all([
      call(ai, 'ours__redos_keys', { [HOSTILE]: 1 }),
      call(bystander, 'list_commands', {}),
    ]);
    expect(textOf(refused)).toMatch(/^InvalidArguments: arguments must NOT have additional properties/);
    expect(listed.isError, textOf(listed)).toBeFalsy();
    expect(commandCount(d)).toBe(before);
    expect(await outcome('ours__redos_keys', { aaa: 1 })).toBe('PENDING');
  });

  it('[c7.exposed] a tool whose pattern RE2 cannot compile is not exposed, and says why in the log', async () => {
    const names = (await ai.listTools()).tools.map((t) => t.name);
    expect(names).not.toContain('ours__backref');
    expect(names).toContain('ours__redos');
    const skipped = await waitFor(
      () =>
        d
          .stderr()
          .split('\n')
          .filter((l) => l.includes('"upstream_tool_skipped"'))
          .map((l) => JSON.parse(l) as { upstream: string; tool: string; why: string })
          .find((e) => e.upstream === 'ours' && e.tool === 'backref'),
      'upstream_tool_skipped for ours backref',
    );
    expect(skipped.why).toMatch(/^its inputSchema has a pattern RE2 cannot compile .*: "\^\(a\)\\\\1\$"/);
  });

  it('[c7.exposed] two schemas with one $id (two tools, two upstreams) are each validated as themselves', async () => {
    // ours: same_id_a takes a string n, same_id_b an integer n; other: the other way round.
    expect(await outcome('ours__same_id_a', { n: 'x' })).toBe('PENDING');
    expect(await outcome('ours__same_id_a', { n: 1 })).toMatch(/^InvalidArguments: n must be string/);
    expect(await outcome('ours__same_id_b', { n: 2 })).toBe('PENDING');
    expect(await outcome('ours__same_id_b', { n: 'y' })).toMatch(/^InvalidArguments: n must be integer/);
    expect(await outcome('other__same_id_a', { n: 3 })).toBe('PENDING');
    expect(await outcome('other__same_id_a', { n: 'z' })).toMatch(/^InvalidArguments: n must be integer/);
    expect(await outcome('other__same_id_b', { n: 'w' })).toBe('PENDING');
    expect(await outcome('other__same_id_b', { n: 4 })).toMatch(/^InvalidArguments: n must be string/);
  });
});
