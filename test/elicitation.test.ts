/**
 * The AI's own client as a channel (contract 19): a client that declares `elicitation.url` gets one URL-mode
 * `elicitation/create` when a gated call stays open waiting for the owner — the card's link (no token in
 * it) and one sentence — once per command; whatever it answers decides nothing. The v2 SDK's real Client,
 * over Streamable HTTP, in both protocol generations: on 2025-11-25 it is sent; on 2026-07-28 the SDK lets
 * a server ask only through an input_required result that would end the call, so none is sent (docs say so).
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { echoConfig, MODERN_OPTIONS } from './helpers/mcp.js';
import { type Frame, OwnerSocket } from './helpers/owner.js';

let d: RunningDaemon;
let owner: OwnerSocket;

beforeAll(async () => {
  d = await startDaemon({ config: echoConfig() });
  owner = await OwnerSocket.open(d);
});

afterAll(async () => {
  await owner?.close();
  await d?.stop();
});

/** A v2 SDK client of `generation`, declaring URL-mode elicitation (or not), recording what it is asked. */
async function client(generation: 'legacy' | 'modern', url = true) {
  const asked: Frame[] = [];
  const c = new Client(
    { name: 'elicit-test', version: '1.0.0' },
    {
      ...(generation === 'modern' ? MODERN_OPTIONS : {}),
      capabilities: url ? { elicitation: { url: {} } } : {},
    },
  );
  if (url)
    c.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params as Frame);
      // The attack: the client (the AI's side) says "accept" — it must decide nothing.
      return { action: 'accept' };
    });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(d.info.mcp_url), {
      requestInit: { headers: { authorization: `Bearer ${d.mcpToken}` } },
    }),
  );
  return { c, asked };
}

const echo = (c: Client, word: string, wait: number) =>
  c.callTool({
    name: 'run_command_wait',
    arguments: { command: 'echo', args: { word }, wait_seconds: wait },
  });

const idOf = (r: unknown) =>
  (r as { structuredContent: { pending_id: string } }).structuredContent.pending_id;

describe('[c19.elicitation] the card link through the AI’s own client (contract 19)', () => {
  it('2025-11-25: one URL-mode elicitation per command, with the card’s link and no token; accepting decides nothing', async () => {
    const { c, asked } = await client('legacy');
    try {
      const r = await echo(c, 'one', 1);
      const id = idOf(r);
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatchObject({
        mode: 'url',
        url: `${d.url}/#${id}`,
        message: 'The owner must approve: Run echo',
      });
      expect(typeof asked[0]!.elicitationId).toBe('string');
      expect(JSON.stringify(asked)).not.toContain(d.ownerToken);
      expect(JSON.stringify(asked)).not.toContain(d.mcpToken);
      // The client said accept: still waiting for the owner.
      expect((r as { structuredContent: Frame }).structuredContent).toMatchObject({ status: 'PENDING' });
      expect((await owner.view(id, (x) => x.version >= 1, 'the card')).state).toBe('awaiting_review');
      // Waiting again on the same command asks nothing new.
      await c.callTool({ name: 'await_command_result', arguments: { pending_id: id, wait_seconds: 1 } });
      expect(asked).toHaveLength(1);
      const v = await owner.view(id, (x) => x.state === 'awaiting_review', 'the card');
      expect(v.state).toBe('awaiting_review');
      await owner.request({ type: 'deny', id, version: v.version });
    } finally {
      await c.close();
    }
  });

  it('2025-11-25: a client that did not declare elicitation.url is asked nothing; a call that does not wait neither', async () => {
    const plain = await client('legacy', false);
    const eager = await client('legacy');
    try {
      const r = await echo(plain.c, 'two', 1);
      expect(plain.asked).toEqual([]);
      const z = await echo(eager.c, 'three', 0);
      expect(eager.asked).toEqual([]);
      for (const id of [idOf(r), idOf(z)]) {
        const v = await owner.view(id, (x) => x.state === 'awaiting_review', 'the card');
        await owner.request({ type: 'deny', id, version: v.version });
      }
    } finally {
      await plain.c.close();
      await eager.c.close();
    }
  });

  it('2026-07-28: the call stays open and is answered PENDING; no elicitation (the SDK allows none during a call)', async () => {
    const { c, asked } = await client('modern');
    try {
      const r = await echo(c, 'four', 1);
      expect((r as { structuredContent: Frame }).structuredContent).toMatchObject({ status: 'PENDING' });
      expect(asked).toEqual([]);
      const id = idOf(r);
      const v = await waitFor(() => owner.latest(id), 'the card');
      await owner.request({ type: 'deny', id, version: v.version });
    } finally {
      await c.close();
    }
  });
});
