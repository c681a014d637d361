/**
 * The repository describes every external surface in its own docs/ (contract 17, issue 36 item 7): a stranger
 * with only this checkout can read what each tool takes and answers, every owner frame, every code, every
 * config key and every command. The names are read from the code — the tool definitions, the owner frame
 * schemas and message types, the error catalog, the config's zod schema, the CLI's usage text — so a new
 * surface without its doc fails here. And no link leaves the repository: the design folder beside it is not
 * something a user can open.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HANDSHAKE_ERROR_CODES, NACK_CODES } from '../common/ogf-bridge.js';
import {
  DENY_REASONS,
  FAIL_REASONS,
  OWNER_ERROR_CODES,
  TOOL_ERROR_CODES,
  UNKNOWN_REASONS,
} from '../daemon/base/errors.js';
import { COMMANDS } from '../daemon/commands/usage.js';
import { fileSchema } from '../daemon/config/file.js';
import { RUN_COMMAND_TOOL } from '../daemon/kinds/catalog/source.js';
import { OGF_CUE_TOOL } from '../daemon/kinds/cue/source.js';
import { AWAIT_TOOL, CANCEL_TOOL, listCommandsTool } from '../daemon/mcp/schemas.js';
import { CLIENT_TYPES } from '../daemon/owner/protocol.js';
import { ROOT } from './helpers/daemon.js';

const DOCS = join(ROOT, 'docs');
const REFERENCE = join(DOCS, 'reference');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

const ALL_MD = [...markdownFiles(DOCS), join(ROOT, 'README.md')];
const read = (path: string) => readFileSync(path, 'utf8');
const allDocs = markdownFiles(DOCS).map(read).join('\n');
const inBackticks = (text: string, name: string) => text.includes(`\`${name}\``);

/** The lines of a markdown file outside fenced code blocks. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every key of a zod (v4) schema at any depth: objects, their optional/default/nullable wrappers, arrays, records, unions. */
function zodKeys(schema: unknown, out = new Set<string>(), depth = 0): Set<string> {
  if (depth > 12 || schema === null || typeof schema !== 'object') return out;
  const def = (schema as { _zod?: { def?: Record<string, unknown> } })._zod?.def;
  if (def === undefined) return out;
  if (def.type === 'object') {
    for (const [key, child] of Object.entries(def.shape as Record<string, unknown>)) {
      out.add(key);
      zodKeys(child, out, depth + 1);
    }
    return out;
  }
  for (const inner of [def.innerType, def.element, def.valueType, def.in, def.out, def.schema]) {
    zodKeys(inner, out, depth + 1);
  }
  for (const option of (def.options as unknown[] | undefined) ?? []) zodKeys(option, out, depth + 1);
  return out;
}

