/**
 * A call's preview on its card (contract 12): the effect the owner decides on. A diff shows as a table of
 * lines — added, removed and unchanged lines each marked by a sign (+, −) and, for screen readers, a word,
 * as well as by colour — with the old and new line numbers, "new file" when there was none, and a note that
 * the file may still change before the command runs. A long diff is folded after FOLD_LINES lines behind a
 * button that says how many more there are. A failure is said in words; a pending preview says it is being
 * worked out. Every text shows control and bidi characters as visible escapes (./visible.ts).
 */
import type { View } from '../../common/owner-messages.js';
import { visiblePieces } from '../../common/visible.js';
import { el } from '../dom.js';
import { piecesNodes } from './arg-view.js';
import { type DiffLine, parseDiff } from './diff-lines.js';
import { time } from './when.js';

type Preview = NonNullable<View['preview']>;

/** Diff lines shown before the fold. */
const FOLD_LINES = 60;
/** Lines one "show more" adds at most (a 256 KiB diff may hold thousands). */
const PAGE_LINES = 1000;

const WORDS: Record<DiffLine['kind'], { sign: string; said: string }> = {
  add: { sign: '+', said: 'added' },
  del: { sign: '−', said: 'removed' },
  ctx: { sign: '', said: 'unchanged' },
  hunk: { sign: '', said: '' },
  note: { sign: '', said: '' },
};

function count(n: number): string {
  return n.toLocaleString('en-US');
}

function row(line: DiffLine): HTMLTableRowElement {
  if (line.kind === 'hunk' || line.kind === 'note') {
    return el(
      'tr',
      { class: `diff-${line.kind}` },
      el(
        'td',
        { colspan: 4 },
        ...piecesNodes(visiblePieces(line.kind === 'note' ? `(${line.text})` : line.text)),
      ),
    );
  }
  const w = WORDS[line.kind];
  return el(
    'tr',
    { class: `diff-${line.kind}`, 'data-kind': line.kind },
    el('td', { class: 'ln ln-old' }, line.old === undefined ? '' : String(line.old)),
    el('td', { class: 'ln ln-new' }, line.new === undefined ? '' : String(line.new)),
    el(
      'td',
      { class: 'sign' },
      el('span', { 'aria-hidden': 'true' }, w.sign),
      el('span', { class: 'visually-hidden' }, w.said),
    ),
    el('td', { class: 'code' }, ...piecesNodes(visiblePieces(line.text))),
  );
}

/** The diff's lines as a table, folded after FOLD_LINES with a button naming how many more there are. */
function diffTable(lines: DiffLine[], label: string): HTMLElement {
  const body = el('tbody', {});
  const table = el(
    'table',
    { class: 'diff' },
    el('caption', { class: 'visually-hidden' }, label),
    el(
      'thead',
      { class: 'visually-hidden' },
      el(
        'tr',
        {},
        el('th', { scope: 'col' }, 'Old line'),
        el('th', { scope: 'col' }, 'New line'),
        el('th', { scope: 'col' }, 'Change'),
        el('th', { scope: 'col' }, 'Text'),
      ),
    ),
    body,
  );
  // Scrolls sideways for long lines: focusable, so a keyboard reaches every character.
  const scroll = el('div', { class: 'diff-scroll', tabindex: 0, role: 'region', 'aria-label': label }, table);
  const holder = el('div', { class: 'diff-holder' }, scroll);
  let shown = 0;
  const more = el('button', { type: 'button', class: 'diff-more' });
  const step = (n: number) => {
    const to = Math.min(lines.length, shown + n);
    for (let i = shown; i < to; i++) body.append(row(lines[i]!));
    shown = to;
    const left = lines.length - shown;
    if (left <= 0) {
      more.remove();
      return;
    }
    more.textContent =
      left <= PAGE_LINES
        ? `Show ${count(left)} more lines`
        : `Show ${count(PAGE_LINES)} more lines (${count(left)} left)`;
    holder.append(more);
  };
  more.addEventListener('click', () => step(PAGE_LINES));
  step(FOLD_LINES);
  return holder;
}

