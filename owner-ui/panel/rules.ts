/**
 * The Rules area (contract 18): every rule that decides a request before the owners are asked — the
 * config's (read-only: "Edit the config file") first, then the owners' in their order, each with its
 * expression, decision, note, who made it and when, and how many requests it decided. An owner's rule has
 * `Disable` (or `Enable`), `Edit` (expression, decision, note — tested against the past with `policy_test`
 * before `Save` is offered) and `Remove …` (asks first). It also saves the Allow… dialog's "Always"
 * (allow.ts): the card's approval, then the rule.
 *
 * The list is read with `rules` when the panel goes live and after each change made here (a change made on
 * another panel shows at the next one). Every text is set as text (dom.ts): an expression may quote what an
 * AI sent.
 */
import type { RuleInfo, ServerMessage } from '../../common/owner-messages.js';
import { el } from '../dom.js';
import { testWords } from './allow-paths.js';

type Frame = Record<string, unknown>;
type Reply = Extract<ServerMessage, { type: 'reply' }>;

interface Editing {
  id: string;
  /** The test asked for the form's current values, and the one whose answer is shown. */
  probe?: string;
  answered?: string;
}

function byId(id: string): HTMLElement {
  return document.getElementById(id)!;
}

export class RulesArea {
  readonly #o: { send: (frame: Frame) => boolean; reqId: () => string; toast: (text: string) => void };
  readonly #list = byId('rules-list');
  readonly #empty = byId('rules-empty');
  readonly #count = byId('rules-count');
  #rules: RuleInfo[] = [];
  #known = false;
  /** When the list was last asked for (tab clock). */
  #readAt = 0;
  /** Our requests in flight: what each was for (`list`, or the rule id it changes). */
  readonly #mine = new Map<string, { what: 'list' | 'change'; id?: string }>();
  #editing: Editing | undefined;
  #confirming: string | undefined;

