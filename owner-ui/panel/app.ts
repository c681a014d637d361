/**
 * The owner panel's message loop (contracts.md 5, issue 4): connection → state → render. The queue, what is
 * in progress, and the history with filters are all kept live from the owner WebSocket (connection.ts):
 * each frame type has one handler (`handlers`, checked complete by the compiler), which changes what the
 * panel holds (state.ts) and renders. A
 * decided card updates on every tab because every tab renders only what the daemon sends; a refusal
 * (another tab decided first, the request changed) is explained on the card. New requests raise a title
 * badge and, when allowed, a desktop notification. Keyboard: j/k move, a approves, d denies (with the
 * note), n edits the note, ? helps (keys.ts).
 *
 * The views render what this loop holds: queue-view.ts, history-view.ts, header.ts, grants.ts, each card
 * from card-list.ts. Nothing may slide under the owner's pointer or focus (contract 5 (v2)): placement.ts
 * decides where cards go (queue-view.ts holds arrivals back), and every page change goes through the
 * ClickGuard (click-safety.ts): a card that appears or moves is inert for a second. A decision keeps focus
 * on its card; once the card leaves the queue, focus goes to the card that took its place.
 *
 * Grants (contract 5 (v2), 8): Allow… on a grantable card opens allow.ts's dialog, which approves and
 * creates the grant in one `approve` frame; grants.ts lists the live grants ("Allowed for a while") with
 * Revoke…, and cards approved by a grant name it. Allow is a decision button like Approve: inert while the
 * card is. The grants area sits beside the queue (below it on a narrow screen), so a grant the AI uses up
 * never moves a waiting card.
 *
 * Quorum (contract 9, 5 (v2)): a card needing several owners says who approved, when, and how many remain
 * (quorum.ts); the signed-in owner (`hello.owner`) who already approved sees that in place of Approve, the
 * queue count no longer counts it as waiting for them, and `a` on it explains instead of sending.
 */
import type { Grant, ServerMessage, View } from '../../common/owner-messages.js';
import { ClickGuard } from '../click-safety.js';
import { OwnerConnection } from '../connection.js';
import { DeepLinks } from '../deep-link.js';
import { byId } from '../dom.js';
import { AllowDialog } from './allow.js';
import { argsReconnected, argsRefused, receiveArgs, setupArgsLoader } from './args-loader.js';
import { showTrail } from './audit-trail.js';
import { countdownText, timeLeft } from './card.js';
import { CardActions } from './card-actions.js';
import { CardList } from './card-list.js';
import { FirstRun } from './first-run.js';
import { GrantBoard } from './grants.js';
import { Header } from './header.js';
import { download, HistorySearch } from './history-search.js';
import { HistoryView } from './history-view.js';
import { registerWorker } from './install.js';
import { shortcuts } from './keys.js';
import { NodeMarks } from './nodes.js';
import { Notifier } from './notify.js';
import { OAuthClients } from './oauth-clients.js';
import { PasskeyArea } from './passkeys.js';
import { newestFirst, oldestFirst } from './placement.js';
import { PushSettings } from './push.js';
import { QueueView } from './queue-view.js';
import { type ReplyDeps, replied, revertCheckAnswered, reverted } from './replies.js';
import { revertForgotten, revertOpened, revertReconnected } from './revert.js';
import { RulesArea } from './rules.js';
import { PanelState } from './state.js';

/** What the panel holds between frames: commands, awaited replies, clock skew, the owner (state.ts). */
const state = new PanelState();
const { views, requests } = state;
/** Contract 15: the OAuth connections, with Disconnect (hidden while OAuth is off). */
const oauthClients = new OAuthClients();

