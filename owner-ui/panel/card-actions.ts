/**
 * What the owner's decision buttons and their shortcuts do on a card (contracts 5, 9, 11, 13.3): Approve,
 * Allow…, Deny and Reconcile, each refused while the card is inert (click-safety.ts), and a passkey-required
 * approval in one gesture — the daemon's challenge over exactly this approval, the owner's authenticator,
 * then `approve` with its assertion.
 */
import type { ServerMessage, View } from '../../common/owner-messages.js';
import type { ClickGuard } from '../click-safety.js';
import { type RequestOptions, webauthn, webauthnTrouble } from '../webauthn.js';
import type { CardList } from './card-list.js';
import { alreadyMineWords, myApproval } from './quorum.js';

export interface CardActionDeps {
  views: ReadonlyMap<string, View>;
  /** The frames in flight, by req_id: the card each is for and what it asked. */
  requests: Map<string, { id: string; action: string }>;
  conn: { send(frame: Record<string, unknown>): boolean };
  cards: CardList;
  guard: ClickGuard;
  /** The signed-in owner (a quorum card they approved waits for the others: contract 9). */
  me: () => string | undefined;
  /** A fresh req_id, from the one counter the panel's requests share. */
  reqId: () => string;
  openAllow: (v: View) => void;
}

export class CardActions {
  readonly #d: CardActionDeps;

  constructor(deps: CardActionDeps) {
    this.#d = deps;
  }

  /** Sends `action` for card `id`; the card stays in flight until its reply. False when not connected. */
  send(id: string, action: string, frame: Record<string, unknown>): boolean {
    const { conn, cards, requests, guard } = this.#d;
    const req_id = this.#d.reqId();
    if (!conn.send({ type: action, req_id, id, ...frame })) {
      cards.setMessage(id, 'Not connected: wait for the panel to reconnect, then try again.');
      return false;
    }
    requests.set(req_id, { id, action });
    const node = cards.node(id);
    if (node !== undefined) guard.sync(node);
    return true;
  }

  act(card: HTMLElement, action: string): void {
    const { views, cards, guard } = this.#d;
    const id = card.dataset.pendingId;
    const v = id === undefined ? undefined : views.get(id);
    if (v === undefined) return;
    // The buttons are inert, and so are the shortcuts that stand for them (aria-keyshortcuts).
    if (guard.isInert(card)) {
      cards.setMessage(
        v.id,
        'Wait a moment: this card just appeared or moved. Look at it again, then decide.',
      );
      return;
    }
    const mine = myApproval(v, this.#d.me());
    if (action === 'approve' && v.state === 'awaiting_review' && mine !== undefined)
      cards.setMessage(v.id, alreadyMineWords(v, mine));
    else if (action === 'approve' && v.state === 'awaiting_review' && v.passkey_required === true)
      // Contract 13.3, one gesture: the challenge, the passkey prompt, then the approval with its assertion.
      this.send(v.id, 'approve_challenge', { version: v.version });
    else if (action === 'approve' && v.state === 'awaiting_review')
      this.send(v.id, 'approve', { version: v.version });
    else if (action === 'allow' && v.state === 'awaiting_review') this.#d.openAllow(v);
    else if (action === 'deny' && v.state === 'awaiting_review') {
      const note = card.querySelector<HTMLInputElement>('input.note')?.value.trim() ?? '';
      this.send(v.id, 'deny', note === '' ? { version: v.version } : { version: v.version, note });
    } else if (action === 'revert' && v.status === 'SUCCEEDED' && v.revertible_until !== undefined) {
      // Contract 20: this click is the revert's approval (the daemon reads the file again first).
      this.send(v.id, 'revert', {});
    } else if (action === 'reconcile' && (v.status === 'ERROR' || v.status === 'UNKNOWN')) {
      const outcome = card.querySelector<HTMLInputElement>('input[type=radio]:checked')?.value;
      if (outcome === undefined) {
        cards.setMessage(v.id, 'Choose “delivered” or “not delivered” first.');
        return;
      }
      const note = card.querySelector<HTMLInputElement>('input.reconcile-note')?.value.trim() ?? '';
      this.send(v.id, 'reconcile', note === '' ? { outcome } : { outcome, note });
    }
  }

  /**
   * Contract 13.3: the daemon's challenge over exactly this approval goes to the owner's authenticator (user
   * verification required), and its answer goes with `approve`. The card stays in flight meanwhile.
   */
  async signAndApprove(m: Extract<ServerMessage, { type: 'approve_challenge' }>): Promise<void> {
    const { requests, cards, guard } = this.#d;
    const lib = webauthn();
    try {
      if (lib === undefined) throw new Error('this browser cannot use passkeys here');
      const assertion = await lib.startAuthentication({
        optionsJSON: m.options as unknown as RequestOptions,
      });
      requests.delete(m.req_id);
      this.send(m.id, 'approve', { version: m.version, assertion });
    } catch (e) {
      requests.delete(m.req_id);
      const node = cards.node(m.id);
      if (node !== undefined) guard.sync(node);
      cards.setMessage(m.id, webauthnTrouble(e));
    }
  }
}
