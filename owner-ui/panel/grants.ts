/**
 * The grants area, "Allowed for a while" (contracts.md 5 (v2), 8): every live grant from `snapshot.grants`,
 * kept current by `grant_upsert` (a grant that is no longer `live` leaves the list) — command, client (`*`
 * is "any client"), arguments (pretty JSON, or "any arguments"), time left, uses left, who made it, the node
 * whose commands it approves (contract 16 v4), note —
 * and a real `Revoke …` button on each owner grant. Config grants are edited in the config file
 * (`NotRevocable`), so they get words instead of a button.
 *
 * The same book answers cards approved by a grant ("allowed by grant g_… (owner, 12 min left)"). Rows are
 * oldest first, so a new grant is appended and moves no row above it. Every text here is set as text
 * (dom.ts): a grant's args and note came from an AI's request or an owner's typing.
 */
import type { Grant } from '../../common/owner-messages.js';
import { el } from '../dom.js';
import { argsBlock } from './arg-view.js';
import { place } from './placement.js';

/**
 * `12 min left`, `3 h 5 min left`, `2 days 4 h left`: minutes are as fine as a grant's time needs. Never
 * more than the grant's whole time (`created` to `expires`): the tab's estimate of the daemon's clock errs
 * by however late it read `hello`, and a fresh 15 min grant must not say 16 (as card.ts's timeLeft).
 */
export function grantTimeWords(expires: string | undefined, now: number, created?: string): string {
  if (expires === undefined) return 'no time limit';
  const whole = created === undefined ? Number.NaN : Date.parse(expires) - Date.parse(created);
  const left = Date.parse(expires) - now;
  const ms = Number.isFinite(whole) && whole > 0 ? Math.min(left, whole) : left;
  if (!Number.isFinite(ms)) return `until ${expires}`;
  if (ms <= 0) return 'ending now';
  const min = Math.ceil(ms / 60_000);
  if (min < 60) return `${min} min left`;
  const h = Math.floor(min / 60);
  const m = min % 60;
  if (h < 24) return m === 0 ? `${h} h left` : `${h} h ${m} min left`;
  const days = Math.floor(h / 24);
  const hh = h % 24;
  const dayWords = days === 1 ? '1 day' : `${days} days`;
  return hh === 0 ? `${dayWords} left` : `${dayWords} ${hh} h left`;
}

export function usesWords(uses: number | undefined): string {
  if (uses === undefined) return 'unlimited uses';
  return uses === 1 ? '1 use left' : `${uses} uses left`;
}

export function clientWords(client: string): string {
  return client === '*' ? 'any client' : `client ${client}`;
}

/**
 * Contract 16 (v4): the node whose commands a grant approves — always shown, since one command name may run
 * different programs on different nodes (`*`: every node's, on purpose). A grant stored before nodes has none.
 */
export function nodeWords(node: string): string {
  return node === '*' ? 'on every node' : `on node ${node}`;
}

function whoWords(g: Grant): string {
  return g.source === 'config' ? 'from the config file' : `by ${g.created_by}`;
}

export interface GrantBoardOptions {
  list: HTMLElement;
  empty: HTMLElement;
  count: HTMLElement;
  /** The daemon's clock (the tab's clock plus the skew hello measured). */
  now: () => number;
}

export class GrantBoard {
  readonly #o: GrantBoardOptions;
  /** Live grants by id. */
  readonly #live = new Map<string, Grant>();
  readonly #rows = new Map<string, { node: HTMLElement; json: string; busy: boolean }>();
  /** Grants whose revoke is in flight: their button stays disabled until the reply. */
  readonly #revoking = new Set<string>();
  /** False until a snapshot arrived (and again once logged out): "nothing is allowed" would be a guess. */
  #known = false;

  constructor(o: GrantBoardOptions) {
    this.#o = o;
  }

  /** The snapshot's grants replace everything (a reconnecting tab resyncs). */
  reset(grants: Grant[]): void {
    this.#known = true;
    this.#live.clear();
    // A revoke sent on the old connection gets no reply; the snapshot says whether it happened.
    this.#revoking.clear();
    for (const g of grants) if (g.state === 'live') this.#live.set(g.id, g);
  }

  /** A grant was created, used or ended: a grant no longer live leaves the list. */
  upsert(g: Grant): void {
    if (g.state === 'live') this.#live.set(g.id, g);
    else {
      this.#live.delete(g.id);
      this.#revoking.delete(g.id);
    }
  }

  get(id: string): Grant | undefined {
    return this.#live.get(id);
  }

  setRevoking(id: string, on: boolean): void {
    if (on) this.#revoking.add(id);
    else this.#revoking.delete(id);
  }

  /** Words for a card approved by grant `id`: `(owner, 12 min left)`, or `(now ended)`. */
  describe(id: string): string {
    const g = this.#live.get(id);
    if (g === undefined) return '(now ended)';
    if (g.source === 'config') return '(from the config file)';
    return `(${g.created_by}, ${grantTimeWords(g.expires_at, this.#o.now(), g.created_at)})`;
  }