  constructor(
    conn: { send(frame: Frame): boolean },
    reqId: () => string,
    header: { toast(text: string): void },
  ) {
    this.#o = { send: (f) => conn.send(f), reqId, toast: (t) => header.toast(t) };
    this.#list.addEventListener('click', (e) => this.#click(e));
    this.#list.addEventListener('input', () => this.#edited());
    // Counts change as requests are decided anywhere: read again when the owner comes to the area.
    const section = this.#list.closest('section');
    for (const ev of ['pointerenter', 'focusin'])
      section?.addEventListener(ev, () => {
        if (this.#known && Date.now() - this.#readAt > 2000 && this.#editing === undefined) this.refresh();
      });
  }

  /** Reads every rule again (the panel went live, or a change was made here). */
  refresh(): void {
    const req_id = this.#o.reqId();
    this.#readAt = Date.now();
    if (this.#o.send({ type: 'rules', req_id })) this.#mine.set(req_id, { what: 'list' });
  }

  /** `rules`, `rule_add`, `rule_update`, `rule_remove`: the list, or a change made, then read again. */
  receive(m: Extract<ServerMessage, { type: 'rules' | 'rule_add' | 'rule_update' | 'rule_remove' }>): void {
    this.#mine.delete(m.req_id);
    if (m.type === 'rules') {
      this.#known = true;
      this.#rules = m.rules;
      this.render();
      return;
    }
    if (m.type === 'rule_add')
      this.#o.toast(`Rule ${m.rule.id} saved: it decides from now on, on every node.`);
    this.refresh();
  }

  /** A refusal of one of our requests (true when it was ours): said on the rule's row, or as a toast. */
  reply(m: Reply): boolean {
    if (m.req_id === null) return false;
    const mine = this.#mine.get(m.req_id);
    const test = this.#editing?.probe === m.req_id;
    if (mine === undefined && !test) return false;
    this.#mine.delete(m.req_id);
    if (m.ok) return true;
    const words = `${m.error.code}: ${m.error.message}`;
    const line = this.#list.querySelector('.rule-test');
    if (test && line !== null) line.textContent = words;
    else this.#o.toast(mine?.id === undefined ? words : `Rule ${mine.id}: ${words}`);
    if (!test) this.refresh();
    return true;
  }

  /** A `policy_test` answer for the rule being edited: shown, and Save offered for what was tested. */
  tested(m: { req_id: string; of: number; matched: number; by_state: Record<string, number> }): void {
    const e = this.#editing;
    if (e === undefined || e.probe !== m.req_id) return;
    e.answered = m.req_id;
    const line = this.#list.querySelector('.rule-test');
    if (line !== null) line.textContent = testWords(m).replace('allowed', 'matched');
    const save = this.#list.querySelector<HTMLButtonElement>('button[data-action=save]');
    if (save !== null) save.disabled = false;
  }

  /** Contract 18 "Always": `approve` (the card, as the dialog's owner chose), then the owner's allow rule. */
  saveAlways(approve: () => void, when: string, note?: string): void {
    approve();
    const req_id = this.#o.reqId();
    const rule: Frame = { when, decision: 'allow', ...(note === undefined ? {} : { note }) };
    if (this.#o.send({ type: 'rule_add', req_id, rule })) this.#mine.set(req_id, { what: 'change' });
    else this.#o.toast('Not connected: the rule was not saved. Save it again once the panel reconnects.');
  }

  /** Logged out: nothing on screen may look current. */
  clear(): void {
    this.#known = false;
    this.#rules = [];
    this.#editing = undefined;
    this.#confirming = undefined;
    this.render();
  }

  render(): void {
    const focused = document.activeElement as HTMLElement | null;
    const at =
      focused && this.#list.contains(focused) ? focused.closest<HTMLElement>('[data-rule-id]') : null;
    const again = at === null ? undefined : [at.dataset.ruleId, focused?.dataset.action];
    this.#list.replaceChildren(...this.#rules.map((r) => this.#row(r)));
    this.#empty.hidden = this.#rules.length > 0;
    this.#empty.textContent = this.#known
      ? 'No rule: every request goes to grants, then to you. Use Allow… → Always on a request to add one.'
      : 'Shown once the panel is live.';
    const owners = this.#rules.filter((r) => r.source === 'owner').length;
    this.#count.textContent = this.#rules.length === 0 ? '' : `${this.#rules.length} (${owners} yours)`;
    if (again !== undefined) {
      const row = this.#list.querySelector<HTMLElement>(`[data-rule-id="${again[0]}"]`);
      const target = row?.querySelector<HTMLElement>(`[data-action="${again[1]}"]`) ?? row;
      target?.focus({ preventScroll: true });
    }
  }

  #row(r: RuleInfo): HTMLElement {
    const titleId = `rule-title-${r.id}`;
    const at = r.created_at === undefined ? '?' : new Date(r.created_at).toLocaleString();
    const who = r.source === 'config' ? 'from the config file' : `by ${r.created_by ?? '?'} at ${at}`;
    return el(
      'li',
      {
        class: `grant rule source-${r.source}${r.enabled ? '' : ' disabled'}`,
        'data-rule-id': r.id,
        tabindex: -1,
        'aria-labelledby': titleId,
      },
      el(
        'div',
        { class: 'grant-head' },
        el(
          'h3',
          { id: titleId },
          el('span', { class: 'cmd' }, r.id),
          ' ',
          el('span', { class: `rule-decision decision-${r.decision}` }, r.decision),
          r.enabled ? null : el('span', { class: 'rule-off' }, ' disabled'),
        ),
        r.source === 'config' ? null : this.#buttons(r),
      ),
      el('p', { class: 'grant-args when' }, 'when ', el('code', {}, r.when)),
      el(
        'p',
        { class: 'grant-facts' },
        el(
          'span',
          { class: 'rule-decided' },
          r.decided === 1 ? 'decided 1 request' : `decided ${r.decided} requests`,
        ),
        r.approvals === undefined ? null : ` · ${r.approvals} owners must approve`,
        ' · ',
        el('span', { class: 'grant-who' }, who),
      ),
      r.note === undefined ? null : el('p', { class: 'grant-note' }, 'Note: ', r.note),
      r.source === 'config' ? el('p', { class: 'grant-fixed' }, 'Edit the config file to change it.') : null,
      this.#confirming === r.id ? this.#confirm(r) : null,
      this.#editing?.id === r.id ? this.#form(r) : null,
    );
  }

  #buttons(r: RuleInfo): HTMLElement {
    const b = (action: string, words: string, label: string) =>
      el(
        'button',
        { type: 'button', class: 'quiet', 'data-action': action, 'aria-label': `${label} ${r.id}` },
        words,
      );
    return el(
      'div',
      { class: 'rule-actions' },
      r.enabled ? b('disable', 'Disable', 'Disable rule') : b('enable', 'Enable', 'Enable rule'),
      b('edit', 'Edit', 'Edit rule'),
      el(
        'button',
        { type: 'button', class: 'revoke', 'data-action': 'remove', 'aria-label': `Remove rule ${r.id}` },
        'Remove …',
      ),
    );
  }

  #confirm(r: RuleInfo): HTMLElement {
    return el(
      'div',
      { class: 'rule-confirm', role: 'group', 'aria-label': `Remove rule ${r.id}?` },
      el('p', {}, `Remove rule ${r.id}? It stops deciding at once, on every node.`),
      el('button', { type: 'button', class: 'revoke', 'data-action': 'remove-yes' }, 'Remove'),
      el('button', { type: 'button', class: 'quiet', 'data-action': 'remove-no' }, 'Keep'),
    );
  }

