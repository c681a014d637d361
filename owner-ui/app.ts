/**
 * The owner panel (contracts.md 5, issue 4): the queue, what is in progress, and the history with filters,
 * all kept live from the owner WebSocket. A decided card updates on every tab because every tab renders
 * only what the daemon sends; a refusal (another tab decided first, the request changed) is explained on
 * the card. New requests raise a title badge and, when allowed, a desktop notification. Keyboard: j/k
 * move, a approves, d denies (with the note), n edits the note, ? helps.
 *
 * Nothing may slide under the owner's pointer or focus (contract 5 (v2)): placement.ts decides where cards
 * go (the queue oldest first; arrivals that would move the card the owner is on wait behind a fixed
 * "N new requests" button, which moves nothing, until the owner leaves that card or asks for them), and
 * every page change goes through the ClickGuard (click-safety.ts): a card that appears or moves is inert
 * for a second. A decision keeps focus on its card; once the card leaves the queue, focus goes to the card
 * that took its place.
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
import type { Grant, ServerMessage, View } from '../daemon/owner/messages.js';
import { type AllowChoice, AllowDialog } from './allow.js';
import { argsReconnected, argsRefused, receiveArgs, setupArgsLoader } from './args-loader.js';
import { buildCard, countdownText, timeLeft } from './card.js';
import { ClickGuard } from './click-safety.js';
import { type ConnectionState, logOut, OwnerConnection } from './connection.js';
import { byId, el, setText } from './dom.js';
import { EXPLAIN } from './explain.js';
import { HistoryFilters } from './filters.js';
import { FirstRun } from './first-run.js';
import { GrantBoard } from './grants.js';
import { shortcuts } from './keys.js';
import { Notifier } from './notify.js';
import { arrivalsToHold, focusInQueue, keepFocus, newestFirst, oldestFirst, place } from './placement.js';
import { alreadyMineWords, myApproval, waitsForOthers } from './quorum.js';

const views = new Map<string, View>();
const cards = new Map<
  string,
  { node: HTMLElement; version: number; me: string | undefined; key: string; message: string | undefined }
>();
const requests = new Map<string, { id: string; action: string }>();
/** New requests not yet placed, because placing them would move the card the owner is on. */
const held = new Set<string>();
let skewMs = 0;
/** The signed-in owner (`hello.owner`): a quorum card they approved waits for the others (contract 9). */
let me: string | undefined;
let nextReq = 1;

const queueEl = byId('queue');
const historyEl = byId('history');
const connEl = byId('connection');
const retryBtn = byId<HTMLButtonElement>('retry');
const notifyBtn = byId<HTMLButtonElement>('enable-notifications');
const toastEl = byId('toast');
const arrivalsBtn = byId<HTMLButtonElement>('arrivals');
const signedInEl = byId('signed-in');

const conn = new OwnerConnection({ onState: showConnection, onMessage });
const board = new GrantBoard({
  list: byId('grants-list'),
  empty: byId('grants-empty'),
  count: byId('grants-count'),
  now: () => Date.now() + skewMs,
});
const allowDialog = new AllowDialog();
/** Arguments sent as a preview are loaded whole on demand (args-loader.ts; an addition to contract 5). */
setupArgsLoader({ send: (frame) => conn.send(frame), change: (fn) => guard.change(fn) });
/** Issue 19: how to connect an AI and what it can do, while nothing waits (first-run.ts). */
const firstRun = new FirstRun(byId('first-run'));
const filters = new HistoryFilters(() => render());
const grantWords = (id: string) => board.describe(id);
const notifier = new Notifier((id) => {
  // The owner asked for this card: place it even if it was held.
  render(true);
  cards.get(id)?.node.focus();
});
const guard = new ClickGuard((card) => {
  const id = card.dataset.pendingId;
  return [...requests.values()].some((r) => r.id === id);
});

function isFinal(v: View): boolean {
  return v.status !== 'PENDING';
}

/** What the owner typed into a card, so a rebuild (new version) does not lose it. */
function typedNote(node: HTMLElement | undefined): string {
  const input = node?.querySelector<HTMLInputElement>('input.note, input.reconcile-note');
  return input?.value ?? '';
}

