/**
 * Contract 12 with the real @modelcontextprotocol/server-filesystem behind the gate (`preset: "filesystem"`):
 * a write_file call shows the diff before the owner decides (the file untouched until approval), a new
 * file shows `--- /dev/null`, edit_file shows the server's own dry-run diff, a read outside the server's
 * roots says it was refused; the preview arrives as an upsert of the SAME version (an approval sent with the
 * version seen before it stays valid), is recorded in the audit log, and never reaches the AI (no MCP
 * answer, task or log line carries it). `ogf-broker list` prints the diff and multi-line arguments as lines,
 * escaped. Real daemon, real SDK client over HTTP, real owner socket.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, type RunningDaemon } from './helpers/daemon.js';
import { auditRows, call, type McpClient, structured } from './helpers/mcp.js';
import { type Frame, OwnerSocket } from './helpers/owner.js';
import { notesBehindGate } from './helpers/upstreams.js';

const files = mkdtempSync(join(tmpdir(), 'ogf-previews-'));
let d: RunningDaemon;
let ai: McpClient;
let owner: OwnerSocket;

beforeAll(async () => {
  ({ d, ai } = await notesBehindGate(files, { preset: 'filesystem', wait_seconds: 0 }));
  owner = await OwnerSocket.open(d);
});

afterAll(async () => {
  await owner?.close();
  await ai?.close();
  await d?.stop();
});

/** Calls an exposed tool (wait_seconds 0: it answers PENDING at once) and returns its pending_id. */
async function queued(tool: string, args: Record<string, unknown>): Promise<string> {
  const r = structured(await call(ai, tool, args));
  expect(r.status).toBe('PENDING');
  return String(r.pending_id);
}

function previewOf(id: string, status: string): Promise<Frame> {
  return owner.view(id, (v) => v.preview?.status === status, `${id}'s preview ${status}`);
}

