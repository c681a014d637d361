/**
 * An AI's arguments as the owner reads them, in bounded work whatever they hold (issue 19; contracts 7 and
 * 12 (v3)). Every argument is shown — none hidden — but what is large or deep starts folded, and a fold
 * builds its content only when opened, one level (or one chunk of text) at a time: a value that would be
 * 16 M characters pretty-printed costs its one-line summary until the owner asks for more, and each
 * further step costs at most PAGE_ITEMS items or TEXT_CHUNK characters.
 *
 * Every key and string shows control and bidi characters as visible escapes (`\u202e`, styled apart from
 * typed text), so `photo-\u202Egnp.sh` can never read `photo-hs.png`. A string holding newlines reads as
 * its lines, with its length in characters of the value itself (contract 12 (v3)).
 */

import { type Piece, visiblePieces } from '../../common/visible.js';
import { el } from '../dom.js';
import { characterCount, measure, type Printed, pretty, preview, quotedPieces } from './bounded-json.js';

/** Pretty JSON up to this many characters shows inline; longer values start folded. */
const INLINE_CHARS = 240;
/** Values nesting deeper than this start folded even when short. */
const FOLD_DEPTH = 4;
/** A multi-line text of more lines than this starts folded. */
const INLINE_LINES = 12;
/** Characters of a folded value's one-line summary. */
const SUMMARY_CHARS = 80;
/** Items (array elements, object members, arguments) shown per step. */
const PAGE_ITEMS = 50;
/** Characters of a long text shown per step. */
const TEXT_CHUNK = 20_000;

/** "250,000": counts for people. */
function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** Pieces as DOM: plain text as text, each escape as a marked span (the diff view's too: ./preview.ts). */
export function piecesNodes(pieces: Piece[]): Array<Node | string> {
  return pieces.map((p) =>
    p.escape
      ? el('span', { class: 'esc', title: 'a control or bidirectional character, shown escaped' }, p.text)
      : p.text,
  );
}

/** `<details>` whose content is built on first open (and built again never). */
function fold(summary: Array<Node | string>, build: () => Node[], label?: HTMLElement): HTMLDetailsElement {
  const head = el('summary', {}, label ?? null, label === undefined ? null : ' ', ...summary);
  const details = el('details', { class: 'arg-fold' }, head);
  let built = false;
  const ensure = () => {
    if (built) return;
    built = true;
    details.append(...build());
  };
  // The summary's click (mouse or keyboard) comes before the details opens; `toggle` covers the rest
  // (find-in-page opening it).
  head.addEventListener('click', ensure);
  details.addEventListener('toggle', () => {
    if (details.open) ensure();
  });
  return details;
}

/**
 * A "show more" step (also args-loader.ts's): `render(from, to)` appends items `from..to` (at most `page`
 * of them) wherever they belong; the button, at the end of `into`, shows the next page and says how many are left.
 */
export function paged(
  into: HTMLElement,
  total: number,
  page: number,
  unit: string,
  render: (from: number, to: number) => void,
): void {
  let shown = 0;
  const button = el('button', { type: 'button', class: 'arg-more' });
  const step = () => {
    const to = Math.min(total, shown + page);
    render(shown, to);
    shown = to;
    const left = total - shown;
    if (left <= 0) return;
    button.textContent = `Show the next ${count(Math.min(left, page))} ${unit} (${count(left)} more)`;
    into.append(button);
  };
  button.addEventListener('click', () => {
    button.remove();
    step();
  });
  step();
}

function isHigh(text: string, i: number): boolean {
  return (text.charCodeAt(i) & 0xfc00) === 0xd800;
}

/**
 * A text in TEXT_CHUNK steps appended to `pre` (the button goes to `holder`). A chunk never splits a
 * surrogate pair (the pair goes with the earlier chunk), nor an escape (escapes are made per chunk).
 */
function chunkedText(
  pre: HTMLElement,
  holder: HTMLElement,
  text: string,
  form: 'lines' | 'quoted' | 'plain',
): void {
  paged(holder, text.length, TEXT_CHUNK, 'characters', (from, to) => {
    const start = from > 0 && isHigh(text, from - 1) ? from + 1 : from;
    const end = to < text.length && isHigh(text, to - 1) ? to + 1 : to;
    const part = text.slice(start, end);
    let pieces: Piece[];
    if (form === 'quoted') {
      // The opening quote belongs to the first chunk, the closing one to the last.
      const q = quotedPieces(part);
      pieces = q.slice(start === 0 ? 0 : 1, end >= text.length ? undefined : -1);
    } else pieces = visiblePieces(part, form === 'lines');
    pre.append(...piecesNodes(pieces));
  });
}

/** How many lines a text has (a final newline ends the last line; it does not start another). */
function lineCount(text: string): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return text.endsWith('\n') ? n - 1 : n;
}

function sizeWords(text: string): string {
  const lines = lineCount(text);
  const chars = `${count(characterCount(text))} characters`;
  return text.includes('\n') ? `${count(lines)} line${lines === 1 ? '' : 's'}, ${chars}` : chars;
}

