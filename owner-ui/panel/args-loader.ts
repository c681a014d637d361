/**
 * Arguments the daemon sent only as a preview (an addition to contract 5; issue 19, owner frames): a View
 * whose arguments are over 16 KiB of JSON carries those small enough whole and the others by name, size and
 * start (`args_truncated`, `args_cut`, `args_hidden`; daemon/core/args-preview.ts). The card says so in
 * words and offers "Load all arguments"; that button, or opening any shortened value, asks the daemon for
 * the whole arguments (`{"type":"args","req_id","id"}`) and shows them with the same bounded renderer as
 * any arguments (arg-view.ts).
 *
 * Approve stays possible before they are loaded: the owner decides on `id` + `version`, and approving sends
 * the arguments the AI gave, whole. Contract 7 asks for "every argument (long values folded, none hidden)":
 * a value shown by its start and loaded when opened is folded, and every argument is named (or, past the
 * preview's budget, counted), so this is folding, not hiding — and the card says that approving sends all.
 *
 * Kept apart from app.ts, which only forwards the `args` frames and their refusals here (`setupArgsLoader`,
 * `receiveArgs`, `argsRefused`, `argsReconnected`).
 */
import type { ArgsMessage, ServerMessage, View } from '../../common/owner-messages.js';
import { el } from '../dom.js';
import { argsBlock, argsList, argView, keyView, paged } from './arg-view.js';

/** Items of the merged preview list shown per step, as argsList does. */
const PAGE_ITEMS = 50;
/** Characters of a cut value's start on its summary line (the frame carries up to 512). */
const START_CHARS = 160;

/** How the loader reaches the socket and the page (app.ts). */
export interface ArgsLoaderHooks {
  /** Sends a frame; false when not connected. */
  send(frame: object): boolean;
  /** Runs a change of the page through the click guard (a card that grows moves the ones below it). */
  change(fn: () => void): void;
}

let hooks: ArgsLoaderHooks = { send: () => false, change: (fn) => fn() };
/** Whole arguments loaded so far, by command id (a command's arguments never change). */
const loaded = new Map<string, Record<string, unknown>>();
/** Requests in flight: req_id → command id. */
const asking = new Map<string, string>();
let nextReq = 1;

