/**
 * One command as a card (contracts.md 5): `data-pending-id`, the exact argv, the state in words, who
 * asked, the session fingerprint (never the session UUID: the View cannot hold it), the AI's
 * justification, a live countdown while it waits, the cue in words and as a picture, the outcome once
 * final, and real buttons whose accessible names begin with Approve / Deny / Reconcile — and Allow on a
 * card that may be granted (contract 5 (v2), 8). ERROR and UNKNOWN get Reconcile (delivered / not
 * delivered + note), never a retry (rule 2). Who decided shows too: quietly an owner's name, plainly the
 * grant that approved without asking, and on a card needing several owners (contract 9) who approved
 * and how many remain (quorum.ts).
 */
import type { View } from '../../common/owner-messages.js';
import { el } from '../dom.js';
import { grantable } from './allow.js';
import { trailBlock } from './audit-trail.js';
import { kindCard } from './kinds.js';
import { mineNote, myApproval, othersWords, quorumLine, waitsForOthers } from './quorum.js';
import { reboundLine, revertControls, revertOfLine } from './revert.js';
import { time } from './when.js';

const PHASE_WORDS: Record<string, string> = {
  awaiting_review: 'waiting for your decision',
  approved: 'approved, starting',
  running: 'running',
};

const REASON_WORDS: Record<string, string> = {
  OwnerDenied: 'denied by the owner',
  ReviewExpired: 'nobody decided in time',
  CancelledByCaller: 'cancelled by the AI',
  OgfBridgeNotConfigured: 'the avatar bridge is not configured',
  SessionSecretNotRetained: 'the daemon restarted and the cue secret was not kept',
  LaunchFailed: 'could not be started',
  NonZeroExit: 'exited with an error',
  BridgeUnreachable: 'the avatar app could not be reached',
  BridgeRejected: 'the avatar app refused it',
  AvatarNotReady: 'the avatar was not ready',
  CueExpired: 'the cue expired before delivery',
  SessionFileRejected: 'the session file was refused',
  DeliveryUnconfirmed: 'delivery was not confirmed',
  KilledAtDeadline: 'killed at its deadline',
  DaemonRestarted: 'the daemon restarted while it ran',
  UpstreamUnavailable: 'the upstream server was not connected, nothing was sent',
  UpstreamRejected: 'the upstream server refused the call before running it',
  UpstreamToolError: 'the upstream tool said it failed',
  UpstreamError: 'the upstream server answered an error',
};

const STATUS_HINT: Record<string, string> = {
  ERROR: 'It certainly did not take effect. Nothing is retried.',
  UNKNOWN: 'It may or may not have taken effect: check, then record what happened. Nothing is replayed.',
};

/**
 * The state in words, e.g. `PENDING · waiting for your decision`, `DENIED · ReviewExpired`; a quorum command
 * the signed-in owner `me` already approved waits for the others, not for them (contract 9).
 */
export function stateWords(v: View, me?: string): string {
  if (waitsForOthers(v, me)) return `PENDING · ${othersWords(v)}`;
  if (v.status === 'PENDING') return `PENDING · ${PHASE_WORDS[v.state] ?? v.state}`;
  return v.reason === undefined ? v.status : `${v.status} · ${v.reason}`;
}

/** `m:ss` (or `h:mm:ss`) until `ms` from now. */
/**
 * Milliseconds left before `expires` at the daemon's `now`, never more than the command's whole review
 * window: the skew estimate (server_time minus the tab's clock when `hello` was read) errs by however late
 * the tab read it, and a countdown must not promise the owner more time than the command was ever given.
 */
export function timeLeft(expires: string, windowMs: number, now: number): number {
  const left = Date.parse(expires) - now;
  return Number.isFinite(windowMs) && windowMs > 0 ? Math.min(left, windowMs) : left;
}