const conn = new OwnerConnection({
  onState: (s) => {
    header.connection(s);
    oauthClients.live(s.kind === 'live');
  },
  onMessage,
});
// Contract 13.2: the panel is an installable app (install.ts, sw.ts) that can get Web Push (push.ts).
const devices = new PushSettings(registerWorker(), (frame) => conn.send(frame));
const board = new GrantBoard({
  list: byId('grants-list'),
  empty: byId('grants-empty'),
  count: byId('grants-count'),
  now: () => state.now(),
});
// Contract 11: the dialog asks the daemon what a grant would have allowed (policy_test) as the scope changes.
const allowDialog = new AllowDialog((grant) => {
  const req_id = state.reqId('t');
  return conn.send({ type: 'policy_test', req_id, grant }) ? req_id : undefined;
});
/** Contract 13.3: the signed-in owner's passkeys (passkeys.ts). */
const passkeys = new PasskeyArea((frame) => conn.send(frame));
/** Arguments sent as a preview are loaded whole on demand (args-loader.ts; an addition to contract 5). */
setupArgsLoader({ send: (frame) => conn.send(frame), change: (fn) => guard.change(fn) });
/** Issue 19: how to connect an AI and what it can do, while nothing waits (first-run.ts). */
const firstRun = new FirstRun(byId('first-run'));
const historyView = new HistoryView(
  () => render(),
  () => {
    const done = [...views.values()].filter(isFinal).sort(newestFirst);
    const last = done.at(-1);
    conn.send({
      type: 'history',
      req_id: state.reqId('h'),
      limit: 100,
      ...(last ? { before: last.id } : {}),
    });
  },
);
/** Contract 14: the search is the daemon's (indexes); the export is the shown cards' audit entries. */
const search = new HistorySearch(
  (filter) => {
    const req_id = state.reqId('s');
    return conn.send({ type: 'history', req_id, limit: 500, ...filter }) ? req_id : undefined;
  },
  () => {
    const shown = [...document.querySelectorAll<HTMLElement>('#history article.card:not([hidden])')]
      .map((n) => n.dataset.pendingId)
      .filter((id): id is string => id !== undefined);
    if (shown.length === 0) search.say('No command is shown: nothing to export.');
    else if (
      !conn.send({
        type: 'audit',
        req_id: state.reqId('x'),
        command_ids: shown.slice(0, 500),
        format: 'jsonl',
      })
    )
      search.say('Not connected: wait for the panel to reconnect, then export again.');
  },
  () => render(),
);
/** Contract 16: each card's node, marked once the panel holds several nodes' commands (nodes.ts). */
const nodeMarks = new NodeMarks();
const notifier = new Notifier((id) => {
  // The owner asked for this card: place it even if it was held.
  render(true);
  cards.node(id)?.focus();
});
/** `/#<pending_id>` (notifications link there): that card, placed, scrolled to and focused (deep-link.ts). */
const links = new DeepLinks(
  (id) => {
    if (!views.has(id)) return false;
    // The owner asked for this card: place it even if it was held, and show it if a filter hid it.
    render(true);
    const node = cards.node(id);
    if (node === undefined) return false;
    if (node.hidden) node.hidden = false;
    node.classList.add('linked');
    node.scrollIntoView({ block: 'center' });
    node.focus({ preventScroll: true });
    return true;
  },
  (id) =>
    header.toast(
      `Request ${id} is not among the requests this panel holds (it may be older than the history shown).`,
    ),
);
const guard = new ClickGuard((card) => {
  const id = card.dataset.pendingId;
  return [...requests.values()].some((r) => r.id === id);
});
const cards = new CardList(guard, (id) => board.describe(id));
/** Approve, Allow…, Deny and Reconcile on a card, a passkey approval in one gesture (card-actions.ts). */
const actions = new CardActions({
  views,
  requests,
  conn,
  cards,
  guard,
  me: () => state.me,
  reqId: () => state.reqId('p'),
  openAllow: (v) => openAllow(v),
});
const act = (card: HTMLElement, action: string) => actions.act(card, action);
const queue = new QueueView(cards, guard, firstRun, (force) => render(force));
const header = new Header(guard, {
  retry: () => conn.retryNow(),
  loggedOut: () => {
    // What is on screen is no longer live: take it away rather than let it look current.
    state.clear();
    allowDialog.cancel();
    board.clear();
    rulesArea.clear();
    layout(true);
  },
});

/** Contract 18: every rule, the owners' with Disable, Edit and Remove …; Allow… → Always saves one. */
const rulesArea = new RulesArea(conn, () => state.reqId('r'), header);

