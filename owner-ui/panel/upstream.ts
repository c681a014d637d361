/**
 * The owner's card for an upstream call (contract 7, 5 (v2)): which server and tool, the server's
 * annotations shown as its claims (a server can say anything: "server says: read-only" is its word, not
 * ours), and every argument readable — none hidden, large or deep ones folded and opened level by level in
 * bounded work, control and bidi characters shown escaped (./arg-view.ts, issue 19), and arguments the
 * daemon sent only as a preview loaded whole on demand (./args-loader.ts). Then the upstream's
 * own content blocks in the outcome.
 */
import type { View } from '../../common/owner-messages.js';
import { escapeVisible } from '../../common/visible.js';
import { el } from '../dom.js';
import { argsSection } from './args-loader.js';
import { previewBlock } from './preview.js';

/** The server's annotations in words (the same words `ogf-broker list` prints, daemon/owner/format.ts). */
export function claimWords(annotations: Record<string, unknown> | undefined): string[] {
  if (annotations === undefined) return [];
  const words: string[] = [];
  if (annotations.readOnlyHint === true) words.push('read-only');
  if (annotations.destructiveHint === true) words.push('destructive');
  if (annotations.destructiveHint === false) words.push('not destructive');
  if (annotations.idempotentHint === true) words.push('idempotent');
  if (annotations.openWorldHint === true) words.push('reaches the outside world');
  if (annotations.openWorldHint === false) words.push('closed world');
  return words;
}

/** The card's upstream part: server, tool, the server's claims and every argument. */
export function upstreamBlock(v: View): HTMLElement | null {
  const u = v.upstream;
  if (u === undefined) return null;
  const claims = claimWords(u.annotations);
  return el(
    'div',
    { class: 'upstream', 'data-upstream': u.name, 'data-tool': u.tool },
    el(
      'p',
      { class: 'upstream-tool' },
      'Upstream ',
      el('strong', { class: 'upstream-name' }, u.name),
      ' · tool ',
      el('strong', { class: 'tool-name' }, u.tool),
      // The server's words, on one line: its newlines show as `\n` too.
      u.title === undefined ? '' : ` (“${escapeVisible(u.title)}”)`,
    ),
    claims.length === 0
      ? el('p', { class: 'claims' }, 'The server makes no claims about this tool.')
      : el(
          'p',
          { class: 'claims' },
          ...claims.map((c) => el('span', { class: 'claim' }, `server says: ${c}`)),
        ),
    // Contract 12: the effect first (the owner decides on the change), then the exact arguments.
    previewBlock(v),
    // Over 16 KiB of JSON the View holds a preview: args-loader.ts says so and loads them whole.
    argsSection(v, 'Arguments sent exactly as shown'),
  );
}

/** The upstream's own content blocks (text as text; other kinds named), shown in the outcome. */
export function upstreamContent(v: View): HTMLElement | null {
  const result = v.result?.upstream_result as { content?: unknown } | undefined;
  if (!Array.isArray(result?.content)) return null;
  const blocks = (result.content as Array<Record<string, unknown>>).map((b) =>
    b.type === 'text' && typeof b.text === 'string'
      ? el('pre', { class: 'upstream-text' }, b.text)
      : el('p', { class: 'upstream-other' }, `(${String(b.type)} content)`),
  );
  return el(
    'details',
    { class: 'output upstream-result', open: true },
    el('summary', {}, 'What the server answered'),
    ...blocks,
  );
}
