/**
 * The MCP servers the tests put behind the gate (architecture.md "Tests"): the real filesystem and
 * everything servers from npm, and our own small test upstream (test/fixtures/test-upstream.mjs: its modes
 * play a well-behaved server, a misbehaving one and a hostile one).
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT, type RunningDaemon, startDaemon, waitFor } from './daemon.js';
import { httpClient, type McpClient } from './mcp.js';

const require = createRequire(import.meta.url);

/** `@modelcontextprotocol/server-filesystem`'s entry, run with `process.execPath`. */
export const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
/** `@modelcontextprotocol/server-everything`'s entry (argument `stdio`). */
export const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
/** Our test upstream: `node TEST_UPSTREAM <mode> [log]`. */
export const TEST_UPSTREAM = join(ROOT, 'test', 'fixtures', 'test-upstream.mjs');

/**
 * A daemon with the real filesystem server behind the gate as upstream `notes` (serving `files`), and an MCP
 * client of client `local` that already sees `notes__write_file` (the upstream connects in the background).
 * `config` adds top-level config sections (rules, commands...).
 */
export async function notesBehindGate(
  files: string,
  notes: Record<string, unknown> = {},
  config: Record<string, unknown> = {},
): Promise<{ d: RunningDaemon; ai: McpClient }> {
  const d = await startDaemon({
    config: { upstreams: { notes: { argv: [process.execPath, FILESYSTEM, files], ...notes } }, ...config },
  });
  const ai = await httpClient(`${d.url}/mcp`, d.mcpToken);
  await waitFor(
    async () => (await ai.listTools()).tools.some((t) => t.name === 'notes__write_file'),
    'notes__write_file listed',
    30_000,
  );
  return { d, ai };
}