function isFinal(v: View): boolean {
  return v.status !== 'PENDING';
}

function render(force = false): void {
  guard.change(() => layout(force));
}

/** The grants area and every card's "allowed by grant …" words, after a grant changed. */
function renderGrants(): void {
  guard.change(() => {
    board.render();
    board.refreshRefs();
  });
}

/** Every view from `views`, in an order that keeps focus: read it before placing, restore it after. */
function layout(force: boolean): void {
  const all = [...views.values()];
  const done = all.filter(isFinal).sort(newestFirst);
  // Arrivals that would move the card the owner is on wait until the owner leaves it (or asks).
  const waiting = queue.admit(all.filter((v) => !isFinal(v)).sort(oldestFirst), force);
  const focused = queue.focus();
  nodeMarks.update(all);
  const cardFor = (v: View) => cards.cardFor(v, state.skewMs, state.me);
  queue.place(waiting.map(cardFor));
  historyView.place(done.map(cardFor));
  cards.keepOnly(views);
  historyView.filter(
    all,
    done,
    (v) => cards.node(v.id),
    (id) => search.shows(id),
  );
  queue.keepFocus(focused);
  queue.showCounts(all, waiting.length, state.me);
  historyView.showAttention(done);
}

/** Each frame's handler, by type: the compiler checks that every frame the daemon sends has one. */
type Handlers = { [T in ServerMessage['type']]: (m: Extract<ServerMessage, { type: T }>) => void };

const handlers: Handlers = {
  hello: (m) => {
    state.hello(m.server_time, m.owner);
    header.owner(m.owner);
    passkeys.live(m.signed_in_with);
    devices.refresh();
    if (m.setup !== undefined) firstRun.update(m.setup);
  },
  setup: (m) => firstRun.update(m.setup),
  snapshot: (m) => {
    // A fresh snapshot replaces everything (and the old connection's requests, whose cards must not stay
    // disabled waiting for an answer that never comes).
    state.snapshot(m.commands);
    for (const v of m.commands) notifier.seen(v);
    board.reset(m.grants);
    argsReconnected();
    revertReconnected();
    for (const node of cards.nodes()) guard.sync(node);
    notifier.synced = true;
    render();
    renderGrants();
    rulesArea.refresh();
    links.synced();
  },
  grant_upsert: (m) => {
    board.upsert(m.grant);
    renderGrants();
  },
  upsert: (m) => {
    if (!state.upsert(m.command)) return;
    notifier.seen(m.command);
    render();
    if (allowDialog.openFor === m.command.id && m.command.state !== 'awaiting_review') {
      // Decided elsewhere while the owner was choosing: the dialog's question no longer stands.
      allowDialog.cancel();
      cards.setMessage(m.command.id, 'Decided elsewhere while you were choosing: nothing was sent.');
    }
  },
  history: (m) => {
    state.history(m.commands);
    if (!search.answered(m.req_id, m.commands)) historyView.loaded(m.commands.length);
    render();
  },
  audit: (m) => {
    if (m.jsonl !== undefined) {
      download('ogf-broker-audit.jsonl', m.jsonl);
      search.say(`Exported ${m.entries.length} entries of ${m.command_ids?.length ?? 1} commands.`);
      return;
    }
    const node = m.command_id === undefined ? undefined : cards.node(m.command_id);
    if (node !== undefined) guard.change(() => showTrail(node, m.entries, m.record_disagrees));
  },
  reply: (m) => {
    if (!argsRefused(m) && !passkeys.receive(m) && !devices.reply(m) && !rulesArea.reply(m))
      replied(replyDeps, m);
  },
  passkey_list: (m) => passkeys.receive(m),
  passkey_begin: (m) => passkeys.receive(m),
  approve_challenge: (m) => void actions.signAndApprove(m),
  push_devices: (m) => devices.devices(m.devices),
  args: (m) => receiveArgs(m),
  policy_test: (m) => {
    allowDialog.tested(m);
    rulesArea.tested(m);
  },
  revert: (m) => reverted(replyDeps, m),
  revert_check: (m) => revertCheckAnswered(replyDeps, m),
  // The terminal's frames (`grants`, `doctor`, `notify test`, `reload`): the panel never asks for them.
  grants: () => {},
  doctor: () => {},
  notify_test: () => {},
  reload: () => {},
  rules: (m) => rulesArea.receive(m),
  rule_add: (m) => rulesArea.receive(m),
  rule_update: (m) => rulesArea.receive(m),
  rule_remove: (m) => rulesArea.receive(m),
};

