/**
 * What an upstream call means to the core (contracts 7, 8, 9): an identical PENDING call is its twin;
 * grantable per exposed tool (`<upstream>__<tool>`) and may need several owners; no secret; summarised
 * and listed by server and tool, with what the server claims of it and every argument whole.
 */
import { escapeForTerminal as esc } from '../../base/index.js';
import { argLines, bareRunSummary, type Kind, runSummary } from '../../tool-kind/index.js';
import type {} from './fields.js';
import { previewLines } from './previews/index.js';

/** The server's annotations in words: the same words as the panel (owner-ui/panel/upstream.ts claimWords). */
function claimWords(a: Record<string, unknown> | undefined): string[] {
  if (a === undefined) return [];
  const words: string[] = [];
  if (a.readOnlyHint === true) words.push('read-only');
  if (a.destructiveHint === true) words.push('destructive');
  if (a.destructiveHint === false) words.push('not destructive');
  if (a.idempotentHint === true) words.push('idempotent');
  if (a.openWorldHint === true) words.push('reaches the outside world');
  if (a.openWorldHint === false) words.push('closed world');
  return words;
}

export const upstreamKind: Kind = {
  tool: 'upstream',
  twinRule: true,
  grantRefusal: undefined,
  quorum: true,
  carriesSecret: false,
  fields: ['upstream', 'reach', 'file_lane'],
  identity: [],
  shown: ['upstream', 'reach'],
  // Contract 20: one launch at a time per file, so each re-checks after the one before ran.
  lane: 'file_lane',
  target: (fields) =>
    fields.upstream === undefined ? undefined : { server: fields.upstream.name, tool: fields.upstream.tool },
  summary: (command) =>
    command.upstream === undefined
      ? runSummary(command)
      : `Call ${command.upstream.tool} on the upstream ${command.upstream.name}`,
  // Its summary names no argument value already (contract 13.1).
  bareSummary: (command) =>
    command.upstream === undefined
      ? bareRunSummary(command)
      : `Call ${command.upstream.tool} on the upstream ${command.upstream.name}`,
  /** Contract 7: an upstream call shows the server and tool, its claims, and every argument whole (escaped). */
  lines(v) {
    const u = v.upstream;
    if (u === undefined) return [];
    const lines = [
      `    upstream: ${esc(u.name)}  tool: ${esc(u.tool)}${u.title === undefined ? '' : `  (${esc(u.title)})`}`,
    ];
    const claims = claimWords(u.annotations);
    if (claims.length > 0) lines.push(`    ${claims.map((c) => `server says: ${c}`).join('; ')}`);
    // Contract 21: what the server's process may touch.
    if (v.reach !== undefined) lines.push(`    reach: ${esc(v.reach)}`);
    // Over 16 KiB of JSON the View holds a preview: arg-lines.ts says so and lists every cut one.
    lines.push(...argLines(v));
    // Contract 12: the effect the owner decides on, escaped line by line.
    lines.push(...previewLines(v.preview));
    return lines;
  },
};
