/**
 * `ogf-broker init` (contract 17; issue 36 item 5): a stranger's first config. The real CLI into a temp HOME
 * and data dir, a real daemon started on what it wrote, the real filesystem server behind the gate: a write
 * under drafts/ is allowed by the starter rule (and is the owner's file, 0644 under umask 022), a read runs
 * at once, any other write waits for the owner.
 */
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { httpClient, type McpClient } from './helpers/mcp.js';
import { OwnerSocket } from './helpers/owner.js';

const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);

let home: string;
let dataDir: string;
let notes: string;
let d: RunningDaemon;
let ai: McpClient;
let owner: OwnerSocket;
let initOut: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'ogf-init-home-'));
  dataDir = join(home, 'state');
  notes = join(home, 'ogf-notes');
  const r = await runCli(['init', '--data-dir', dataDir], { HOME: home });
  expect(r.code, r.stderr).toBe(0);
  initOut = r.stdout;
  // The daemon inherits this process's umask at spawn: start it as a shell under umask 022 would.
  const before = process.umask(0o022);
  try {
    d = await startDaemon({ dataDir, env: { HOME: home } });
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
}, 60_000);

afterAll(async () => {
  await ai?.close();
  await owner?.close();
  await d?.stop();
});

const call = async (name: string, args: Record<string, unknown>) =>
  (await ai.callTool({ name, arguments: args })) as CallToolResult;
/** The command's status: `_meta["ogf-broker/command"]` on the tool's own answer, else the gate's result. */
const status = (r: CallToolResult) =>
  (r._meta?.['ogf-broker/command'] as { status?: string } | undefined)?.status ??
  (r.structuredContent as { status?: string } | undefined)?.status;

describe('[c17.init] ogf-broker init writes a starter config the daemon runs', () => {
  it('writes config.json 0600 with ~/ogf-notes and drafts/, and says what it wrote and what is next', () => {
    expect(mode(join(dataDir, 'config.json'))).toBe('600');
    expect(existsSync(join(notes, 'drafts'))).toBe(true);
    const config = JSON.parse(readFileSync(join(dataDir, 'config.json'), 'utf8'));
    expect(config.upstreams.notes.preset).toBe('filesystem');
    expect(config.upstreams.notes.trust_read_only_hint).toBe(true);
    expect(config.upstreams.notes.argv.at(-1)).toBe(notes);
    expect(config).not.toHaveProperty('sandbox');
    expect(initOut).toContain(join(dataDir, 'config.json'));
    expect(initOut).toMatch(/start --data-dir/);
    expect(initOut).toMatch(/token mcp/);
  });

  it('refuses to overwrite an existing config (exit 2) and leaves it as it was', async () => {
    const before = readFileSync(join(dataDir, 'config.json'), 'utf8');
    const r = await runCli(['init', '--data-dir', dataDir, '--folder', join(home, 'other')], { HOME: home });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^ogf-broker: init: .*exists already/);
    expect(readFileSync(join(dataDir, 'config.json'), 'utf8')).toBe(before);
    expect(existsSync(join(home, 'other'))).toBe(false);
  });

  it('the AI writes drafts/idea.md at once (rule notes-drafts), as the owner’s file 0644', async () => {
    const path = join(notes, 'drafts', 'idea.md');
    const r = await call('notes__write_file', { path, content: 'an idea\n' });
    expect(status(r), JSON.stringify(r)).toBe('SUCCEEDED');
    expect(readFileSync(path, 'utf8')).toBe('an idea\n');
    expect(mode(path)).toBe('644');
  });

  it('a read runs without asking', async () => {
    writeFileSync(join(notes, 'todo.md'), 'read me\n');
    const r = await call('notes__read_text_file', { path: join(notes, 'todo.md') });
    expect(status(r), JSON.stringify(r)).toBe('SUCCEEDED');
  });

  it('a write outside drafts/ waits for the owner', async () => {
    const path = join(notes, 'outside.md');
    const answer = call('notes__write_file', { path, content: 'not a draft\n' });
    // Wait for the state (the owner sees it awaiting review), then deny it: the call answers DENIED.
    const waiting = await waitFor(
      () =>
        owner.frames
          .filter((f) => f.type === 'upsert' || f.type === 'snapshot')
          .flatMap((f) => (f.type === 'upsert' ? [f.command] : f.commands))
          .find((v) => v.command === 'notes__write_file' && v.state === 'awaiting_review'),
      'the write outside drafts/ awaiting review',
    );
    expect(existsSync(path)).toBe(false);
    expect((await owner.request({ type: 'deny', id: waiting.id, version: waiting.version })).ok).toBe(true);
    expect(status(await answer)).toBe('DENIED');
    expect(existsSync(path)).toBe(false);
  });
});