/** A string: its lines when it holds newlines (contract 12), else JSON-quoted; folded when long. */
function stringView(text: string, label?: HTMLElement): HTMLElement {
  const multiline = text.includes('\n');
  const small = text.length <= INLINE_CHARS && (!multiline || lineCount(text) <= INLINE_LINES);
  if (small) {
    if (!multiline) return el('pre', { class: 'arg-value' }, ...piecesNodes(quotedPieces(text)));
    return el(
      'div',
      { class: 'arg-lines' },
      el('pre', { class: 'arg-text' }, ...piecesNodes(visiblePieces(text, true))),
      el('p', { class: 'arg-size' }, sizeWords(text)),
    );
  }
  const start = multiline
    ? visiblePieces(text.slice(0, SUMMARY_CHARS).split('\n')[0]!)
    : quotedPieces(text.slice(0, SUMMARY_CHARS)).slice(0, -1);
  return fold(
    [...piecesNodes(start), `… (${sizeWords(text)}: open to read all)`],
    () => {
      const pre = el('pre', { class: multiline ? 'arg-text' : 'arg-value' });
      const holder = el('div', {}, pre);
      chunkedText(pre, holder, text, multiline ? 'lines' : 'quoted');
      return [holder];
    },
    label,
  );
}

/** One item of an opened array or object: its index or key, then its value (folded again when big). */
function itemView(key: string | number, value: unknown): HTMLElement {
  const label = el('span', { class: 'arg-key' }, typeof key === 'number' ? `[${key}]` : keyView(key));
  // A folded value carries its key on its summary line, so each level opened costs only a small indent:
  // 32 levels still fit a phone. (A long key is a fold of its own, which no summary may hold.)
  const longKey = typeof key === 'string' && key.length > SUMMARY_CHARS;
  const view = argView(value, longKey ? undefined : label);
  return label.parentNode === null
    ? el('div', { class: 'arg-item arg-row' }, label, ' ', view)
    : el('div', { class: 'arg-item' }, view);
}

/** An array or object: inline pretty JSON when small and shallow, else a fold that opens one level. */
function containerView(value: object, label?: HTMLElement): HTMLElement {
  const m = measure(value);
  let small: Printed | undefined;
  if (m.complete && m.depth <= FOLD_DEPTH && m.chars <= INLINE_CHARS) {
    const printed = pretty(value, INLINE_CHARS);
    if (printed.complete) small = printed;
  }
  if (small !== undefined) return el('pre', { class: 'arg-value' }, ...piecesNodes(small.pieces));
  const isArray = Array.isArray(value);
  const keys = isArray ? null : Object.keys(value);
  const n = keys === null ? (value as unknown[]).length : keys.length;
  const what = isArray
    ? `array of ${count(n)} item${n === 1 ? '' : 's'}`
    : `object of ${count(n)} member${n === 1 ? '' : 's'}`;
  const size = m.complete ? `about ${count(m.chars)} characters` : `more than ${count(m.chars)} characters`;
  const head = preview(value, SUMMARY_CHARS);
  return fold(
    [
      ...piecesNodes(head.pieces),
      head.complete ? ' ' : '… ',
      `(${what}, nests ${m.complete ? '' : 'at least '}${m.depth} deep, ${size}: open to read)`,
    ],
    () => {
      const items = el('div', { class: 'arg-items' });
      paged(items, n, PAGE_ITEMS, isArray ? 'items' : 'members', (from, to) => {
        for (let i = from; i < to; i++)
          items.append(
            keys === null
              ? itemView(i, (value as unknown[])[i])
              : itemView(keys[i]!, (value as Record<string, unknown>)[keys[i]!]),
          );
      });
      return [items];
    },
    label,
  );
}

/** Any argument value, shown in bounded work (see the module comment). */
export function argView(value: unknown, label?: HTMLElement): HTMLElement {
  if (typeof value === 'string') return stringView(value, label);
  if (value !== null && typeof value === 'object') return containerView(value, label);
  return el('pre', { class: 'arg-value' }, JSON.stringify(value) ?? String(value));
}

/** A key (an argument's name, a member's): escaped, and folded when long (an AI may send a 1 MB key). */
export function keyView(key: string): HTMLElement {
  if (key.length <= SUMMARY_CHARS) return el('span', { class: 'key' }, ...piecesNodes(visiblePieces(key)));
  return fold(
    [
      ...piecesNodes(visiblePieces(key.slice(0, SUMMARY_CHARS))),
      `… (${sizeWords(key)}: open to read the name)`,
    ],
    () => {
      const pre = el('pre', { class: 'arg-value' });
      const holder = el('div', {}, pre);
      chunkedText(pre, holder, key, 'plain');
      return [holder];
    },
  );
}

/**
 * Every argument as a `<dl>` (name, then value), PAGE_ITEMS at a time; each `dd` carries `data-arg` with
 * its name when that is short (tests and styles find an argument by it).
 */
export function argsList(args: Record<string, unknown>, label: string): HTMLElement {
  const keys = Object.keys(args);
  const list = el('dl', { class: 'arg-list', 'aria-label': label });
  const holder = el('div', { class: 'args' }, list);
  if (keys.length === 0) {
    list.append(el('dd', {}, '(no arguments)'));
    return holder;
  }
  paged(holder, keys.length, PAGE_ITEMS, 'arguments', (from, to) => {
    for (const k of keys.slice(from, to))
      list.append(
        el('dt', {}, keyView(k)),
        el('dd', { 'data-arg': k.length <= 64 ? k : undefined }, argView(args[k])),
      );
  });
  return holder;
}

/** Arguments shown whole as pretty JSON when they fit this many characters (a grant, the Allow dialog). */
const BLOCK_CHARS = 2_000;

/**
 * Arguments at a glance: one `<pre>` of pretty JSON (escaped as everywhere) when it is short, else the
 * bounded `argsList` — the grants area and the Allow dialog show an AI's arguments too (issue 19).
 */
export function argsBlock(args: Record<string, unknown>, label: string): HTMLElement {
  const printed = pretty(args, BLOCK_CHARS);
  if (printed.complete) return el('pre', { 'aria-label': label }, ...piecesNodes(printed.pieces));
  return argsList(args, label);
}
