/**
 * Contract 3.1 (v2) through `ogf-broker mcp-stdio`: when the daemon's tool set changes (here: an upstream adds
 * a tool and says so), a client of the real mcp-stdio child hears notifications/tools/list_changed and then
 * sees the new tool in tools/list. Both generations: a 2025-era client hears it unsolicited, a 2026-07-28
 * client on its subscriptions/listen stream. Real daemon, real child, real SDK clients, our test upstream.
 */
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { call, GENERATIONS, type StdioChild, stdioClient, TestOwner } from './helpers/mcp.js';
import { TEST_UPSTREAM } from './helpers/upstreams.js';

describe.each(GENERATIONS)('mcp-stdio passes on list_changed (%s generation)', (generation) => {
  let d: RunningDaemon;
  let child: StdioChild;
  let owner: TestOwner;
  beforeAll(async () => {
    d = await startDaemon({
      config: { upstreams: { ours: { argv: [process.execPath, TEST_UPSTREAM, 'ok'], wait_seconds: 30 } } },
    });
    child = await stdioClient(d.dataDir, {}, generation);
    owner = await TestOwner.connect(d);
  });
  afterAll(async () => {
    owner?.close();
    await child?.client.close();
    await d?.stop();
  });

  it('[c3.1.list-changed] a client of mcp-stdio hears notifications/tools/list_changed, then lists the new tool', async () => {
    const client = child.client;
    const names = async () => (await client.listTools()).tools.map((t) => t.name);
    // What each notification was followed by: the tools the client listed right after hearing it. Only a
    // notification heard once ours__extra exists can be followed by a listing that holds it, so polling
    // tools/list alone (which would find it anyway) cannot pass this test.
    const heardThenListed: string[][] = [];
    const onChanged = () => void names().then((n) => heardThenListed.push(n));
    if (client instanceof ModernClient) {
      client.setNotificationHandler('notifications/tools/list_changed', onChanged);
      const sub = await client.listen({ toolsListChanged: true });
      expect(sub.honoredFilter.toolsListChanged, 'the relay offers tools list_changed').toBe(true);
    } else {
      client.setNotificationHandler(ToolListChangedNotificationSchema, onChanged);
      expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    }
    await waitFor(async () => (await names()).includes('ours__add_tool'), 'ours listed', 30_000);
    expect(await names()).not.toContain('ours__extra');

    const answer = call(client, 'ours__add_tool', {});
    const view = await waitFor(
      () => [...owner.views.values()].find((v) => v.command === 'ours__add_tool'),
      'the call reaching the owner',
    );
    await owner.approve(view.id);
    expect((await answer).isError).toBeFalsy();
    await waitFor(
      () => heardThenListed.some((n) => n.includes('ours__extra')),
      'a list_changed through mcp-stdio, after which tools/list holds ours__extra',
    );
  });
});
