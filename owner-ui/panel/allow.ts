/**
 * The Allow… dialog (contracts.md 5 (v2), 8): "Approve and allow the same…" asks for the scope (these exact
 * arguments, or any — said in words for this command), the time (15 min, 1 h, 8 h, 1 day), an optional use
 * count (1..10000, empty = as often as asked within the time) and an optional note, then approves the card
 * and creates the grant in one `approve` frame.
 *
 * A real modal `<dialog>`: it sits in the top layer, centred and sized to the screen, so no card can slide
 * under it while the owner chooses (contract 5 (v2)), and the page behind it is inert. Keyboard: focus starts
 * on the scope, the arrow keys choose within a group, Tab moves between groups, Enter anywhere submits,
 * Escape cancels; whoever opened it says where focus goes back.
 */
import type { View } from '../../common/owner-messages.js';
import { el } from '../dom.js';
import {
  allowWhat,
  grantLine,
  NOTE_MAX,
  nodeChoice,
  scopeChoice,
  timeChoice,
  USES_MAX,
  usesAndNote,
} from './allow-parts.js';
import { pathScopes, testWords } from './allow-paths.js';
import { type AlwaysScope, alwaysExpression } from './always.js';
import { kindCard } from './kinds.js';

export { anyWords } from './allow-parts.js';

/** Contract 18: "Always" — approve this request, and save an owner's `allow` rule with this expression. */
export interface AlwaysChoice {
  rule: string;
  note?: string;
}

/** What `approve` carries as `grant` (daemon/owner-protocol/grants.ts approveGrant): same_args, or when (contract 11). */
export interface AllowChoice {
  same_args?: boolean;
  when?: string;
  ttl_s: number;
  uses?: number;
  note?: string;
  /** Contract 16 (v4): `*` when the owner chose every node; absent, the daemon takes the card's node. */
  node?: string;
}

/** True when the daemon may grant this card's command: its kind says (owner-ui/kinds.ts; never a cue). */
export function grantable(v: View): boolean {
  // A command needing several owners is never granted (contract 9: NotGrantable), so it gets no Allow….
  if (v.approvals_needed !== undefined) return false;
  // Contract 13.3: a passkey-required command is approved by an owner's hand each time: never granted.
  if (v.passkey_required === true) return false;
  return v.state === 'awaiting_review' && kindCard(v.tool)?.anyWords !== undefined;
}

/** The grant a scope makes, as `policy_test` takes it (contract 11). */
export interface GrantProbe {
  command: string;
  client: string;
  args?: Record<string, unknown>;
  when?: string;
  /** Contract 16 (v4): the node the grant would be for (absent when the panel shows one node only). */
  node?: string;
}

interface Session {
  id: string;
  /** The `policy_test` asked for the scope now chosen; a later answer for an earlier one is dropped. */
  probe?: string;
  /** The `policy_test` whose answer is shown (contract 18: a rule is saved only after its test is seen). */
  answered?: string;
  submit: (choice: AllowChoice | AlwaysChoice) => void;
  afterClose: (submitted: boolean) => void;
}

export class AllowDialog {
  readonly #dialog: HTMLDialogElement;
  /** The card the dialog is open for and what to do when it closes. */
  #session: Session | undefined;
  /** Sends a `policy_test` for a grant; returns its req_id, or undefined when it could not be sent. */
  readonly #test: (grant: GrantProbe) => string | undefined;

