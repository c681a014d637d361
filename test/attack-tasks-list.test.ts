/**
 * Attack (issue 19, finding 3): stall the daemon with `tasks/list` (contract 10). v0.2 answered it by paging
 * through every client's history on the event loop and JSON-parsing each row to keep the caller's own tasks,
 * so an AI that filled the history with large calls (queued and cancelled: nothing reaches the owner's
 * decision, the pending cap never bites) made every `tasks/list` — even from a client with no tasks — cost a
 * parse of all of it, and a handful in parallel held the owner's login and socket for many seconds.
 *
 * The attacker holds two MCP tokens (`evil`, `evil2`, made with the real CLI), as a real 2025-11-25 client
 * (the v1 SDK). `evil` queues large task-augmented calls and cancels each; then both tokens list tasks
 * without pause, in parallel lanes (`evil2` has no task; `evil` lists its own large ones), while the owner
 * logs in over HTTP and asks for history on a Bearer socket. The owner must be served while the lanes run
 * (the guard below is generous: a stalled loop took far longer), and `evil2` sees no task.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { httpClient, makeClientToken } from './helpers/mcp.js';
import { OwnerSocket } from './helpers/owner.js';
import { TEST_UPSTREAM } from './helpers/upstreams.js';

/** Calls queued and cancelled: ~110 MB of history, as in the report (150 × 1 MB took 1.25 s per list). */
const CALLS = 110;
/** Each call's argument: just under the 1 MiB body limit of /mcp once wrapped in JSON-RPC. */
const BIG = 1_000_000;
/** Parallel lanes of tasks/list per attacker token, each sending the next as soon as one is answered. */
const LANES = 4;
/** How long the owner may take while attacked: generous (the stalled loop took over a minute here). */
const OWNER_GUARD_MS = 10_000;

let d: RunningDaemon;
let evil: Client;
let evil2: Client;

beforeAll(async () => {
  d = await startDaemon({
    config: { upstreams: { ours: { argv: [process.execPath, TEST_UPSTREAM, 'ok'], wait_seconds: 0 } } },
  });
  evil = await httpClient(`${d.url}/mcp`, await makeClientToken(d, 'evil'));
  evil2 = await httpClient(`${d.url}/mcp`, await makeClientToken(d, 'evil2'));
  await waitFor(
    async () => (await evil.listTools()).tools.some((t) => t.name === 'ours__echo'),
    'the upstream tool listed',
    45_000,
  );
  // Queue-and-cancel: nothing stays PENDING, every row keeps its megabyte of arguments.
  for (let i = 0; i < CALLS; i++) {
    const created = await evil.request(
      {
        method: 'tools/call',
        params: { name: 'ours__echo', arguments: { text: `${i} ${'A'.repeat(BIG)}` }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    );
    await evil.experimental.tasks.cancelTask(created.task.taskId);
  }
  // Then small ones, so the large rows are older than the owner snapshot's newest 200 final commands: a
  // View carries its command's arguments whole, so 110 of them would make a 110 MB snapshot — a separate
  // matter from this finding (reported with it), which is the cost of *listing*.
  for (let i = 0; i < 200; i++) {
    const created = await evil.request(
      { method: 'tools/call', params: { name: 'ours__echo', arguments: { text: `small ${i}` }, task: {} } },
      CreateTaskResultSchema,
    );
    await evil.experimental.tasks.cancelTask(created.task.taskId);
  }
}, 300_000);

afterAll(async () => {
  await evil?.close();
  await evil2?.close();
  await d?.stop();
});

/** Lanes of back-to-back `tasks/list` from one client until stopped; counts the answers. */
function listLanes(client: Client, lanes: number) {
  let stopped = false;
  let answered = 0;
  const errors: unknown[] = [];
  const lane = async () => {
    let cursor: string | undefined;
    while (!stopped) {
      try {
        // Walks every page (the large tasks are older than the small ones), then starts again.
        cursor = (await client.experimental.tasks.listTasks(cursor, { timeout: 600_000 })).nextCursor;
        answered++;
      } catch (e) {
        if (!stopped) errors.push(e);
      }
    }
  };
  const done = Promise.all(Array.from({ length: lanes }, lane));
  return {
    get answered() {
      return answered;
    },
    errors,
    stop: () => {
      stopped = true;
      return done;
    },
  };
}

/** The owner's login (contract 5: POST /login with the token) and a history request on a Bearer socket. */
async function ownerServed(): Promise<{ login: number; history: unknown }> {
  const login = await fetch(`${d.url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: d.ownerToken }),
  });
  await login.arrayBuffer();
  const socket = await OwnerSocket.open(d);
  try {
    socket.ws.send(JSON.stringify({ type: 'history', req_id: 'h1', limit: 1 }));
    const history = await socket.waitFor((f) => f.type === 'history' && f.req_id === 'h1', 'history');
    return { login: login.status, history: history.commands };
  } finally {
    await socket.close();
  }
}

describe('[c10.tasks-list-bounded] tasks/list cannot stall the daemon', () => {
  it('a client with no tasks gets an empty list; the owner of large tasks gets them in short pages', async () => {
    expect(await evil2.experimental.tasks.listTasks()).toEqual({ tasks: [] });
    const seen = new Set<string>();
    let pages = 0;
    let cursor: string | undefined;
    do {
      const page = await evil.experimental.tasks.listTasks(cursor);
      pages++;
      expect(page.tasks.length).toBeGreaterThan(0);
      expect(page.tasks.length).toBeLessThanOrEqual(50);
      for (const t of page.tasks) {
        expect(t.status).toBe('cancelled');
        expect(seen.has(t.taskId)).toBe(false);
        seen.add(t.taskId);
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(seen.size).toBe(CALLS + 200);
    // At most ~2 MiB of stored records a page: two of the large tasks each (4 pages hold the 200 small).
    expect(pages).toBeGreaterThanOrEqual(4 + CALLS / 2);
    // Another client's taskId is no cursor of this client's.
    await expect(evil2.experimental.tasks.listTasks([...seen][0])).rejects.toThrow(/cursor/);
  }, 120_000);

  it('the owner logs in and gets its answer while both tokens list tasks without pause', async () => {
    const strangers = listLanes(evil2, LANES);
    const own = listLanes(evil, LANES);
    // The lanes are in flight at the daemon once each token has had an answer.
    await waitFor(() => strangers.answered > 0 && own.answered > 0, 'the first lists answered', 600_000);
    let guard: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      ownerServed(),
      new Promise<'stalled'>((r) => {
        guard = setTimeout(() => r('stalled'), OWNER_GUARD_MS);
      }),
    ]);
    clearTimeout(guard);
    const listsWhileOwnerServed = strangers.answered + own.answered;
    await Promise.all([strangers.stop(), own.stop()]);
    expect(outcome, `the owner was not served within ${OWNER_GUARD_MS} ms while attacked`).not.toBe(
      'stalled',
    );
    expect(outcome).toMatchObject({ login: 200 });
    expect(listsWhileOwnerServed).toBeGreaterThan(0);
    expect(strangers.errors).toEqual([]);
    expect(own.errors).toEqual([]);
  }, 900_000);
});