const replyDeps: ReplyDeps = { requests, cards, guard, header, board, renderGrants };

function onMessage(m: ServerMessage): void {
  (handlers[m.type] as (m: ServerMessage) => void)(m);
}

/** The Allow… dialog for the card the owner looked at: its version is the one the grant approves. */
function openAllow(v: View): void {
  allowDialog.open(
    v,
    // Contract 18 "Always": this approval, then the owner's rule (no grant).
    (c) =>
      'rule' in c
        ? rulesArea.saveAlways(() => actions.send(v.id, 'approve', { version: v.version }), c.rule, c.note)
        : actions.send(v.id, 'approve', { version: v.version, grant: c }),
    (submitted) => {
      // Back to the card: on its Allow button when cancelled, on the card once the approval is in flight.
      const node = cards.node(v.id);
      if (node === undefined || !node.isConnected) return;
      const allow = node.querySelector<HTMLButtonElement>('button.allow');
      if (!submitted && allow !== null && !allow.disabled) allow.focus({ preventScroll: true });
      else node.focus({ preventScroll: true });
    },
  );
}

function revoke(g: Grant | undefined): void {
  if (g === undefined || g.source !== 'owner') return;
  const req_id = state.reqId('p');
  if (!conn.send({ type: 'revoke', req_id, grant_id: g.id })) {
    header.toast('Not connected: wait for the panel to reconnect, then revoke again.');
    return;
  }
  requests.set(req_id, { id: g.id, action: 'revoke' });
  board.setRevoking(g.id, true);
  renderGrants();
}

function tick(): void {
  guard.change(() => {
    header.tick();
    const now = state.now();
    // A countdown whose text changes width could rewrap its line and shift what is below it.
    for (const span of document.querySelectorAll<HTMLElement>('.countdown')) {
      const left = timeLeft(span.dataset.expires ?? '', Number(span.dataset.window), now);
      span.textContent = ` · ${countdownText(left)}`;
      span.classList.toggle('soon', left < 60_000);
    }
    board.tick();
    board.refreshRefs();
  });
}

document.addEventListener('click', (e) => {
  const revoking = (e.target as HTMLElement).closest<HTMLButtonElement>('button[data-revoke]');
  if (revoking) revoke(board.get(revoking.dataset.revoke ?? ''));
  const button = (e.target as HTMLElement).closest<HTMLButtonElement>('button[data-action]');
  const card = button?.closest<HTMLElement>('article.card');
  if (button && card) act(card, button.dataset.action ?? '');
});
document.addEventListener('keydown', shortcuts(act));
// "Who did what, when" (contract 14): asked for when the owner opens it (`toggle` does not bubble).
document.addEventListener(
  'toggle',
  (e) => {
    const details = e.target as HTMLDetailsElement;
    const id = details.dataset?.trailFor;
    if (id !== undefined && details.open)
      conn.send({ type: 'audit', req_id: state.reqId('t'), command_id: id });
    // Contract 20: `Revert …` offers its confirm only once the daemon has read the file (revert.ts).
    const reverting = details.dataset?.revertFor;
    if (reverting !== undefined && !details.open) revertForgotten(reverting);
    else if (
      reverting !== undefined &&
      revertOpened(reverting) &&
      !actions.send(reverting, 'revert_check', {})
    )
      revertForgotten(reverting);
  },
  true,
);
// A tab coming back into view shows its cards for the first time: each is inert for its first second.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') for (const node of cards.nodes()) guard.hold(node);
});
notifier.setup(byId<HTMLButtonElement>('enable-notifications'));
window.setInterval(tick, 1000);
conn.connect();
