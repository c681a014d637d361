/**
 * Contract 7 and 3.1 (v2): an upstream's notifications/tools/list_changed refreshes its cached tools, and the
 * daemon tells its own clients with notifications/tools/list_changed. Real daemon, real SDK client over
 * HTTP (a 2025-era session, which hears it on its GET stream), our test server as the upstream.
 */
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { call, httpClient, type McpClient, TestOwner } from './helpers/mcp.js';
import { TEST_UPSTREAM } from './helpers/upstreams.js';

let d: RunningDaemon | undefined;
let mcp: McpClient | undefined;
let owner: TestOwner | undefined;
afterAll(async () => {
  owner?.close();
  await mcp?.close();
  await d?.stop();
});

it('[c3.1.list-changed] [c7.exposed] an upstream’s list_changed reaches the daemon’s clients, and its new tool is listed', async () => {
  d = await startDaemon({
    config: { upstreams: { ours: { argv: [process.execPath, TEST_UPSTREAM, 'ok'], wait_seconds: 30 } } },
  });
  const client = await httpClient(`${d.url}/mcp`, d.mcpToken);
  mcp = client;
  let changes = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changes++;
  });
  await waitFor(
    async () => (await client.listTools()).tools.some((t) => t.name === 'ours__add_tool'),
    'ours listed',
    30_000,
  );
  expect((await client.listTools()).tools.some((t) => t.name === 'ours__extra')).toBe(false);
  const seenBefore = changes;
  owner = await TestOwner.connect(d);
  const answer = call(client, 'ours__add_tool', {});
  const view = await waitFor(
    () => [...owner!.views.values()].find((v) => v.command === 'ours__add_tool'),
    'the call',
  );
  await owner.approve(view.id);
  expect((await answer).isError).toBeFalsy();
  await waitFor(() => changes > seenBefore, 'notifications/tools/list_changed from the daemon');
  await waitFor(
    async () => (await client.listTools()).tools.some((t) => t.name === 'ours__extra'),
    'ours__extra listed',
  );
});

it('[c7.refuse-garbage] a storm of 200 list_changed costs the upstream at most two tools/list, one at a time', async () => {
  const client = mcp!;
  const answer = call(client, 'ours__storm', {});
  const view = await waitFor(
    () => [...owner!.views.values()].find((v) => v.command === 'ours__storm'),
    'the storm call',
  );
  await owner!.approve(view.id);
  const r = await answer;
  const text = (r.content as Array<{ text?: string }>)[0]?.text ?? '';
  const n = Number(/during the storm: (\d+)/.exec(text)?.[1]);
  expect(n, text).toBeGreaterThanOrEqual(1);
  expect(n, text).toBeLessThanOrEqual(2);
  expect((await client.listTools()).tools.some((t) => t.name === 'ours__storm')).toBe(true);
});
