/**
 * Spawns one argv — never a shell (architecture rule 9) — with a reduced environment, keeps stdout and
 * stderr up to a limit each, and enforces a deadline: SIGTERM, then SIGKILL `killGraceMs` later
 * (contract 4). Reports what happened; mapping that to a lifecycle outcome is the executor's job. The fork
 * itself is the launcher process's (./spawner.ts says why), or this process's where that cannot be used.
 */
import { withOwnerUmask } from '../base/index.js';
import { startProgram } from './program.js';
import { launcher, type RunEvents } from './spawner.js';

export interface ProcessSpec {
  file: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd?: string;
  /** Milliseconds after spawn at which SIGTERM is sent. */
  deadlineMs: number;
  /** Milliseconds after SIGTERM at which SIGKILL is sent. */
  killGraceMs: number;
  outputLimitBytes: number;
  /** Called once the child has been spawned (its pid exists). */
  onSpawn?: (pid: number) => void;
}

export interface ProcessResult {
  spawnError?: string;
  /**
   * The daemon's launcher process ended while the program may have run (./spawner.ts): what it did is
   * unknown; the sentence says whether it was stopped or may still be running.
   */
  lost?: string;
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  outputTruncated: boolean;
  killedAtDeadline: boolean;
}

/** PATH/HOME/LANG of this process (with safe fallbacks) plus `extra` (contract 1.3, 4). */
export function minimalEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: process.env.HOME ?? '/',
    LANG: process.env.LANG ?? 'C.UTF-8',
  };
  return { ...env, ...extra };
}

/** Collects up to `limit` bytes of a stream, remembering whether more came. */
class Capture {
  readonly #chunks: Buffer[] = [];
  #size = 0;
  truncated = false;
  constructor(readonly limit: number) {}
  add(chunk: Buffer): void {
    const room = this.limit - this.#size;
    if (room <= 0) {
      this.truncated = true;
      return;
    }
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (part.length < chunk.length) this.truncated = true;
    this.#chunks.push(part);
    this.#size += part.length;
  }
  text(): string {
    // A cut may split a UTF-8 sequence; the decoder replaces the broken tail rather than failing.
    return Buffer.concat(this.#chunks).toString('utf8');
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/** What a run hears, from the launcher process or from an in-process spawn. */
type Events = RunEvents;

/**
 * In this process (the launcher cannot be used here), under the owner's umask (contract 1.1 (v4)). The fork
 * blocks this thread for milliseconds, so it waits one turn: the answers the commit of `running` released
 * (the AI's call, the owner's reply) are written first (issue 41: an allowed run_command_wait answered
 * after the spawn, 13.4 ms against 6.4 ms for a held one).
 */
function spawnHere(spec: ProcessSpec, e: Events): void {
  setImmediate(() =>
    withOwnerUmask(() => startProgram(spec, { ...e, close: (code, signal) => e.close(code, signal, false) })),
  );
}

/**
 * Runs one process to its end, forked by the daemon's launcher process (./spawner.ts), else here. Never
 * rejects, and a spawn that fails is a `spawnError`, never a throw.
 */
export function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  return new Promise((resolve) => {
    const out = new Capture(spec.outputLimitBytes);
    const err = new Capture(spec.outputLimitBytes);
    let killedAtDeadline = false;
    let termTimer: NodeJS.Timeout | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let settled = false;
    let moreThanSent = false;
    const finish = (r: Omit<ProcessResult, 'stdout' | 'stderr' | 'outputTruncated' | 'killedAtDeadline'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(termTimer);
      clearTimeout(killTimer);
      resolve({
        ...r,
        stdout: out.text(),
        stderr: err.text(),
        outputTruncated: out.truncated || err.truncated || moreThanSent,
        killedAtDeadline,
      });
    };
    const events: Events = {
      spawned: (pid) => {
        spec.onSpawn?.(pid);
        termTimer = setTimeout(() => {
          killedAtDeadline = true;
          signalGroup(pid, 'SIGTERM');
          killTimer = setTimeout(() => signalGroup(pid, 'SIGKILL'), spec.killGraceMs);
        }, spec.deadlineMs);
      },
      failed: (error) => finish({ spawnError: error, exitCode: null, signal: null }),
      out: (fd, data) => (fd === 1 ? out : err).add(data),
      close: (code, signal, truncated) => {
        moreThanSent = truncated;
        finish({ exitCode: code, signal });
      },
      lost: (why, stopped) =>
        finish({
          lost: `${why} while it ran; ${stopped ? 'it was stopped' : 'it may still be running (its pid was not yet known)'}`,
          exitCode: null,
          signal: stopped ? 'SIGKILL' : null,
        }),
    };
    const request = { file: spec.file, args: spec.args, env: spec.env, limit: spec.outputLimitBytes };
    if (!launcher.run(spec.cwd === undefined ? request : { ...request, cwd: spec.cwd }, events))
      spawnHere(spec, events);
  });
}
