/**
 * One notification per previewed request (contract 13.1 (v4); issue 36 item 1, as a user met it): with the
 * real filesystem server behind the gate and `preset: "filesystem"`, each `write_file` gets a preview in the
 * background (two amends at version 1). Before, each such request notified three times and the digest said
 * "4 more requests waiting" where 1 more waited. A burst of 8 through the real daemon to a `json` receiver on
 * loopback: every pending id is told exactly once, one by one or in the digest, whose count is exact.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningDaemon, waitFor } from './helpers/daemon.js';
import type { McpClient } from './helpers/mcp.js';
import { HttpReceiver } from './helpers/receivers.js';
import { notesBehindGate } from './helpers/upstreams.js';

let d: RunningDaemon;
let ai: McpClient;
let hook: HttpReceiver;
let files: string;

beforeAll(async () => {
  hook = await HttpReceiver.start();
  files = mkdtempSync(join(tmpdir(), 'ogf-once-'));
  ({ d, ai } = await notesBehindGate(
    files,
    { preset: 'filesystem', wait_seconds: 0 },
    { notify: [{ id: 'hook', type: 'webhook', url: hook.url(), format: 'json' }] },
  ));
});

afterAll(async () => {
  await ai?.close();
  await d?.stop();
  await hook?.close();
});

it('[c13.1.once] a burst of previewed requests: each pending id told once, the digest’s count exact', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 8; i++) writeFileSync(join(files, `f${i}.txt`), `old ${i}\n`);
  const calls = Array.from({ length: 8 }, (_, i) =>
    ai.callTool({
      name: 'notes__write_file',
      arguments: { path: join(files, `f${i}.txt`), content: `new ${i}\n` },
    }),
  );
  for (const r of (await Promise.all(calls)) as CallToolResult[])
    ids.push((r.structuredContent as { pending_id: string }).pending_id);
  const told = () => {
    const out: string[] = [];
    for (const m of hook.json()) {
      if (m.event === 'waiting') out.push(String(m.pending_id));
      if (m.event === 'digest') {
        expect(m.count).toBe((m.pending_ids as string[]).length);
        out.push(...(m.pending_ids as string[]));
      }
    }
    return out;
  };
  // Every request is covered (the digest comes at its window's end, 10 s after the first).
  await waitFor(() => ids.every((id) => told().includes(id)), 'every request told', 30_000);
  // The previews have all settled by now; a late amend must not tell anything again.
  await waitFor(
    async () => {
      const snapshot = hook.json().length;
      await new Promise((r) => setTimeout(r, 2_500));
      return hook.json().length === snapshot;
    },
    'no more messages',
    30_000,
  );
  // Exactly once each: no id twice, none missing (the digest's count is its ids' length, checked in told()).
  expect(told().sort()).toEqual([...ids].sort());
  for (const m of hook.json().filter((x) => x.event === 'digest'))
    expect(m.summary).toBe(`${m.count} more ${m.count === 1 ? 'request' : 'requests'} from local`);
}, 90_000);
