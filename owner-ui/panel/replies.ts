/**
 * What the panel does with the answers to its own requests (contract 5's `reply`, contract 20's `revert` and
 * `revert_check`):
 * the card that asked shows the outcome (or why not, explained), a revoke's grant leaves its busy state.
 * Its own file so app.ts keeps to wiring the panel together.
 */
import type { ServerMessage } from '../../common/owner-messages.js';
import type { ClickGuard } from '../click-safety.js';
import type { CardList } from './card-list.js';
import { EXPLAIN } from './explain.js';
import type { GrantBoard } from './grants.js';
import type { Header } from './header.js';
import { revertChecked } from './revert.js';
import type { PendingRequest } from './state.js';

export interface ReplyDeps {
  requests: Map<string, PendingRequest>;
  cards: CardList;
  guard: ClickGuard;
  header: Header;
  board: GrantBoard;
  /** The grants area and every card's "allowed by grant …" words, again. */
  renderGrants(): void;
}

/** Contract 20: the revert was queued as the owner's own command; its card shows in the queue or runs. */
export function reverted(d: ReplyDeps, m: Extract<ServerMessage, { type: 'revert' }>): void {
  const req = d.requests.get(m.req_id);
  d.requests.delete(m.req_id);
  if (req === undefined) return;
  const node = d.cards.node(req.id);
  if (node !== undefined) d.guard.sync(node);
  d.cards.setMessage(req.id, `Revert queued as ${m.id}: it writes the previous content back once approved.`);
}

/** Contract 20: the daemon read the file — the diff back, so `Revert …` offers its confirm (revert.ts). */
export function revertCheckAnswered(d: ReplyDeps, m: Extract<ServerMessage, { type: 'revert_check' }>): void {
  const req = d.requests.get(m.req_id);
  d.requests.delete(m.req_id);
  if (req === undefined) return;
  d.guard.change(() => revertChecked(req.id, { preview: m.preview }));
  const node = d.cards.node(req.id);
  if (node !== undefined) d.guard.sync(node);
}

/** A `reply` to a decision or a revoke: the card (or grant) it concerns shows what came of it. */
export function replied(d: ReplyDeps, m: Extract<ServerMessage, { type: 'reply' }>): void {
  const req = m.req_id === null ? undefined : d.requests.get(m.req_id);
  if (m.req_id !== null) d.requests.delete(m.req_id);
  if (req === undefined) {
    if (!m.ok) d.header.toast(`${m.error.code}: ${m.error.message}`);
    return;
  }
  if (req.action === 'revoke') {
    d.board.setRevoking(req.id, false);
    if (!m.ok)
      d.header.toast(
        `Could not revoke ${req.id}: ${m.error.code}: ${EXPLAIN[m.error.code] ?? m.error.message}`,
      );
    d.renderGrants();
    return;
  }
  if (req.action === 'revert_check' && !m.ok)
    d.guard.change(() => {
      const { code, message } = m.error;
      revertChecked(req.id, { why: message.startsWith(code) ? message : `${code}: ${message}` });
    });
  const node = d.cards.node(req.id);
  if (node !== undefined) d.guard.sync(node);
  if (req.action === 'revert_check') return;
  if (m.ok) {
    d.cards.setMessage(req.id, undefined);
    return;
  }
  d.cards.setMessage(req.id, `${m.error.code}: ${EXPLAIN[m.error.code] ?? ''} (${m.error.message})`);
}