describe('[c17.docs-surfaces] docs/ describes every external surface', () => {
  it('[c17.docs-surfaces] every MCP tool of the gate, and each of its inputs, is in docs/reference/mcp.md', () => {
    const mcp = read(join(REFERENCE, 'mcp.md'));
    const tools = [RUN_COMMAND_TOOL, OGF_CUE_TOOL, AWAIT_TOOL, CANCEL_TOOL, listCommandsTool([])];
    const missing: string[] = [];
    for (const tool of tools) {
      if (!inBackticks(mcp, tool.name)) missing.push(tool.name);
      for (const input of Object.keys(tool.inputSchema.properties ?? {})) {
        if (!inBackticks(mcp, input)) missing.push(`${tool.name}.${input}`);
      }
    }
    for (const field of Object.keys(
      (AWAIT_TOOL.outputSchema as { properties: Record<string, unknown> }).properties,
    )) {
      if (!inBackticks(mcp, field)) missing.push(`result.${field}`);
    }
    expect(missing, 'add them to docs/reference/mcp.md').toEqual([]);
  });

  it('[c17.docs-surfaces] every owner frame type, both ways, is in docs/reference/owner-frames.md', () => {
    const doc = read(join(REFERENCE, 'owner-frames.md'));
    // Server → owner frames are TypeScript types only: read their `type` literals from the file itself.
    const messages = read(join(ROOT, 'common', 'owner-messages.ts'));
    const serverTypes = [...new Set([...messages.matchAll(/\btype: '([a-z_]+)'/g)].map((m) => m[1]!))];
    expect(serverTypes).toContain('hello');
    expect(serverTypes).toContain('reply');
    const missing = [...CLIENT_TYPES, ...serverTypes].filter((t) => !inBackticks(doc, t));
    expect(missing, 'add them to docs/reference/owner-frames.md').toEqual([]);
  });

  it('[c17.docs-surfaces] every ogf-bridge/1 frame type is in docs/bridge.md', () => {
    const protocol = read(join(ROOT, 'bridge-client', 'protocol.ts'));
    const types = [...new Set([...protocol.matchAll(/type: z\.literal\('([a-z_]+)'\)/g)].map((m) => m[1]!))];
    expect(types).toContain('cue_ack');
    const bridge = read(join(DOCS, 'bridge.md'));
    expect(types.filter((t) => !bridge.includes(`"type":"${t}"`) && !inBackticks(bridge, t))).toEqual([]);
  });

  it('[c17.docs-surfaces] every status reason, tool error, owner reply and bridge code is in docs/', () => {
    const codes = [
      ...DENY_REASONS,
      ...FAIL_REASONS,
      ...UNKNOWN_REASONS,
      ...TOOL_ERROR_CODES,
      ...OWNER_ERROR_CODES,
      ...HANDSHAKE_ERROR_CODES,
      ...NACK_CODES,
    ];
    expect(codes.filter((c) => !inBackticks(allDocs, c))).toEqual([]);
  });

  it('[c17.docs-surfaces] every config key, at every depth of the schema, is in docs/reference/config.md', () => {
    const doc = read(join(REFERENCE, 'config.md'));
    const keys = zodKeys(fileSchema);
    // The walk reaches the sections' own keys, not only the top level.
    for (const k of [
      'review_timeout_s',
      'commands',
      'argv',
      'max_length',
      'headers_from_env',
      'smtp_url_from_env',
    ])
      expect(keys, k).toContain(k);
    const missing = [...keys].filter((k) => !inBackticks(doc, k));
    expect(missing, 'add them to docs/reference/config.md').toEqual([]);
  });

  it('[c17.docs-surfaces] every CLI command and flag of usage.ts is in docs/reference/cli.md', () => {
    const doc = read(join(REFERENCE, 'cli.md'));
    const headings = new Set(
      prose(doc)
        .filter((l) => l.startsWith('## '))
        .map((l) => l.slice(3).trim()),
    );
    expect(Object.keys(COMMANDS).filter((c) => !headings.has(c))).toEqual([]);
    const flags = new Set(Object.values(COMMANDS).flatMap((u) => u.match(/--[a-z][a-z-]*/g) ?? []));
    expect([...flags].filter((f) => !doc.includes(f))).toEqual([]);
  });

  it('[c17.docs-surfaces] no link leaves the repository and every relative link resolves, anchors included', () => {
    const problems: string[] = [];
    for (const file of ALL_MD) {
      const text = read(file);
      const where = relative(ROOT, file);
      if (/contracts\.md|\.\.\/shared\b/.test(text))
        problems.push(`${where}: names the design folder (contracts.md)`);
      for (const line of prose(text)) {
        // A link written inside inline code is an example, not a link.
        for (const m of line.replace(/`[^`]*`/g, '').matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
          const target = m[1]!;
          if (/^(https?|mailto):/.test(target)) continue;
          const [path = '', anchor] = target.split('#');
          const resolved = path === '' ? file : resolve(dirname(file), decodeURI(path));
          if (!resolved.startsWith(`${ROOT}/`) && resolved !== ROOT) {
            problems.push(`${where}: ${target} leaves the repository`);
            continue;
          }
          if (!existsSync(resolved)) {
            problems.push(`${where}: ${target} does not exist`);
            continue;
          }
          if (anchor && resolved.endsWith('.md') && !anchors(read(resolved)).has(anchor)) {
            problems.push(`${where}: ${target} names no heading of ${relative(ROOT, resolved)}`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });
});