export function countdownText(ms: number): string {
  if (ms <= 0) return 'review time is up';
  const s = Math.ceil(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `expires in ${h}:${String(m).padStart(2, '0')}:${sec}` : `expires in ${m}:${sec}`;
}

function argvBlock(v: View): HTMLElement {
  // Each argv element in its own box, so the owner sees exactly where arguments begin and end.
  const args = v.display.map((a) => el('code', { class: 'arg' }, a));
  return el(
    'div',
    { class: 'argv', role: 'group', 'aria-label': 'Exact command line that will run' },
    ...args,
  );
}

/** Contract 21: what the process may touch ("confined: writes only under …" or "not confined"). */
function reachLine(v: View): HTMLElement | null {
  if (v.reach === undefined) return null;
  const confined = v.reach.startsWith('confined');
  return el('p', { class: `reach ${confined ? 'confined' : 'unconfined'}` }, v.reach);
}

function outcomeBlock(v: View): HTMLElement | null {
  const r = v.result;
  if (r === undefined || v.status === 'PENDING') return null;
  const parts: Array<HTMLElement | null> = [];
  const reasonWords = v.reason === undefined ? '' : (REASON_WORDS[v.reason] ?? '');
  if (r.detail !== undefined)
    parts.push(el('p', { class: 'detail' }, reasonWords ? `${reasonWords}: ` : '', r.detail));
  const hint = STATUS_HINT[v.status];
  if (hint !== undefined) parts.push(el('p', { class: 'hint' }, hint));
  if (r.owner_note !== undefined)
    parts.push(el('p', { class: 'note-sent' }, 'Your note to the AI: ', r.owner_note));
  const facts: string[] = [];
  if (r.exit_code !== undefined) facts.push(`exit code ${r.exit_code}`);
  if (r.signal !== undefined) facts.push(`signal ${r.signal}`);
  if (r.finished_at !== undefined) facts.push(`finished ${time(r.finished_at)}`);
  if (r.delivery !== undefined) facts.push(`shown by the avatar at ${time(r.delivery.applied_at)}`);
  if (facts.length > 0) parts.push(el('p', { class: 'facts' }, facts.join(' · ')));
  parts.push(kindCard(v.tool)?.outcome?.(v) ?? null);
  for (const stream of ['stdout', 'stderr'] as const) {
    const text = r[stream];
    if (text !== undefined && text !== '') {
      parts.push(el('details', { class: 'output' }, el('summary', {}, stream), el('pre', {}, text)));
    }
  }
  if (v.reconciliation !== undefined) {
    const rec = v.reconciliation;
    parts.push(
      el(
        'p',
        { class: 'reconciled' },
        `Reconciled: ${rec.outcome === 'delivered' ? 'it happened (delivered)' : 'it did not happen (not delivered)'}`,
        rec.note === undefined ? '' : ` — ${rec.note}`,
        ` (${time(rec.at)})`,
      ),
    );
  }
  return el('div', { class: 'outcome' }, ...parts);
}

/**
 * Who decided (contract 5 (v2) `decided_by`). A grant's approval is the one a human never looked at, so it
 * gets its own line naming the grant (app.ts keeps its words current); an owner's name stays quiet in the
 * meta line.
 */
function grantLine(v: View, grantWords: (id: string) => string): HTMLElement | null {
  const by = v.decided_by;
  if (by === undefined || !by.startsWith('grant:')) return null;
  const id = by.slice('grant:'.length);
  return el(
    'p',
    { class: 'decided-grant' },
    'allowed by grant ',
    el('code', {}, id),
    ' ',
    el('span', { class: 'grant-ref', 'data-grant-id': id }, grantWords(id)),
  );
}

function decidedWords(v: View): string {
  const by = v.decided_by;
  if (by === undefined || by === 'daemon' || by.startsWith('grant:')) return '';
  // Several owners decided: the quorum line names them all (quorum.ts), not only the one who completed it.
  if (v.approvals_needed !== undefined) return '';
  if (by === 'policy:read_only') return ' · approved by the read-only policy';
  // Contract 11: a rule of the owner's config decided at submit.
  if (by.startsWith('rule:')) {
    const rule = by.slice('rule:'.length);
    return v.reason === 'PolicyDenied' ? ` · denied by rule ${rule}` : ` · approved by rule ${rule}`;
  }
  if (v.reason === 'CancelledByCaller') return ` · cancelled by ${by}`;
  return v.status === 'DENIED' ? ` · denied by ${by}` : ` · approved by ${by}`;
}

/**
 * Note, Approve, Allow… and Deny. The signed-in owner `me` who already approved a quorum command sees why
 * there is no Approve in its place (contract 9); Deny stays.
 */
function decideControls(v: View, note: string, me: string | undefined): HTMLElement {
  const mine = myApproval(v, me);
  const noteId = `note-${v.id}`;
  const input = el('input', {
    id: noteId,
    class: 'note',
    type: 'text',
    maxlength: 2000,
    placeholder: 'Optional note to the AI, sent with Deny',
    autocomplete: 'off',
  });
  input.value = note;
  return el(
    'div',
    { class: 'controls' },
    el('label', { class: 'visually-hidden', for: noteId }, 'Note to the AI (optional, sent with Deny)'),
    input,
    mine !== undefined
      ? mineNote(v, mine)
      : el(
          'button',
          {
            type: 'button',
            class: 'approve',
            'data-action': 'approve',
            'aria-keyshortcuts': 'a',
            disabled: true,
          },
          v.passkey_required === true ? 'Approve with passkey' : 'Approve',
        ),
    grantable(v)
      ? el(
          'button',
          {
            type: 'button',
            class: 'allow',
            'data-action': 'allow',
            'aria-haspopup': 'dialog',
            'aria-label': 'Allow… (approve and allow the same again)',
            title: 'Approve now and let the same requests through for a while',
            disabled: true,
          },
          'Allow…',
        )
      : null,
    el(
      'button',
      { type: 'button', class: 'deny', 'data-action': 'deny', 'aria-keyshortcuts': 'd', disabled: true },
      'Deny',
    ),
  );
}

function reconcileControls(v: View, note: string): HTMLElement {
  const name = `outcome-${v.id}`;
  const radio = (value: string, words: string) =>
    el('label', { class: 'choice' }, el('input', { type: 'radio', name, value }), ` ${words}`);
  const input = el('input', {
    class: 'reconcile-note',
    type: 'text',
    maxlength: 2000,
    placeholder: 'Note: what you checked',
    'aria-label': 'Reconciliation note (optional)',
    autocomplete: 'off',
  });
  input.value = note;
  return el(
    'fieldset',
    { class: 'controls reconcile' },
    el('legend', {}, 'What really happened?'),
    radio('delivered', 'delivered (it happened)'),
    radio('not_delivered', 'not delivered (it did not happen)'),
    input,
    el(
      'button',
      { type: 'button', class: 'reconcile-btn', 'data-action': 'reconcile', disabled: true },
      'Reconcile',
    ),
  );
}

/**
 * Builds a card; `note` and `message` carry over what the owner typed and the last conflict text; `me` is
 * the signed-in owner (`hello.owner`), whose own approval of a quorum command the card acknowledges. Its
 * decision buttons are born disabled and inert (contract 5 (v2): inert for a card's first second on
 * screen); click-safety.ts arms them.
 */
export function buildCard(
  v: View,
  skewMs: number,
  note: string,
  message: string | undefined,
  grantWords: (id: string) => string,
  me: string | undefined,
): HTMLElement {
  const titleId = `title-${v.id}`;
  const attention = v.status === 'ERROR' || v.status === 'UNKNOWN';
  return el(
    'article',
    {
      class: `card status-${v.status} state-${v.state}${attention && v.reconciliation === undefined ? ' attention' : ''}`,
      'data-pending-id': v.id,
      'data-status': v.status,
      'data-state': v.state,
      'data-version': v.version,
      'data-client': v.client,
      'data-node': v.node,
      'data-inert': true,
      tabindex: 0,
      'aria-labelledby': titleId,
    },
    el(
      'header',
      {},
      el(
        'h3',
        { id: titleId },
        el('span', { class: 'cmd' }, v.command),
        ' ',
        el('span', { class: 'id' }, v.id),
      ),
      el('span', { class: `state-badge badge-${v.status}` }, stateWords(v, me)),
    ),
    metaLine(v, skewMs),
    quorumLine(v, me),
    grantLine(v, grantWords),
    // Contract 20: back from a changed file; a revert and what it takes back.
    reboundLine(v),
    revertOfLine(v),
    el('p', { class: 'summary' }, v.summary),
    argvBlock(v),
    reachLine(v),
    kindCard(v.tool)?.lead?.(v) ?? null,
    whyBlock(v),
    kindCard(v.tool)?.block?.(v) ?? null,
    outcomeBlock(v),
    revertControls(v, Date.now() + skewMs),
    el('p', { class: 'card-msg', role: 'status', 'aria-live': 'polite' }, message ?? ''),
    v.state === 'awaiting_review' ? decideControls(v, note, me) : null,
    attention ? attentionControls(v, note) : null,
    trailBlock(v.id),
  );
}

/** Who asked, when, on which node, the review's countdown while it waits, and who decided. */
function metaLine(v: View, skewMs: number): HTMLElement {
  return el(
    'p',
    { class: 'meta' },
    // Contract 16: the node that received it, shown once the panel holds several nodes' (nodes.ts).
    v.node === undefined
      ? null
      : el(
          'span',
          { class: 'node-mark', title: `Received, and run, by the daemon of node ${v.node}` },
          el('span', { class: 'node-word' }, 'node '),
          el('strong', {}, v.node),
        ),
    'Asked by ',
    el('strong', { class: 'client' }, v.client),
    ` at ${time(v.created_at)}`,
    v.state === 'awaiting_review' ? countdown(v, skewMs) : null,
    v.decided_by === undefined ? null : el('span', { class: 'decided' }, decidedWords(v)),
  );
}

/** The time left to review, kept current by the panel's clock (data-expires, data-window, data-skew). */
function countdown(v: View, skewMs: number): HTMLElement {
  const reviewMs = Date.parse(v.review_expires_at) - Date.parse(v.created_at);
  return el(
    'span',
    {
      class: 'countdown',
      'data-expires': v.review_expires_at,
      'data-window': String(reviewMs),
      'data-skew': skewMs,
    },
    ` · ${countdownText(timeLeft(v.review_expires_at, reviewMs, Date.now() + skewMs))}`,
  );
}

/** The AI's justification, marked as the AI's words. */
function whyBlock(v: View): HTMLElement | null {
  if (v.justification === undefined) return null;
  return el(
    'blockquote',
    { class: 'why' },
    el('span', { class: 'why-label' }, 'Why the AI asks: '),
    v.justification,
  );
}

/** An ERROR or UNKNOWN: record its outcome, or (once recorded) a different one behind a fold. */
function attentionControls(v: View, note: string): HTMLElement {
  if (v.reconciliation === undefined) return reconcileControls(v, note);
  return el(
    'details',
    { class: 'again' },
    el('summary', {}, 'Record a different outcome'),
    reconcileControls(v, note),
  );
}