describe('previews of the filesystem server (contract 12)', () => {
  it('[c12.diff] write_file shows the diff before approval; the preview keeps the version; the AI never sees it', async () => {
    const path = join(files, 'shopping.md');
    writeFileSync(path, '# Shopping\n- milk\n- eggs\n- tea\n');
    const content = '# Shopping\n- milk\n- eggs\n- rm -rf bread\n- tea\n';
    const id = await queued('notes__write_file', { path, content });
    // The version the owner saw first, before the preview arrived.
    const first = await owner.view(id, () => true, `${id} seen`);
    const ready = await previewOf(id, 'ready');
    expect(ready.version).toBe(first.version);
    expect(ready.preview).toMatchObject({ kind: 'file_diff', status: 'ready' });
    expect(ready.preview.new_file).toBeUndefined();
    expect(ready.preview.computed_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(ready.preview.diff).toBe(
      [
        `--- ${path}`,
        `+++ ${path}`,
        '@@ -1,4 +1,5 @@',
        ' # Shopping',
        ' - milk',
        ' - eggs',
        '+- rm -rf bread',
        ' - tea',
        '',
      ].join('\n'),
    );
    // While it waits, with its preview ready, the AI's answer about it carries none of it.
    const waiting = JSON.stringify(
      await call(ai, 'await_command_result', { pending_id: id, wait_seconds: 0 }),
    );
    expect(waiting).toContain('PENDING');
    expect(waiting).not.toContain('"preview"');
    expect(waiting).not.toContain('@@ -1,4');
    // The file is untouched until the owner approves.
    expect(readFileSync(path, 'utf8')).toBe('# Shopping\n- milk\n- eggs\n- tea\n');

    // `list` prints the diff behind its gutter, and the content argument as its lines.
    const list = spawnSync(process.execPath, [CLI, 'list', '--data-dir', d.dataDir], { encoding: 'utf8' });
    expect(list.stdout).toContain('preview (file diff): 1 line added, 0 removed; the file may still change');
    expect(list.stdout).toContain('      | +- rm -rf bread');
    expect(list.stdout).toContain('      |  - milk');
    expect(list.stdout).toContain(`    arg content: text of 5 lines, ${content.length} characters:`);
    expect(list.stdout).toContain('      | - rm -rf bread\n      | - tea\n');

    // An approval sent with the version seen BEFORE the preview arrived is valid (same version).
    const reply = await owner.request({ type: 'approve', id, version: first.version });
    expect(reply.ok).toBe(true);
    await owner.view(id, (v) => v.status === 'SUCCEEDED', `${id} succeeded`);
    expect(readFileSync(path, 'utf8')).toBe(content);

    // The AI's answers never carry the preview.
    const answer = await call(ai, 'await_command_result', { pending_id: id, wait_seconds: 0 });
    expect(JSON.stringify(answer)).not.toContain('"preview"');
    expect(JSON.stringify(answer)).not.toContain('@@ -1,4');
    // Nor does any log line.
    expect(d.stderr()).not.toContain('@@ -1,4');
    expect(d.stderr()).not.toContain('rm -rf bread');

    // Recorded with the command: the audit log has the preview made, with a summary and no content.
    const rows = auditRows(d).filter((r) => r.command_id === id);
    const made = rows.find((r) => r.action === 'preview_made');
    expect(made).toBeDefined();
    expect(JSON.parse(String(made!.detail))).toMatchObject({
      preview: 'file_diff',
      status: 'ready',
      summary: '1 line added, 0 removed',
    });
    expect(String(made!.detail)).not.toContain('bread');
    expect(made!.version).toBe(first.version);
  });

  it('[c12.new-file] a new file diffs from /dev/null', async () => {
    const path = join(files, 'new-note.md');
    const content = 'hello\tthere\nworld\u001b[2J\u202e\n';
    const id = await queued('notes__write_file', { path, content });
    const ready = await previewOf(id, 'ready');
    expect(ready.preview.new_file).toBe(true);
    expect(ready.preview.diff).toBe(
      `--- /dev/null\n+++ ${path}\n@@ -0,0 +1,2 @@\n+hello\tthere\n+world\u001b[2J\u202e\n`,
    );
    // `list` escapes every control and bidi character, in the argument's lines and in the diff's.
    const list = spawnSync(process.execPath, [CLI, 'list', '--data-dir', d.dataDir], { encoding: 'utf8' });
    expect(list.stdout).toContain('preview (file diff): new file, 2 lines added, 0 removed');
    expect(list.stdout).toContain('      | +world\\u001b[2J\\u202e');
    expect(list.stdout).toContain('      | hello\\tthere');
    expect(list.stdout).toContain('    arg content: text of 2 lines, 23 characters:');
    for (const raw of ['\u001b', '\u202e', '\t']) expect(list.stdout).not.toContain(raw);
    expect(await owner.request({ type: 'deny', id, version: ready.version })).toMatchObject({ ok: true });
  });

  it("[c12.dry-run] edit_file shows the server's own dry-run diff, and the file stays as it was", async () => {
    const path = join(files, 'todo.md');
    writeFileSync(path, '- eggs\n- milk\n');
    const id = await queued('notes__edit_file', {
      path,
      edits: [{ oldText: '- eggs', newText: '- eggs\n- bread' }],
    });
    const ready = await previewOf(id, 'ready');
    expect(ready.preview.kind).toBe('dry_run');
    expect(ready.preview.text).toContain('+- bread');
    expect(ready.preview.text).toContain('@@');
    expect(readFileSync(path, 'utf8')).toBe('- eggs\n- milk\n');
    expect(await owner.request({ type: 'deny', id, version: ready.version })).toMatchObject({ ok: true });
    expect(readFileSync(path, 'utf8')).toBe('- eggs\n- milk\n');
  });

  it("[c12.refused] a read outside the server's roots fails the preview and says so", async () => {
    const outside = join(mkdtempSync(join(tmpdir(), 'ogf-outside-')), 'secret.txt');
    writeFileSync(outside, 'TOP SECRET CONTENT\n');
    const id = await queued('notes__write_file', { path: outside, content: 'x\n' });
    const failed = await previewOf(id, 'failed');
    expect(failed.preview.error).toContain('refused to read the file');
    expect(failed.preview.error).toContain('Access denied');
    expect(JSON.stringify(failed)).not.toContain('TOP SECRET');
    // It never blocks a decision.
    expect(await owner.request({ type: 'deny', id, version: failed.version })).toMatchObject({ ok: true });
  });
});