  #form(r: RuleInfo): HTMLElement {
    const decision = el('select', { name: 'decision', 'aria-label': 'Decision' });
    for (const d of ['allow', 'deny', 'ask'])
      decision.append(el('option', { value: d, selected: d === r.decision }, d));
    return el(
      'div',
      { class: 'rule-edit' },
      el('label', {}, 'Expression', el('textarea', { name: 'when', rows: 3, maxlength: 4096 }, r.when)),
      el('label', {}, 'Decision ', decision),
      el(
        'label',
        {},
        'Note',
        el('input', { type: 'text', name: 'note', maxlength: 500, value: r.note ?? '' }),
      ),
      el(
        'p',
        { class: 'rule-test allow-hint', 'aria-live': 'polite' },
        'Testing it against your past requests…',
      ),
      el('button', { type: 'button', class: 'quiet', 'data-action': 'test' }, 'Test'),
      el('button', { type: 'button', class: 'approve', 'data-action': 'save', disabled: true }, 'Save'),
      el('button', { type: 'button', class: 'quiet', 'data-action': 'cancel' }, 'Cancel'),
    );
  }

  /** The edit form's values. */
  #values(): { when: string; decision: string; note: string } {
    const form = this.#list.querySelector('.rule-edit')!;
    const get = (n: string) => form.querySelector<HTMLInputElement>(`[name=${n}]`)!.value;
    return { when: get('when'), decision: get('decision'), note: get('note').trim() };
  }

  /** The expression changed: what was tested no longer is; Save waits for a new test. */
  #edited(): void {
    const e = this.#editing;
    if (e === undefined) return;
    e.probe = undefined;
    e.answered = undefined;
    const save = this.#list.querySelector<HTMLButtonElement>('button[data-action=save]');
    if (save !== null) save.disabled = true;
    const line = this.#list.querySelector('.rule-test');
    if (line !== null) line.textContent = 'Changed: Test it before saving.';
  }

  #test(): void {
    const e = this.#editing;
    if (e === undefined) return;
    const { when, decision } = this.#values();
    const req_id = this.#o.reqId();
    e.probe = this.#o.send({ type: 'policy_test', req_id, rule: { when, decision } }) ? req_id : undefined;
    e.answered = undefined;
    const line = this.#list.querySelector('.rule-test');
    if (line !== null)
      line.textContent = e.probe === undefined ? 'Not connected.' : 'Testing it against your past requests…';
  }

  #change(frame: Frame, id: string): void {
    const req_id = this.#o.reqId();
    if (this.#o.send({ ...frame, req_id })) this.#mine.set(req_id, { what: 'change', id });
    else this.#o.toast('Not connected: wait for the panel to reconnect, then try again.');
  }

  #click(ev: Event): void {
    const button = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-action]');
    const id = button?.closest<HTMLElement>('[data-rule-id]')?.dataset.ruleId;
    if (button === null || button === undefined || id === undefined) return;
    const action = button.dataset.action;
    if (action === 'disable' || action === 'enable')
      this.#change({ type: 'rule_update', id, enabled: action === 'enable' }, id);
    else if (action === 'remove') this.#confirming = id;
    else if (action === 'remove-no') this.#confirming = undefined;
    else if (action === 'remove-yes') {
      this.#confirming = undefined;
      this.#change({ type: 'rule_remove', id }, id);
    } else if (action === 'edit') this.#editing = { id };
    else if (action === 'cancel') this.#editing = undefined;
    else if (action === 'test') {
      this.#test();
      return;
    } else if (action === 'save') {
      const e = this.#editing;
      if (e?.answered === undefined || e.answered !== e.probe) return;
      const { when, decision, note } = this.#values();
      this.#editing = undefined;
      this.#change({ type: 'rule_update', id, when, decision, note }, id);
    }
    this.render();
    if (action === 'edit') this.#test();
  }
}
