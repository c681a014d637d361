/**
 * Attack (issue 19 finding 4): a hostile upstream freezes the daemon through the cost of its tool schemas.
 * The AI needs only an upstream it can influence (one whose tool list it can change) and the arguments it
 * chooses. Our test server in mode `hostile-schemas` is that upstream; a second upstream (`good`) and the
 * owner's socket are the bystanders that must keep being served while it attacks.
 *
 * Before the fix (measured on the daemon's own validator, a 2-core machine at load ~9): a `format: "url"`
 * of 150 KB ran ajv-formats' backtracking RegExp for 18 s; `uniqueItems` over 20,000 objects compared
 * every pair for 39 s; 30 definitions each applying the next twice evaluated one value 2^30 times (0.3 s
 * at 22 levels, doubling per level: ~75 s); a re-listing with 250 `$ref`s to a 250-property definition
 * was inlined by Ajv (14 s and 1 GB RSS per compile), and a re-listed tool keeping its inputSchema took a
 * 7.5 MB title past the 64 KiB bound into every View of its calls. Each test timed out while the daemon
 * was frozen. Now each is answered in milliseconds (daemon/kinds/upstream/schema-cost.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import {
  call,
  commandCount,
  httpClient,
  type McpClient,
  structured,
  TestOwner,
  textOf,
} from './helpers/mcp.js';
import { TEST_UPSTREAM } from './helpers/upstreams.js';

/** Far above what each answer takes now, far below what each attack froze the daemon for. */
const ATTACK_TIMEOUT_MS = 8_000;

let d: RunningDaemon;
let ai: McpClient;
let owner: TestOwner;
let served = 0;

beforeAll(async () => {
  d = await startDaemon({
    config: {
      upstreams: {
        hostile: {
          argv: [process.execPath, TEST_UPSTREAM, 'hostile-schemas'],
          wait_seconds: 0,
          trust_read_only_hint: true,
        },
        good: { argv: [process.execPath, TEST_UPSTREAM, 'ok'], wait_seconds: 30 },
      },
    },
  });
  ai = await httpClient(d.info.mcp_url, d.mcpToken);
  owner = await TestOwner.connect(d);
  await waitFor(
    async () => {
      const names = (await ai.listTools()).tools.map((t) => t.name);
      return names.includes('hostile__relist') && names.includes('good__echo');
    },
    'both upstreams listed',
    30_000,
  );
}, 60_000);

afterAll(async () => {
  owner?.close();
  await ai?.close();
  await d?.stop();
});

/** The well-behaved upstream's tool, approved by the owner over the socket, answered by the upstream. */
async function bystander(): Promise<void> {
  const text = `served ${++served}`;
  const answer = call(ai, 'good__echo', { text });
  const view = await waitFor(
    () => [...owner.views.values()].find((v) => v.command === 'good__echo' && v.state === 'awaiting_review'),
    'the bystander call to reach the owner',
  );
  expect((await owner.approve(view.id)).type).not.toBe('error');
  const r = await answer;
  expect(r.isError, textOf(r)).toBeFalsy();
  expect(structured(r)).toEqual({ echoed: { text } });
}

/** The status of a queued call (PENDING at once: wait_seconds 0), the refusal text, or the protocol error. */
async function outcome(tool: string, args: Record<string, unknown>): Promise<string> {
  try {
    const r = await call(ai, tool, args);
    return r.isError ? textOf(r) : String(structured(r).status);
  } catch (e) {
    return (e as Error).message;
  }
}

function skipped(tool: string): { why: string } | undefined {
  return d
    .stderr()
    .split('\n')
    .filter((l) => l.includes('"upstream_tool_skipped"'))
    .map((l) => JSON.parse(l) as { upstream: string; tool: string; why: string })
    .find((e) => e.upstream === 'hostile' && e.tool === tool);
}

describe('[c7.cost] a hostile upstream’s schemas cost the daemon a bounded time', () => {
  it(
    '[c7.cost] a 150 KB format "url" argument is answered at once (formats are annotations), the bystanders meanwhile',
    async () => {
      const [link] = await Promise.all([
        outcome('hostile__link', { u: `http://${':'.repeat(150_000)}` }),
        bystander(),
      ]);
      expect(link).toBe('PENDING');
    },
    ATTACK_TIMEOUT_MS,
  );

  it(
    '[c7.cost] uniqueItems over 20,000 objects is checked in linear time, the bystanders meanwhile',
    async () => {
      const items = Array.from({ length: 20_000 }, (_, i) => ({ i, tag: 'x' }));
      const [distinct, duplicate] = await Promise.all([
        outcome('hostile__uniq', { items }),
        outcome('hostile__uniq', { items: [...items, { tag: 'x', i: 7 }] }),
        bystander(),
      ]);
      expect(distinct).toBe('PENDING');
      // Equal as JSON whatever the key order (JSON Schema's equality), so it is a duplicate.
      expect(duplicate).toBe(
        'InvalidArguments: items must NOT have duplicate items (items ## 7 and 20000 are identical) (the inputSchema of hostile__uniq)',
      );
    },
    ATTACK_TIMEOUT_MS,
  );

  it(
    '[c7.cost] a schema applying itself 2^30 times to one value is refused at its step budget, the bystanders meanwhile',
    async () => {
      const before = commandCount(d);
      const [fanout] = await Promise.all([outcome('hostile__fanout', { x: 1 }), bystander()]);
      expect(fanout).toMatch(
        /^InvalidArguments: x needs more than \d+ steps to check against the inputSchema \(the validation budget\) \(the inputSchema of hostile__fanout\)$/,
      );
      expect(commandCount(d)).toBe(before + 1); // the bystander's, not the refused call
    },
    ATTACK_TIMEOUT_MS,
  );

  it('[c7.cost] [c7.exposed] a re-listing with a ref bomb and a 7.5 MB title exposes neither, the bystanders meanwhile', async () => {
    // Read-only, so trusted: run at once (answered PENDING or SUCCEEDED, as the race with wait 0 goes).
    expect(await outcome('hostile__titled', { n: 1 })).toMatch(/^(PENDING|SUCCEEDED)$/);
    const [relisted] = await Promise.all([outcome('hostile__relist', {}), bystander()]);
    expect(relisted).toMatch(/^(PENDING|SUCCEEDED)$/);
    const bomb = await waitFor(() => skipped('ref_bomb'), 'upstream_tool_skipped for ref_bomb');
    expect(bomb.why).toMatch(/^its inputSchema has more than \d+ \$refs/);
    const titled = await waitFor(() => skipped('titled'), 'upstream_tool_skipped for titled');
    expect(titled.why).toBe('its definition is larger than 65536 characters of JSON');
    const names = (await ai.listTools()).tools.map((t) => t.name);
    expect(names).not.toContain('hostile__ref_bomb');
    expect(names).not.toContain('hostile__titled');
    expect(names).toContain('hostile__relist');
    const before = commandCount(d);
    expect(await outcome('hostile__titled', { n: 2 })).toMatch(/Unknown tool: "hostile__titled"/);
    expect(commandCount(d)).toBe(before);
    await bystander();
    // The owner's list works, and no View carries the title (the 20,000 items above are in it, so its size
    // says nothing).
    const list = await runCli(['list', '--all', '--data-dir', d.dataDir], {
      OGF_BROKER_OWNER_TOKEN: d.ownerToken,
    });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).not.toContain('t'.repeat(1000));
  }, 20_000);
});