/** Connects the loader to the panel's socket and click guard. */
export function setupArgsLoader(h: ArgsLoaderHooks): void {
  hooks = h;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** Every argument name the View knows of (the preview's kept and cut ones), and how many go unnamed. */
export function argNames(v: View): { names: string[]; unnamed: number } {
  const whole = loaded.get(v.id);
  if (whole !== undefined || v.args_truncated !== true)
    return { names: Object.keys(whole ?? v.args), unnamed: 0 };
  return {
    names: [...Object.keys(v.args), ...(v.args_cut ?? []).map((c) => c.name)],
    unnamed: v.args_hidden ?? 0,
  };
}

/** The places showing `id`'s arguments as a preview (a card, the Allow dialog). */
function previews(id: string): HTMLElement[] {
  return [...document.querySelectorAll<HTMLElement>('[data-args-for]')].filter(
    (n) => n.dataset.argsFor === id,
  );
}

/** Says something about the load on every preview of `id` (its status line). */
function status(id: string, text: string, busy: boolean): void {
  for (const node of previews(id)) {
    const line = node.querySelector('.args-status');
    if (line !== null) line.textContent = text;
    const button = node.querySelector<HTMLButtonElement>('button.args-load');
    if (button !== null) button.disabled = busy;
  }
}

/** Asks the daemon for `id`'s whole arguments (once at a time). */
function load(id: string): void {
  if (loaded.has(id) || [...asking.values()].includes(id)) return;
  const req_id = `a${nextReq++}`;
  if (!hooks.send({ type: 'args', req_id, id })) {
    status(id, 'Not connected: wait for the panel to reconnect, then try again.', false);
    return;
  }
  asking.set(req_id, id);
  status(id, 'Loading all arguments…', true);
}

/** The whole arguments arrived: every preview of that command is replaced by them. */
export function receiveArgs(m: ArgsMessage): void {
  if (asking.get(m.req_id) !== m.id) return;
  asking.delete(m.req_id);
  loaded.set(m.id, m.args);
  hooks.change(() => {
    for (const node of previews(m.id))
      node.replaceWith(wholeArgs(m.id, m.args, node.dataset.label ?? '', node.dataset.form === 'block'));
  });
}

/** A refusal of one of our requests (NotFound): said on the preview. True when the reply was ours. */
export function argsRefused(m: Extract<ServerMessage, { type: 'reply' }>): boolean {
  const id = m.req_id === null ? undefined : asking.get(m.req_id);
  if (id === undefined || m.req_id === null) return false;
  asking.delete(m.req_id);
  if (!m.ok) status(id, `Could not load them: ${m.error.code}: ${m.error.message}`, false);
  return true;
}

/** A new snapshot: requests sent on the old socket get no answer, so their buttons work again. */
export function argsReconnected(): void {
  for (const id of asking.values()) status(id, '', false);
  asking.clear();
}

/** The whole arguments, once loaded: the bounded renderer, and a line saying they are all there. */
function wholeArgs(id: string, args: Record<string, unknown>, label: string, block: boolean): HTMLElement {
  return el(
    'div',
    { class: 'args-loaded', 'data-args-loaded': id },
    el('p', { class: 'args-note' }, 'All arguments loaded: shown whole below.'),
    block ? argsBlock(args, label) : argsList(args, label),
  );
}

/** One shortened argument: its start, folded; opening it loads all the arguments. */
function cutView(v: View, c: NonNullable<View['args_cut']>[number]): HTMLElement {
  const summary = el(
    'summary',
    {},
    c.start.slice(0, START_CHARS),
    `… (${count(c.bytes)} bytes of JSON: open to load all arguments)`,
  );
  const details = el('details', { class: 'arg-fold arg-cut' }, summary);
  details.addEventListener('toggle', () => {
    if (details.open) load(v.id);
  });
  return details;
}

/** The preview as a list in the AI's order: kept arguments whole, cut ones by their start. */
function previewList(v: View, label: string): HTMLElement {
  const kept = Object.keys(v.args);
  const cut = [...(v.args_cut ?? [])].sort((a, b) => a.at - b.at);
  type Row = { key: string; cut?: (typeof cut)[number] };
  const rows: Row[] = [];
  let k = 0;
  for (const c of cut) {
    while (k < kept.length && rows.length < c.at) rows.push({ key: kept[k++]! });
    rows.push({ key: c.name, cut: c });
  }
  for (; k < kept.length; k++) rows.push({ key: kept[k]! });
  const list = el('dl', { class: 'arg-list', 'aria-label': label });
  const holder = el('div', { class: 'args' }, list);
  paged(holder, rows.length, PAGE_ITEMS, 'arguments', (from, to) => {
    for (const r of rows.slice(from, to)) {
      const name =
        r.cut?.name_chars === undefined ? r.key : `${r.key}… (${count(r.cut.name_chars)} characters)`;
      list.append(
        el('dt', {}, keyView(name)),
        el(
          'dd',
          { 'data-arg': r.key.length <= 64 && r.cut?.name_chars === undefined ? r.key : undefined },
          r.cut === undefined ? argView(v.args[r.key]) : cutView(v, r.cut),
        ),
      );
    }
  });
  if (v.args_hidden !== undefined)
    holder.append(
      el(
        'p',
        { class: 'args-note' },
        `… and ${count(v.args_hidden)} more arguments, not listed: load all to read them.`,
      ),
    );
  return holder;
}

/**
 * A command's arguments wherever the panel shows them (the card's upstream part, the Allow dialog): whole
 * when the View has them whole or they were loaded, else the preview with its note and "Load all
 * arguments". `block`: the Allow dialog's compact form (arg-view.ts argsBlock) once whole.
 */
export function argsSection(v: View, label: string, block = false): HTMLElement {
  const whole = loaded.get(v.id);
  if (whole !== undefined) return wholeArgs(v.id, whole, label, block);
  if (v.args_truncated !== true) return block ? argsBlock(v.args, label) : argsList(v.args, label);
  const shown = Object.keys(v.args).length;
  const started = v.args_cut?.length ?? 0;
  const parts = [`${count(shown)} shown whole`, `${count(started)} shown by their start`];
  if (v.args_hidden !== undefined) parts.push(`${count(v.args_hidden)} not listed`);
  const button = el('button', { type: 'button', class: 'args-load' }, 'Load all arguments');
  button.addEventListener('click', () => load(v.id));
  return el(
    'div',
    {
      class: 'args-section',
      'data-args-for': v.id,
      'data-label': label,
      'data-form': block ? 'block' : 'list',
    },
    el(
      'div',
      { class: 'args-shortened', role: 'note' },
      el('strong', {}, 'Arguments shortened'),
      ` — ${count(v.args_bytes ?? 0)} bytes of JSON in all (${parts.join(', ')}). `,
      'Approving sends them all, exactly as the AI gave them: load them to read every value first.',
      el('div', { class: 'args-actions' }, button, el('span', { class: 'args-status', role: 'status' })),
    ),
    previewList(v, label),
  );
}