  /** Brings the list in line with the book: changed rows are rebuilt, focus stays on its grant. */
  render(): void {
    const { list, empty, count } = this.#o;
    const grants = [...this.#live.values()].sort((a, b) =>
      a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1,
    );
    const focused = document.activeElement?.closest<HTMLElement>('[data-grant-id]');
    const focusedId = focused && list.contains(focused) ? focused.dataset.grantId : undefined;
    const focusedAt = focused ? [...list.children].indexOf(focused) : -1;
    const nodes = grants.map((g) => this.#row(g));
    for (const id of this.#rows.keys()) if (!this.#live.has(id)) this.#rows.delete(id);
    place(list, nodes);
    if (focusedId !== undefined) this.#keepFocus(focusedId, focusedAt);
    empty.hidden = grants.length > 0;
    if (empty.dataset.known !== String(this.#known)) {
      empty.dataset.known = String(this.#known);
      empty.replaceChildren(...emptyWords(this.#known));
    }
    count.textContent =
      grants.length === 0 ? '' : grants.length === 1 ? '1 grant' : `${grants.length} grants`;
  }

  /** Rewrites the time left where its words changed (about once a minute per grant). */
  tick(): void {
    const now = this.#o.now();
    for (const span of this.#o.list.querySelectorAll<HTMLElement>('.grant-left')) {
      const words = grantTimeWords(span.dataset.expires, now, span.dataset.created);
      if (span.textContent !== words) span.textContent = words;
    }
  }

  /** Rewrites every card's "allowed by grant …" words that changed (card.ts puts them in `.grant-ref`). */
  refreshRefs(): void {
    for (const span of document.querySelectorAll<HTMLElement>('.grant-ref')) {
      const words = this.describe(span.dataset.grantId ?? '');
      if (span.textContent !== words) span.textContent = words;
    }
  }

  /** Logged out: nothing on screen may look current. */
  clear(): void {
    this.#known = false;
    this.#live.clear();
    this.#revoking.clear();
    this.render();
  }

  #row(g: Grant): HTMLElement {
    const json = JSON.stringify(g);
    const busy = this.#revoking.has(g.id);
    const existing = this.#rows.get(g.id);
    if (existing !== undefined && existing.json === json && existing.busy === busy) return existing.node;
    const node = buildRow(g, busy, this.#o.now());
    existing?.node.replaceWith(node);
    this.#rows.set(g.id, { node, json, busy });
    return node;
  }

  /** Focus goes back to the same grant's row (rebuilt), or to the row that took its place. */
  #keepFocus(id: string, at: number): void {
    const { list } = this.#o;
    if (list.contains(document.activeElement)) return;
    const same = this.#rows.get(id)?.node;
    const target = same ?? (list.children[Math.min(at, list.children.length - 1)] as HTMLElement | undefined);
    const button = target?.querySelector<HTMLButtonElement>('button.revoke:enabled');
    if (button) button.focus({ preventScroll: true });
    else if (target) target.focus({ preventScroll: true });
    else this.#o.list.closest<HTMLElement>('section')?.focus({ preventScroll: true });
  }
}

function emptyWords(known: boolean): Array<Node | string> {
  if (!known) return ['Shown once the panel is live.'];
  return [
    'Nothing is allowed without asking: every request waits for you.',
    el(
      'span',
      { class: 'how' },
      'Use ',
      el('strong', {}, 'Allow…'),
      ' on a request to let the same ones through for a while.',
    ),
  ];
}

function buildRow(g: Grant, busy: boolean, now: number): HTMLElement {
  const titleId = `grant-title-${g.id}`;
  const args =
    g.when !== undefined
      ? // Contract 11: a grant for the requests its expression is true for.
        el('p', { class: 'grant-args when' }, 'requests where ', el('code', {}, g.when))
      : g.args === undefined
        ? el('p', { class: 'grant-args any' }, 'any arguments')
        : // Bounded however large the arguments (issue 19): folded and opened level by level.
          el('div', { class: 'grant-args' }, argsBlock(g.args, 'Only these exact arguments'));
  const action =
    g.source === 'config'
      ? el('p', { class: 'grant-fixed' }, 'Edit the config file to change or remove it.')
      : el(
          'button',
          {
            type: 'button',
            class: 'revoke',
            'data-revoke': g.id,
            'aria-label': `Revoke grant for ${g.command} (${clientWords(g.client)}, ${g.id})`,
            disabled: busy,
          },
          busy ? 'Revoking…' : 'Revoke',
        );
  return el(
    'li',
    {
      class: `grant source-${g.source}`,
      'data-grant-id': g.id,
      'data-source': g.source,
      tabindex: -1,
      'aria-labelledby': titleId,
    },
    el(
      'div',
      { class: 'grant-head' },
      el(
        'h3',
        { id: titleId },
        el('span', { class: 'cmd' }, g.command),
        ' ',
        el('span', { class: 'grant-client' }, clientWords(g.client)),
      ),
      action,
    ),
    args,
    el(
      'p',
      { class: 'grant-facts' },
      el(
        'span',
        { class: 'grant-left', 'data-expires': g.expires_at, 'data-created': g.created_at },
        grantTimeWords(g.expires_at, now, g.created_at),
      ),
      ' · ',
      el('span', { class: 'grant-uses' }, usesWords(g.uses_left)),
      ' · ',
      el('span', { class: 'grant-who' }, whoWords(g)),
      ...(g.node === undefined ? [] : [' · ', el('span', { class: 'grant-node' }, nodeWords(g.node))]),
    ),
    g.note === undefined ? null : el('p', { class: 'grant-note' }, 'Note: ', g.note),
    el('p', { class: 'grant-id' }, g.id),
  );
}