  constructor(test: (grant: GrantProbe) => string | undefined = () => undefined) {
    this.#test = test;
    this.#dialog = el('dialog', { id: 'allow-dialog', class: 'allow', 'aria-labelledby': 'allow-title' });
    document.body.append(this.#dialog);
    // Escape: close it ourselves, in this task, so focus goes back before anything else happens.
    this.#dialog.addEventListener('cancel', (e) => {
      e.preventDefault();
      this.#finish(undefined);
    });
  }

  /** The card it is open for, if it is open. */
  get openFor(): string | undefined {
    return this.#session?.id;
  }

  /**
   * Opens the dialog for card `v`. `submit` gets the owner's choice; `afterClose(submitted)` runs once it
   * closed either way (to put focus back).
   */
  open(
    v: View,
    submit: (choice: AllowChoice | AlwaysChoice) => void,
    afterClose: (submitted: boolean) => void,
  ): void {
    this.#finish(undefined);
    this.#session = { id: v.id, submit, afterClose };
    const form = this.#form(v);
    this.#dialog.replaceChildren(form);
    this.#dialog.showModal();
    form.querySelector<HTMLInputElement>('input[name=scope]:checked')?.focus();
  }

  /** Contract 11: the `policy_test` answer for the scope shown, in words under the expression. */
  tested(m: { req_id: string; of: number; matched: number; by_state: Record<string, number> }): void {
    if (this.#session?.probe !== m.req_id) return;
    this.#session.answered = m.req_id;
    const line = this.#dialog.querySelector('#allow-test');
    if (line !== null) line.textContent = testWords(m);
  }

  /** Closes it without approving (the card was decided elsewhere meanwhile). */
  cancel(): void {
    this.#finish(undefined);
  }

  /** Closes the dialog; with a choice, sends it first; then focus goes where the opener says. */
  #finish(choice: AllowChoice | AlwaysChoice | undefined): void {
    const s = this.#session;
    this.#session = undefined;
    if (this.#dialog.open) this.#dialog.close();
    if (s === undefined) return;
    if (choice !== undefined) s.submit(choice);
    s.afterClose(choice !== undefined);
  }

  /** The dialog's form for card `v`, its parts from allow-parts.ts, wired to this dialog. */
  #form(v: View): HTMLFormElement {
    const { fields, uses, note } = usesAndNote();
    const error = el('p', { class: 'allow-error', role: 'alert' });
    const form = el(
      'form',
      { method: 'dialog', class: 'allow-form', novalidate: true },
      el('h2', { id: 'allow-title' }, 'Approve and allow the same again'),
      allowWhat(v),
      scopeChoice(v),
      nodeChoice(v),
      grantLine(),
      timeChoice(),
      ...fields,
      error,
      el(
        'div',
        { class: 'allow-actions' },
        el('button', { type: 'button', class: 'quiet', value: 'cancel' }, 'Cancel'),
        el('button', { type: 'submit', class: 'approve' }, 'Approve and allow'),
      ),
    );
    this.#wire(form, v, () => {
      const choice = this.#read(form, v, uses, note);
      if (typeof choice === 'string') error.textContent = choice;
      else this.#finish(choice);
    });
    return form;
  }

  /** The form's behaviour: Cancel, the grant shown following the choice, Enter on a radio, and submit. */
  #wire(form: HTMLFormElement, v: View, submit: () => void): void {
    form.querySelector('button[value=cancel]')?.addEventListener('click', () => this.#finish(undefined));
    // Contract 11: the grant's expression and its test against the past follow the scope chosen.
    form.addEventListener('change', (e) => {
      const name = (e.target as HTMLInputElement).name;
      if (name === 'scope' || name === 'node' || name === 'ttl') this.#show(form, v);
    });
    queueMicrotask(() => this.#show(form, v));
    // Enter on a radio submits too (browsers submit implicitly only from text fields).
    form.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter' || e.isComposing) return;
      const t = e.target as HTMLElement;
      if (t instanceof HTMLInputElement && t.type === 'radio') {
        e.preventDefault();
        form.requestSubmit();
      }
    });
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      submit();
    });
  }

  /** The chosen scope as a grant: `args` (these exact ones), nothing (any), or `when` (paths under). */
  #scope(form: HTMLFormElement, v: View): { choice: Pick<AllowChoice, 'same_args' | 'when'>; shown: string } {
    const scope = form.querySelector<HTMLInputElement>('input[name=scope]:checked')?.value ?? 'exact';
    if (scope === 'any') return { choice: { same_args: false }, shown: `${v.command}, any arguments` };
    if (scope.startsWith('under-')) {
      const s = pathScopes(v)[Number(scope.slice('under-'.length))];
      if (s !== undefined) return { choice: { when: s.when }, shown: s.when };
    }
    return { choice: { same_args: true }, shown: `${v.command} with exactly ${JSON.stringify(v.args)}` };
  }

  /** Shows the chosen scope's grant and asks the daemon what it would have allowed. */
  #show(form: HTMLFormElement, v: View): void {
    const s = this.#session;
    if (s === undefined || s.id !== v.id) return;
    const { choice, shown } = this.#scope(form, v);
    const expression = form.querySelector('#allow-expression');
    const line = form.querySelector('#allow-test');
    if (expression !== null) expression.textContent = shown;
    s.answered = undefined;
    if (this.#always(form)) {
      this.#showRule(form, v);
      return;
    }
    form.querySelector('.allow-label')!.textContent = 'The grant: ';
    form.querySelector<HTMLInputElement>('#allow-uses')!.disabled = false;
    const probe: GrantProbe = { command: v.command, client: v.client };
    const node = form.querySelector<HTMLInputElement>('input[name=node]:checked')?.value;
    if (node !== undefined && v.node !== undefined) probe.node = node === 'all' ? '*' : v.node;
    if (choice.when !== undefined) probe.when = choice.when;
    else if (choice.same_args === true) {
      // A preview is not the arguments: their test would be wrong, so none is asked.
      if (v.args_truncated === true) {
        s.probe = undefined;
        if (line !== null) line.textContent = '';
        return;
      }
      probe.args = v.args;
    }
    s.probe = this.#test(probe);
    if (line !== null)
      line.textContent = s.probe === undefined ? '' : 'Testing it against your past requests…';
  }

  #always(form: HTMLFormElement): boolean {
    return form.querySelector<HTMLInputElement>('input[name=ttl]:checked')?.value === 'always';
  }

  /** The chosen scope as an owner's rule (contract 18), or why it cannot be one. */
  #rule(form: HTMLFormElement, v: View): { when: string } | { why: string } {
    const { choice } = this.#scope(form, v);
    const scope: AlwaysScope =
      choice.when !== undefined
        ? { kind: 'when', when: choice.when }
        : choice.same_args === false
          ? { kind: 'any' }
          : { kind: 'exact', args: v.args, shortened: v.args_truncated === true };
    return alwaysExpression(v.command, v.client, scope);
  }

  /** "Always": the rule's expression, and its test against the past (the same command's requests). */
  #showRule(form: HTMLFormElement, v: View): void {
    const s = this.#session!;
    const rule = this.#rule(form, v);
    form.querySelector('.allow-label')!.textContent = 'The rule (allow): ';
    form.querySelector<HTMLInputElement>('#allow-uses')!.disabled = true;
    const expression = form.querySelector('#allow-expression')!;
    const line = form.querySelector('#allow-test')!;
    if ('why' in rule) {
      s.probe = undefined;
      expression.textContent = '';
      line.textContent = rule.why;
      return;
    }
    expression.textContent = rule.when;
    // The rule names the command and client: tested as a grant of them, so a flood of others cannot hide it.
    s.probe = this.#test({ command: v.command, client: v.client, when: rule.when });
    line.textContent = s.probe === undefined ? '' : 'Testing it against your past requests…';
  }

  /** The owner's choice, or what is wrong with it (naming the field and what it accepts). */
  #read(
    form: HTMLFormElement,
    v: View,
    uses: HTMLInputElement,
    note: HTMLInputElement,
  ): AllowChoice | AlwaysChoice | string {
    if (this.#always(form)) {
      const rule = this.#rule(form, v);
      if ('why' in rule) return rule.why;
      const s = this.#session;
      if (s?.probe === undefined || s.answered !== s.probe)
        return 'Wait for the test against your past requests, then save the rule.';
      const text = note.value.trim();
      return text === '' ? { rule: rule.when } : { rule: rule.when, note: text.slice(0, NOTE_MAX) };
    }
    const ttl = Number(form.querySelector<HTMLInputElement>('input[name=ttl]:checked')?.value);
    const choice: AllowChoice = { ...this.#scope(form, v).choice, ttl_s: ttl };
    const raw = uses.value.trim();
    // A number input holding text that is not a number reports "" with badInput set.
    if (uses.validity.badInput)
      return `How many times must be a whole number from 1 to ${USES_MAX}, or empty.`;
    if (raw !== '') {
      const n = Number(raw);
      if (!Number.isInteger(n) || n < 1 || n > USES_MAX)
        return `How many times must be a whole number from 1 to ${USES_MAX}, or empty, got ${raw}.`;
      choice.uses = n;
    }
    const text = note.value.trim();
    if (text !== '') choice.note = text.slice(0, NOTE_MAX);
    if (form.querySelector<HTMLInputElement>('input[name=node]:checked')?.value === 'all') choice.node = '*';
    return choice;
  }
}
