/**
 * The MCP servers the tests put behind the gate (architecture.md "Tests"): the real filesystem and
 * everything servers from npm, and our own small test upstream (test/fixtures/test-upstream.mjs: its modes
 * play a well-behaved server, a misbehaving one and a hostile one).
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT } from './daemon.js';

const require = createRequire(import.meta.url);

/** `@modelcontextprotocol/server-filesystem`'s entry, run with `process.execPath`. */
export const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
/** `@modelcontextprotocol/server-everything`'s entry (argument `stdio`). */
export const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
/** Our test upstream: `node TEST_UPSTREAM <mode> [log]`. */
export const TEST_UPSTREAM = join(ROOT, 'test', 'fixtures', 'test-upstream.mjs');
