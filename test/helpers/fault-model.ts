/**
 * The reference model of the command lifecycle (contracts.md section 2) for the model-based suite:
 * deliberately tiny and written from the contract's words, not from the product's code, so the two can
 * disagree. It tracks, per command, what the contract says its state, status, reason and version must be,
 * and which commands may have launched (reached `running`) or must have (their child was released).
 */

export type MState =
  | 'awaiting_review'
  | 'approved'
  | 'running'
  | 'succeeded'
  | 'denied'
  | 'failed'
  | 'unknown';

export interface ModelCommand {
  id: string;
  kind: 'job' | 'cue';
  tag?: string;
  session?: number;
  action?: string;
  state: MState;
  reason?: string;
  version: number;
  deadline: number;
  /** Reached `running`: its child may have launched. */
  mayRun: boolean;
  /** Its child was released and the outcome recorded: it certainly launched, once. */
  mustHaveRun: boolean;
  orphan?: boolean;
  startedAt?: number;
}

export interface ModelState {
  now: number;
  commands: ModelCommand[];
  /** Rule 6: approved cues waiting for their session's current launch, in approval order. */
  queues: Map<number, string[]>;
  busy: Map<number, string>;
  /** Rule 6 across a crash: sessions held until an orphaned delivery's deadline (model time). */
  held: Map<number, number>;
  nonce: string;
  log: string[];
}

export interface Expected {
  state: MState;
  status: string;
  reason?: string;
  version: number;
}

const REVIEW_MS = 300_000;
/** A cue client's hard deadline after spawn: delivery_timeout_ms (20 s in the suite) + 10 s + 2 s grace. */
export const CUE_MAX_RUN_MS = 32_000;
const START = Date.parse('2026-11-30T10:00:00.000Z');

const STATUS: Record<MState, string> = {
  awaiting_review: 'PENDING',
  approved: 'PENDING',
  running: 'PENDING',
  succeeded: 'SUCCEEDED',
  denied: 'DENIED',
  failed: 'ERROR',
  unknown: 'UNKNOWN',
};

export function initial(): ModelState {
  return {
    now: START,
    commands: [],
    queues: new Map(),
    busy: new Map(),
    held: new Map(),
    nonce: Math.random().toString(36).slice(2, 8),
    log: [],
  };
}

/** What the real broker must show for this command (key order matches the comparison). */
export function expectedStatus(c: ModelCommand): Expected {
  const e: Expected = { state: c.state, status: STATUS[c.state], version: c.version };
  const out: Expected = { state: e.state, status: e.status, version: e.version };
  if (c.reason !== undefined)
    return { state: e.state, status: e.status, reason: c.reason, version: e.version };
  return out;
}

function move(c: ModelCommand, state: MState, reason?: string): void {
  c.state = state;
  c.version++;
  if (reason === undefined) delete c.reason;
  else c.reason = reason;
}

const ACTIVE = new Set<MState>(['awaiting_review', 'approved', 'running']);

export function submit(
  m: ModelState,
  c: Pick<ModelCommand, 'id' | 'kind' | 'tag' | 'session' | 'action'>,
): void {
  m.log.push(`submit ${c.kind}`);
  m.commands.push({
    ...c,
    state: 'awaiting_review',
    version: 1,
    deadline: m.now + REVIEW_MS,
    mayRun: false,
    mustHaveRun: false,
  });
}

/** The twin rule (3.1): an identical cue from the same client still PENDING. */
export function twinOf(m: ModelState, session: number, action: string): ModelCommand | undefined {
  m.log.push(`cue ${session} ${action}`);
  return m.commands.find(
    (c) => c.kind === 'cue' && c.session === session && c.action === action && ACTIVE.has(c.state),
  );
}

/** A launch: `running` is committed before the child (rule 3). */
function launch(m: ModelState, c: ModelCommand): void {
  move(c, 'running');
  c.mayRun = true;
  c.startedAt = m.now;
  if (c.kind === 'cue') m.busy.set(c.session!, c.id);
}