/** "3 lines added, 1 removed" of the parsed lines. */
function counts(lines: DiffLine[]): string {
  const added = lines.filter((l) => l.kind === 'add').length;
  const removed = lines.filter((l) => l.kind === 'del').length;
  return `${count(added)} line${added === 1 ? '' : 's'} added, ${count(removed)} removed`;
}

function readyParts(p: Preview): Array<HTMLElement | null> {
  const text = p.diff ?? p.text ?? '';
  const parsed = parseDiff(text);
  const file = parsed?.to;
  const parts: Array<HTMLElement | null> = [];
  if (p.new_file === true) {
    parts.push(
      el(
        'p',
        { class: 'preview-new-file' },
        el('strong', { class: 'new-file-word' }, 'New file'),
        file === undefined ? '' : ': ',
        file === undefined ? '' : el('code', {}, ...piecesNodes(visiblePieces(file))),
        ' — there is no file there yet; every line is added.',
      ),
    );
  } else if (file !== undefined) {
    parts.push(
      el('p', { class: 'preview-file' }, 'File ', el('code', {}, ...piecesNodes(visiblePieces(file)))),
    );
  }
  if (parsed === undefined) {
    parts.push(
      text === ''
        ? el('p', {}, 'The server answered no text.')
        : el('pre', { class: 'preview-text' }, ...piecesNodes(visiblePieces(text, true))),
    );
  } else if (!parsed.lines.some((l) => l.kind === 'add' || l.kind === 'del')) {
    parts.push(el('p', { class: 'preview-same' }, 'No change: the content is the same as the file’s.'));
  } else {
    parts.push(el('p', { class: 'preview-counts' }, counts(parsed.lines)));
    parts.push(diffTable(parsed.lines, `Changes${file === undefined ? '' : ` to ${file}`}`));
  }
  if (p.truncated === true)
    parts.push(
      el(
        'p',
        { class: 'preview-cut' },
        'The preview was cut at 256 KiB: the rest of the change is not shown.',
      ),
    );
  return parts;
}

/** The card's preview section, or null when the call has none. */
export function previewBlock(v: View): HTMLElement | null {
  const p = v.preview;
  if (p === undefined) return null;
  const dry = p.kind === 'dry_run';
  const title = dry ? 'What the server says this call would do (dry run)' : 'What this call would change';
  const titleId = `preview-${v.id}`;
  const parts: Array<HTMLElement | null> = [];
  if (p.status === 'pending') {
    parts.push(
      el(
        'p',
        { class: 'preview-pending', role: 'status' },
        'Working out the change… You can decide without it.',
      ),
    );
  } else if (p.status === 'failed') {
    parts.push(
      el(
        'p',
        { class: 'preview-error' },
        el('strong', {}, 'No preview: '),
        p.error ?? 'the preview could not be made',
        '. Decide from the arguments below.',
      ),
    );
  } else if (p.diff === undefined && p.text === undefined) {
    // Contract 12 (v4): once the command ended its preview's text left the store.
    parts.push(
      el(
        'p',
        { class: 'preview-removed' },
        'The preview’s text was removed after the command ended; the audit record keeps its SHA-256.',
      ),
    );
  } else {
    parts.push(...readyParts(p));
    parts.push(
      el(
        'p',
        { class: 'preview-note' },
        `${v.status === 'PENDING' ? 'The file may still change before the command runs: this is' : 'This was'} how it looked${
          p.computed_at === undefined ? '' : ` at ${time(p.computed_at)}`
        }${dry ? ', as the server described it' : ''}.`,
      ),
    );
  }
  return el(
    'section',
    {
      class: 'preview',
      'data-preview-kind': p.kind,
      'data-preview-status': p.status,
      'aria-labelledby': titleId,
    },
    el('h4', { id: titleId, class: 'preview-title' }, title),
    ...parts,
  );
}
