/**
 * Runs an approved cue (contracts.md 4): writes the one-time session file, commits `running`, spawns
 * the installed `ogf-bridge-client deliver --session-file PATH` (no shell, PATH/HOME/LANG only), maps its
 * exit and its one JSON line to exactly one outcome, and removes the file if the client left it.
 *
 * ```
 *  exit 0 + delivered line (ack for this cue) ─▶ succeeded, outcome.delivery = {cue_id, applied_at}
 *  exit 2 + not_delivered line (known code)  ─▶ failed, reason = the line's code
 *  still running at delivery_timeout + 10 s  ─▶ unknown / KilledAtDeadline
 *  anything else (3, other code, signal, no valid line) ─▶ unknown / DeliveryUnconfirmed
 * ```
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SessionFile } from '../../../common/ogf-bridge.js';
import type { FailReason, Logger } from '../../base/index.js';
import type { BridgeConfig } from '../../config/index.js';
import type { Command, ExecutionIo, ExecutionReport, Executor, Outcome } from '../../core/index.js';
import { minimalEnv, type ProcessResult, runProcess } from '../../launch/index.js';
import { deliverLineSchema } from './input.js';
import { removeSessionFile, writeSessionFile } from './session-file.js';

/** What `CuesApi.prepare` puts in `SubmitRequest.secret`: held in memory only (rule 4). */
export interface CueSecret {
  session_id: string;
}

/** The installed client script: dist/daemon/kinds/cue/executor.js → dist/bridge-client/cli.js. */
export const BRIDGE_CLIENT_SCRIPT = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'bridge-client',
  'cli.js',
);

/** The bridge client's `not_delivered` codes that mean a certain failure (contract 4). */
const NOT_DELIVERED_CODES: ReadonlySet<FailReason> = new Set<FailReason>([
  'BridgeUnreachable',
  'BridgeRejected',
  'AvatarNotReady',
  'CueExpired',
  'SessionFileRejected',
]);
/** Deliver_by is the time of writing + delivery_timeout_ms + this (contract 4 step 2). */
const DELIVER_BY_SLACK_MS = 5000;
/** The client is killed this long after delivery_timeout_ms past spawn (contract 4 step 4). */
const KILL_AFTER_MS = 10_000;
const KILL_GRACE_MS = 2000;

export interface CueExecutorDeps {
  bridge: BridgeConfig;
  outputLimitBytes: number;
  log: Logger;
  now?: () => number;
  /** The client script to run with this Node (tests may point elsewhere). */
  clientScript?: string;
}

function isSecret(s: unknown): s is CueSecret {
  return typeof s === 'object' && s !== null && typeof (s as CueSecret).session_id === 'string';
}

