/**
 * Files an approved command writes are the owner's files (contract 1.1 (v4); issue 36 item 2): the daemon's
 * umask 077 keeps its own data private, but a catalog command and a stdio upstream run with the umask the
 * daemon was started with. Before, `drafts/idea.md` written through the filesystem server came out 0600.
 * Real daemon started under umask 022, a real catalog command, the real filesystem server.
 */
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { httpClient, type McpClient } from './helpers/mcp.js';
import { OwnerSocket } from './helpers/owner.js';
import { FILESYSTEM } from './helpers/upstreams.js';

const mode = (p: string) => statSync(p).mode & 0o777;

let d: RunningDaemon;
let ai: McpClient;
let owner: OwnerSocket;
let files: string;

beforeAll(async () => {
  files = mkdtempSync(join(tmpdir(), 'ogf-umask-'));
  // The daemon inherits this process's umask at spawn: start it as a shell under umask 022 would.
  const before = process.umask(0o022);
  try {
    d = await startDaemon({
      config: {
        commands: {
          touch: {
            description: 'Write a file',
            argv: [process.execPath, '-e', 'require("fs").writeFileSync(process.argv[1], "x")', '{path}'],
            params: { path: { type: 'string', max_length: 200 } },
          },
        },
        upstreams: { notes: { argv: [process.execPath, FILESYSTEM, files], wait_seconds: 0 } },
      },
    });
  } finally {
    process.umask(before);
  }
  ai = await httpClient(`${d.url}/mcp`, d.mcpToken);
  owner = await OwnerSocket.open(d);
  await waitFor(
    async () => (await ai.listTools()).tools.some((t) => t.name === 'notes__write_file'),
    'notes__write_file listed',
    30_000,
  );
});

afterAll(async () => {
  await ai?.close();
  await owner?.close();
  await d?.stop();
});

/** Calls `name` with `args` (wait 0), approves it as the owner and waits for it to succeed. */
async function approved(name: string, args: Record<string, unknown>): Promise<void> {
  const r = (await ai.callTool({ name, arguments: args })) as CallToolResult;
  const id = (r.structuredContent as { pending_id?: string } | undefined)?.pending_id;
  if (id === undefined) throw new Error(`no pending_id: ${JSON.stringify(r)}`);
  const v = await owner.view(id, (x) => x.state === 'awaiting_review', 'waiting');
  expect((await owner.request({ type: 'approve', id, version: v.version })).ok).toBe(true);
  await owner.view(id, (x) => x.state === 'succeeded', 'succeeded');
}

describe('[c1.1.owner-umask] what an approved command writes gets the owner’s mode, the daemon’s files stay 0600', () => {
  it('a catalog command’s file is 0644 under umask 022', async () => {
    const path = join(files, 'from-command.txt');
    await approved('run_command_wait', { command: 'touch', args: { path }, wait_seconds: 0 });
    expect(mode(path).toString(8)).toBe('644');
  });

  it('a stdio upstream’s write (the filesystem server) is 0644 under umask 022', async () => {
    const path = join(files, 'idea.md');
    await approved('notes__write_file', { path, content: 'an idea\n' });
    expect(mode(path).toString(8)).toBe('644');
  });

  it('the daemon’s own files are still private', () => {
    for (const f of ['broker.db', 'broker.db-wal', 'owner.token', 'mcp.token', 'daemon.json'])
      expect(mode(join(d.dataDir, f)).toString(8)).toBe('600');
    expect(mode(d.dataDir).toString(8)).toBe('700');
  });
});