function cardFor(v: View): HTMLElement {
  const existing = cards.get(v.id);
  if (existing !== undefined && existing.version === v.version && existing.me === me) return existing.node;
  // A typed note survives a rebuild only while the card asks the same question (same state, same record).
  const key = `${v.state}|${v.reconciliation?.at ?? ''}`;
  const note = existing?.key === key ? typedNote(existing.node) : '';
  const node = buildCard(v, skewMs, note, existing?.message, grantWords, me);
  guard.hold(node);
  if (existing !== undefined) {
    const hadFocus = existing.node.contains(document.activeElement);
    existing.node.replaceWith(node);
    if (hadFocus) node.focus({ preventScroll: true });
  }
  cards.set(v.id, { node, version: v.version, me, key, message: existing?.message });
  return node;
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

function layout(force: boolean): void {
  const all = [...views.values()];
  let waiting = all.filter((v) => !isFinal(v)).sort(oldestFirst);
  const done = all.filter(isFinal).sort(newestFirst);
  // Arrivals that would move the card the owner is on wait until the owner leaves it (or asks).
  const arrivals = new Set(
    waiting.filter((v) => !queueEl.contains(cards.get(v.id)?.node ?? null)).map((v) => v.id),
  );
  held.clear();
  if (!force) for (const id of arrivalsToHold(queueEl, waiting, arrivals, guard.engaged())) held.add(id);
  waiting = waiting.filter((v) => !held.has(v.id));
  const focused = focusInQueue(queueEl);
  place(queueEl, waiting.map(cardFor));
  place(historyEl, done.map(cardFor));
  for (const id of cards.keys()) if (!views.has(id)) cards.delete(id);
  filters.apply(all, done, (v) => cards.get(v.id)?.node);
  if (focused !== undefined) keepFocus(queueEl, cards.get(focused.id)?.node, focused.at);
  arrivalsBtn.hidden = held.size === 0;
  arrivalsBtn.textContent =
    held.size === 1 ? '1 new request — show it' : `${held.size} new requests — show them`;
  // A quorum card this owner approved waits for the others, not for them (contract 9).
  const others = all.filter((v) => waitsForOthers(v, me)).length;
  const awaiting = all.filter((v) => v.state === 'awaiting_review').length - others;
  document.title = awaiting > 0 ? `(${awaiting}) ogf-broker owner` : 'ogf-broker owner';
  byId('queue-count').textContent =
    (awaiting === 0 ? 'nothing waits for you' : `${awaiting} waiting for you`) +
    (others === 0 ? '' : ` · ${others} for other owners`);
  // While arrivals are held the queue's layout stays exactly as it was (the count above says the truth).
  const empty = byId('queue-empty');
  if (held.size === 0) empty.hidden = waiting.length > 0;
  firstRun.show(!empty.hidden);
  // Same one line, other words: the empty queue must not say "nothing waits" while arrivals are held.
  empty.textContent =
    held.size === 0
      ? 'Nothing waits for you. New requests appear here as they arrive.'
      : 'New requests are held while you read: show them below.';
  const attention = done.filter(
    (v) => (v.status === 'ERROR' || v.status === 'UNKNOWN') && !v.reconciliation,
  ).length;
  byId('attention').textContent = attention === 0 ? '' : `${attention} need reconciling`;
}

function onMessage(m: ServerMessage): void {
  switch (m.type) {
    case 'hello':
      skewMs = Date.parse(m.server_time) - Date.now();
      me = m.owner;
      showOwner(m.owner);
      if (m.setup !== undefined) firstRun.update(m.setup);
      return;
    case 'setup':
      firstRun.update(m.setup);
      return;
    case 'snapshot': {
      // A fresh snapshot replaces everything: a reconnecting tab resyncs and misses nothing.
      views.clear();
      for (const v of m.commands) views.set(v.id, v);
      for (const v of m.commands) notifier.seen(v);
      board.reset(m.grants);
      // Requests sent on the old connection get no reply: the snapshot says what happened to them, and
      // their cards must not stay disabled waiting for an answer that never comes.
      requests.clear();
      argsReconnected();
      for (const { node } of cards.values()) guard.sync(node);
      notifier.synced = true;
      render();
      renderGrants();
      return;
    }
    case 'grant_upsert':
      board.upsert(m.grant);
      renderGrants();
      return;
    case 'upsert': {
      const prev = views.get(m.command.id);
      if (prev !== undefined && prev.version > m.command.version) return;
      views.set(m.command.id, m.command);
      notifier.seen(m.command);
      render();
      if (allowDialog.openFor === m.command.id && m.command.state !== 'awaiting_review') {
        // Decided elsewhere while the owner was choosing: the dialog's question no longer stands.
        allowDialog.cancel();
        setCardMessage(m.command.id, 'Decided elsewhere while you were choosing: nothing was sent.');
      }
      return;
    }
    case 'history':
      for (const v of m.commands) if (!views.has(v.id)) views.set(v.id, v);
      byId<HTMLButtonElement>('older').disabled = m.commands.length === 0;
      render();
      return;
    case 'reply':
      if (!argsRefused(m)) onReply(m);
      return;
    case 'args':
      receiveArgs(m);
      return;
  }
}

function setCardMessage(id: string, text: string | undefined): void {
  const entry = cards.get(id);
  if (entry === undefined) return;
  entry.message = text;
  const p = entry.node.querySelector('.card-msg');
  // A message above the buttons pushes them down: through the guard, like every change to the page.
  if (p !== null) guard.change(() => setText(p, text ?? ''));
}

function onReply(m: Extract<ServerMessage, { type: 'reply' }>): void {
  const req = m.req_id === null ? undefined : requests.get(m.req_id);
  if (m.req_id !== null) requests.delete(m.req_id);
  if (req === undefined) {
    if (!m.ok) toast(`${m.error.code}: ${m.error.message}`);
    return;
  }
  if (req.action === 'revoke') {
    board.setRevoking(req.id, false);
    if (!m.ok)
      toast(`Could not revoke ${req.id}: ${m.error.code}: ${EXPLAIN[m.error.code] ?? m.error.message}`);
    renderGrants();
    return;
  }
  const node = cards.get(req.id)?.node;
  if (node !== undefined) guard.sync(node);
  if (m.ok) {
    setCardMessage(req.id, undefined);
    return;
  }
  setCardMessage(req.id, `${m.error.code}: ${EXPLAIN[m.error.code] ?? ''} (${m.error.message})`);
}

function send(id: string, action: string, frame: Record<string, unknown>): void {
  const req_id = `p${nextReq++}`;
  if (!conn.send({ type: action, req_id, id, ...frame })) {
    setCardMessage(id, 'Not connected: wait for the panel to reconnect, then try again.');
    return;
  }
  requests.set(req_id, { id, action });
  const node = cards.get(id)?.node;
  if (node !== undefined) guard.sync(node);
}

function act(card: HTMLElement, action: string): void {
  const id = card.dataset.pendingId;
  const v = id === undefined ? undefined : views.get(id);
  if (v === undefined) return;
  // The buttons are inert, and so are the shortcuts that stand for them (aria-keyshortcuts).
  if (guard.isInert(card)) {
    setCardMessage(v.id, 'Wait a moment: this card just appeared or moved. Look at it again, then decide.');
    return;
  }
  const mine = myApproval(v, me);
  if (action === 'approve' && v.state === 'awaiting_review' && mine !== undefined)
    setCardMessage(v.id, alreadyMineWords(v, mine));
  else if (action === 'approve' && v.state === 'awaiting_review')
    send(v.id, 'approve', { version: v.version });
  else if (action === 'allow' && v.state === 'awaiting_review') openAllow(v);
  else if (action === 'deny' && v.state === 'awaiting_review') {
    const note = card.querySelector<HTMLInputElement>('input.note')?.value.trim() ?? '';
    send(v.id, 'deny', note === '' ? { version: v.version } : { version: v.version, note });
  } else if (action === 'reconcile' && (v.status === 'ERROR' || v.status === 'UNKNOWN')) {
    const outcome = card.querySelector<HTMLInputElement>('input[type=radio]:checked')?.value;
    if (outcome === undefined) {
      setCardMessage(v.id, 'Choose “delivered” or “not delivered” first.');
      return;
    }
    const note = card.querySelector<HTMLInputElement>('input.reconcile-note')?.value.trim() ?? '';
    send(v.id, 'reconcile', note === '' ? { outcome } : { outcome, note });
  }
}

/** The Allow… dialog for the card the owner looked at: its version is the one the grant approves. */
function openAllow(v: View): void {
  allowDialog.open(
    v,
    (grant: AllowChoice) => send(v.id, 'approve', { version: v.version, grant }),
    (submitted) => {
      // Back to the card: on its Allow button when cancelled, on the card once the approval is in flight.
      const node = cards.get(v.id)?.node;
      if (node === undefined || !node.isConnected) return;
      const allow = node.querySelector<HTMLButtonElement>('button.allow');
      if (!submitted && allow !== null && !allow.disabled) allow.focus({ preventScroll: true });
      else node.focus({ preventScroll: true });
    },
  );
}

function revoke(g: Grant | undefined): void {
  if (g === undefined || g.source !== 'owner') return;
  const req_id = `p${nextReq++}`;
  if (!conn.send({ type: 'revoke', req_id, grant_id: g.id })) {
    toast('Not connected: wait for the panel to reconnect, then revoke again.');
    return;
  }
  requests.set(req_id, { id: g.id, action: 'revoke' });
  board.setRevoking(g.id, true);
  renderGrants();
}

let connection: ConnectionState = { kind: 'connecting' };

/** Contract 5 (v2): the panel names the signed-in owner (`hello.owner`). In the header, so via the guard. */
function showOwner(name: string): void {
  if (signedInEl.dataset.owner === name && !signedInEl.hidden) return;
  guard.change(() => {
    signedInEl.dataset.owner = name;
    signedInEl.replaceChildren('Signed in as ', el('strong', {}, name));
    signedInEl.hidden = false;
  });
}

function showConnection(s: ConnectionState): void {
  // The state line and the retry button live in the sticky header: their size can move every card.
  guard.change(() => showConnectionNow(s));
}

function showConnectionNow(s: ConnectionState): void {
  connection = s;
  connEl.dataset.state = s.kind;
  retryBtn.hidden = s.kind !== 'waiting';
  byId('logged-out').hidden = s.kind !== 'logged-out';
  if (s.kind === 'logged-out') signedInEl.hidden = true;
  if (s.kind === 'live') connEl.textContent = 'Live: updates arrive as they happen';
  else if (s.kind === 'connecting') connEl.textContent = 'Connecting…';
  else if (s.kind === 'logged-out') connEl.textContent = 'Logged out';
  else
    connEl.textContent = `Disconnected: reconnecting in ${Math.max(0, Math.ceil((s.retryAt - Date.now()) / 1000))} s`;
  if (s.kind === 'logged-out') {
    // What is on screen is no longer live: take it away rather than let it look current.
    views.clear();
    allowDialog.cancel();
    board.clear();
    layout(true);
    document.title = 'Logged out · ogf-broker owner';
  }
}

function tick(): void {
  guard.change(() => {
    if (connection.kind === 'waiting') showConnectionNow(connection);
    const now = Date.now() + skewMs;
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

function toast(text: string): void {
  // Fixed in a corner (styles.css): it moves nothing, but goes through the guard all the same.
  guard.change(() => setText(toastEl, text));
}

document.addEventListener('click', (e) => {
  const revoking = (e.target as HTMLElement).closest<HTMLButtonElement>('button[data-revoke]');
  if (revoking) revoke(board.get(revoking.dataset.revoke ?? ''));
  const button = (e.target as HTMLElement).closest<HTMLButtonElement>('button[data-action]');
  const card = button?.closest<HTMLElement>('article.card');
  if (button && card) act(card, button.dataset.action ?? '');
});
document.addEventListener('keydown', shortcuts(act));
// Held arrivals are placed as soon as the owner leaves the card they would have moved.
let recheckQueued = false;
const recheck = () => {
  if (held.size === 0 || recheckQueued) return;
  recheckQueued = true;
  window.setTimeout(() => {
    recheckQueued = false;
    render();
  }, 0);
};
for (const type of ['pointerover', 'pointerout', 'focusin', 'focusout'])
  document.addEventListener(type, recheck);
arrivalsBtn.addEventListener('click', () => {
  const first = [...held][0];
  render(true);
  if (first !== undefined) cards.get(first)?.node.scrollIntoView({ block: 'nearest' });
});
// A tab coming back into view shows its cards for the first time: each is inert for its first second.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') for (const { node } of cards.values()) guard.hold(node);
});
retryBtn.addEventListener('click', () => conn.retryNow());
byId('older').addEventListener('click', () => {
  const done = [...views.values()].filter(isFinal).sort(newestFirst);
  const last = done.at(-1);
  conn.send({ type: 'history', req_id: `h${nextReq++}`, limit: 100, ...(last ? { before: last.id } : {}) });
});
byId('logout').addEventListener('click', () => {
  void logOut().finally(() => location.replace('/login'));
});
notifier.setup(notifyBtn);
window.setInterval(tick, 1000);
conn.connect();