function sentence(s: string): string {
  const t = s.trim().replace(/\s+/g, ' ').slice(0, 300);
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/** Maps the client's exit and stdout to one outcome (contract 4 step 4). Pure; exported for tests. */
export function mapDelivery(r: ProcessResult, cueId: string, deliveryTimeoutMs: number): ExecutionReport {
  const outcome: Outcome = {};
  if (r.exitCode !== null) outcome.exit_code = r.exitCode;
  if (r.signal !== null) outcome.signal = r.signal;
  if (r.spawnError !== undefined) {
    return {
      kind: 'failed',
      reason: 'LaunchFailed',
      detail: sentence(`Could not start the bridge client: ${r.spawnError}`),
      outcome,
    };
  }
  if (r.lost !== undefined) {
    // The daemon's launcher process ended while the client ran: stopped, its delivery unknown (spawner.ts).
    return {
      kind: 'unknown',
      reason: 'DaemonRestarted',
      detail: sentence(`${r.lost.replace(/^./, (c) => c.toUpperCase())}, and the cue may have been shown`),
      outcome,
    };
  }
  if (r.killedAtDeadline) {
    return {
      kind: 'unknown',
      reason: 'KilledAtDeadline',
      detail: `The bridge client was still running ${deliveryTimeoutMs + KILL_AFTER_MS} ms after launch and was stopped; the cue may have been shown.`,
      outcome,
    };
  }
  const lines = r.stdout.split('\n').filter((l) => l.trim() !== '');
  let line: ReturnType<typeof deliverLineSchema.safeParse> | undefined;
  if (lines.length === 1) {
    try {
      line = deliverLineSchema.safeParse(JSON.parse(lines[0]!));
    } catch {
      line = undefined;
    }
  }
  const parsed = line?.success ? line.data : undefined;
  if (r.exitCode === 0 && parsed?.outcome === 'delivered' && parsed.ack && parsed.ack.cue_id === cueId) {
    outcome.delivery = { cue_id: parsed.ack.cue_id, applied_at: parsed.ack.applied_at };
    return { kind: 'succeeded', outcome };
  }
  if (
    r.exitCode === 2 &&
    parsed?.outcome === 'not_delivered' &&
    NOT_DELIVERED_CODES.has(parsed.code as FailReason)
  ) {
    return {
      kind: 'failed',
      reason: parsed.code as FailReason,
      detail: sentence(`Not delivered: ${parsed.detail}`),
      outcome,
    };
  }
  const how = r.exitCode !== null ? `exit code ${r.exitCode}` : `signal ${r.signal}`;
  const said = parsed ? `: ${parsed.detail}` : ' without a valid result line';
  return {
    kind: 'unknown',
    reason: 'DeliveryUnconfirmed',
    detail: sentence(`The bridge client ended with ${how}${said}; the cue may have been shown`),
    outcome,
  };
}

/** The executor of `ogf.cue` commands. */
export class CueExecutor implements Executor {
  readonly #deps: CueExecutorDeps;
  readonly #now: () => number;

  constructor(deps: CueExecutorDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
  }

  /** Spawn + delivery_timeout_ms + 10 s is when the client is killed (contract 4 step 4), plus the kill grace. */
  maxRunMs(): number {
    return this.#deps.bridge.delivery_timeout_ms + KILL_AFTER_MS + KILL_GRACE_MS;
  }

  async execute(command: Command, io: ExecutionIo): Promise<ExecutionReport> {
    const path = command.session_file;
    if (!isSecret(io.secret)) {
      return {
        kind: 'aborted',
        reason: 'SessionSecretNotRetained',
        detail: 'The session secret of this cue is no longer held in memory, so it cannot be delivered.',
      };
    }
    if (path === undefined) {
      return { kind: 'aborted', reason: 'LaunchFailed', detail: 'This cue has no session file path.' };
    }
    const dt = this.#deps.bridge.delivery_timeout_ms;
    const a = command.args;
    const cue: SessionFile['cue'] = {
      action: a.action as SessionFile['cue']['action'],
      emotion: a.emotion as SessionFile['cue']['emotion'],
      intensity: a.intensity as number,
      gaze: a.gaze as SessionFile['cue']['gaze'],
      ttl_ms: a.ttl_ms as number,
    };
    if ('message' in a) cue.message = a.message as string | null;
    try {
      // Written on approval only (rule 1), exclusively, 0600, never through a symlink.
      writeSessionFile(path, {
        v: 1,
        pending_id: command.id,
        bridge_url: this.#deps.bridge.url,
        session_id: io.secret.session_id,
        cue,
        deliver_by: new Date(this.#now() + dt + DELIVER_BY_SLACK_MS).toISOString(),
        delivery_timeout_ms: dt,
      });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
      return {
        kind: 'aborted',
        reason: 'LaunchFailed',
        detail: sentence(`Could not write the session file (${code})`),
      };
    }
    if (!(await io.markRunning())) {
      this.#remove(command.id, path);
      return {
        kind: 'aborted',
        reason: 'LaunchFailed',
        detail: 'The daemon was shutting down, so nothing was launched.',
      };
    }
    const r = await runProcess({
      file: process.execPath,
      args: [this.#deps.clientScript ?? BRIDGE_CLIENT_SCRIPT, ...command.display.slice(1)],
      env: minimalEnv(),
      deadlineMs: dt + KILL_AFTER_MS,
      killGraceMs: KILL_GRACE_MS,
      outputLimitBytes: this.#deps.outputLimitBytes,
    });
    const report = mapDelivery(r, command.id, dt);
    const left = this.#remove(command.id, path);
    if (report.kind !== 'aborted' && report.kind !== 'rebound') report.outcome.session_file_consumed = !left;
    this.#deps.log.log('info', 'cue_delivery', {
      id: command.id,
      kind: report.kind,
      ...(report.kind === 'failed' || report.kind === 'unknown' ? { reason: report.reason } : {}),
      session_file_consumed: !left,
    });
    return report;
  }

  /** Removes the file if still there; true when it was (the client did not consume it). */
  #remove(id: string, path: string): boolean {
    try {
      return removeSessionFile(path);
    } catch (e) {
      this.#deps.log.log('error', 'session_file_remove_failed', {
        id,
        code: (e as NodeJS.ErrnoException).code,
      });
      return true;
    }
  }
}