/** Approve/deny: AlreadyDecided first, then the version (contract 5). Returns the expected code. */
export function decide(m: ModelState, c: ModelCommand, how: 'approve' | 'deny', version: number): string {
  m.log.push(`${how} ${c.id}@${version}`);
  if (c.state !== 'awaiting_review') return 'AlreadyDecided';
  if (version !== c.version) return 'VersionConflict';
  if (how === 'deny') {
    move(c, 'denied', 'OwnerDenied');
    return 'ok';
  }
  move(c, 'approved');
  if (c.kind === 'job') launch(m, c);
  else if (m.busy.has(c.session!) || m.held.has(c.session!))
    m.queues.set(c.session!, [...(m.queues.get(c.session!) ?? []), c.id]);
  else launch(m, c);
  return 'ok';
}

export function cancel(m: ModelState, c: ModelCommand): void {
  m.log.push(`cancel ${c.id}`);
  if (c.state === 'awaiting_review') move(c, 'denied', 'CancelledByCaller');
}

/** Rule 2: only failed/unknown; the state stays, the version moves. */
export function reconcile(m: ModelState, c: ModelCommand): string {
  m.log.push(`reconcile ${c.id}`);
  if (c.state !== 'failed' && c.state !== 'unknown') return 'NotReconcilable';
  c.version++;
  return 'ok';
}

export function advance(m: ModelState, ms: number): void {
  m.log.push(`advance ${ms}`);
  m.now += ms;
  expireDue(m);
  releaseHolds(m);
}

/** A hold ends at its deadline; the session's queue then launches in approval order. */
function releaseHolds(m: ModelState): void {
  for (const [session, until] of [...m.held]) {
    if (until > m.now) continue;
    m.held.delete(session);
    pump(m, session);
  }
}

function pump(m: ModelState, session: number): void {
  if (m.busy.has(session) || m.held.has(session)) return;
  const nextId = (m.queues.get(session) ?? []).shift();
  if (nextId !== undefined) launch(m, m.commands.find((x) => x.id === nextId)!);
}

function expireDue(m: ModelState): void {
  for (const c of m.commands)
    if (c.state === 'awaiting_review' && c.deadline <= m.now) move(c, 'denied', 'ReviewExpired');
}

/** A running command's child ends; for a cue the session's next approved cue launches (rule 6). */
export function exit(m: ModelState, c: ModelCommand, how: 'ok' | 'fail' | 'unknown'): void {
  m.log.push(`exit ${c.id} ${how}`);
  c.mustHaveRun = true;
  if (c.kind === 'job') {
    if (how === 'ok') move(c, 'succeeded');
    else move(c, 'failed', 'NonZeroExit');
    return;
  }
  if (how === 'ok') move(c, 'succeeded');
  else if (how === 'fail') move(c, 'failed', 'AvatarNotReady');
  else move(c, 'unknown', 'DeliveryUnconfirmed');
  m.busy.delete(c.session!);
  pump(m, c.session!);
}

/** Rules 3 and 4, after `downMs` with no daemon: then overdue reviews expire (original deadlines). */
export function restart(m: ModelState, downMs: number): void {
  m.log.push(`crash+restart after ${downMs}`);
  m.now += downMs;
  m.held.clear();
  for (const c of m.commands) {
    if (c.state === 'running') move(c, 'unknown', 'DaemonRestarted');
    else if (c.kind === 'cue' && c.state === 'awaiting_review') move(c, 'denied', 'SessionSecretNotRetained');
    else if (c.kind === 'cue' && c.state === 'approved') move(c, 'failed', 'SessionSecretNotRetained');
  }
  m.queues.clear();
  m.busy.clear();
  // Rule 6: any cue that was cut off by a restart (this one or an earlier one) may still be delivering.
  for (const c of m.commands) {
    if (c.kind !== 'cue' || c.state !== 'unknown' || c.reason !== 'DaemonRestarted') continue;
    const until = c.startedAt! + CUE_MAX_RUN_MS;
    if (until > m.now && until > (m.held.get(c.session!) ?? 0)) m.held.set(c.session!, until);
  }
  expireDue(m);
}
