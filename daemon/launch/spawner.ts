/**
 * Why the daemon does not fork its launches itself (issue 41, bench row 11): Node's `spawn` forks on Linux
 * (libuv's `uv_spawn`; its maintainers leave vfork/posix_spawn to applications), in the calling thread. From
 * the daemon (~130 MiB resident) each fork blocked the event loop 5–7 ms and left its memory copy-on-write:
 * ~400 more page faults per launch in the next milliseconds (measured: 470 minor faults per allowed `noop`
 * against 67 per held one), so every request after a launch waited — an allowed command's upsert came 1.6×
 * later than a held one's, though a rule costs microseconds. No library offers a spawn without fork to Node,
 * so a small launcher process (./spawner-child.ts), started once, forks instead, and reports back over IPC.
 *
 * The daemon keeps everything else (runProcess in ./launcher.ts): the output limit, the deadline (it signals
 * the program's process group itself: same user), and what the result means. When the launcher cannot be
 * used here — its file is not beside this one (tests from source), or it cannot be started — the daemon
 * spawns in-process as before. When it ends while programs run, those whose pid it told are stopped (SIGKILL
 * to their group), and every one is reported `lost`: the daemon no longer sees them end, so their outcome is
 * unknown.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withOwnerUmask } from '../base/index.js';
import type { FromLauncher, ToLauncher } from './spawner-protocol.js';

const HELPER = fileURLToPath(new URL('./spawner-child.js', import.meta.url));

/** What one run hears from the launcher. */
export interface RunEvents {
  spawned(pid: number): void;
  /** It never started (no pid): nothing ran. */
  failed(error: string): void;
  out(fd: 1 | 2, data: Buffer): void;
  close(code: number | null, signal: NodeJS.Signals | null, truncated: boolean): void;
  /**
   * The launcher ended after it may have started the program: its outcome is unknown. `stopped`: its pid was
   * known, so its process group was killed; otherwise (the launcher died between the fork and telling the
   * pid) it may still be running, as a program does when the daemon itself is killed (rule 3).
   */
  lost(why: string, stopped: boolean): void;
}

interface Run {
  events: RunEvents;
  pid?: number;
}

class Launcher {
  #child: ChildProcess | undefined;
  /** The launcher answered its start (`spawn` event): a run it was sent may have started. */
  #up = false;
  readonly #runs = new Map<number, Run>();
  #next = 1;

  /** The launcher process, started if it is not running; undefined when it cannot be used here. */
  #ensure(): ChildProcess | undefined {
    if (this.#child !== undefined) return this.#child;
    if (!existsSync(HELPER)) return undefined;
    let child: ChildProcess;
    try {
      // The owner's umask, which every program it starts inherits (contract 1.1 (v4)).
      child = withOwnerUmask(() =>
        spawn(process.execPath, [HELPER], {
          stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
          serialization: 'advanced',
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: process.env.LANG ?? 'C.UTF-8' },
        }),
      );
    } catch {
      return undefined;
    }
    this.#child = child;
    this.#up = false;
    child.once('spawn', () => {
      if (this.#child === child) this.#up = true;
    });
    child.on('error', () => this.#ended(child, 'the launcher process could not be started or reached'));
    child.once('exit', (code, signal) =>
      this.#ended(child, `the daemon's launcher process ended (${signal ?? `exit code ${code}`})`),
    );
    child.on('message', (m: FromLauncher) => this.#receive(m));
    // Neither the process nor its channel keeps the daemon alive; the daemon's own servers do.
    child.unref();
    (child.channel as { unref?: () => void } | undefined)?.unref?.();
    return child;
  }

  /** Warms the launcher at start-up, so the first launch does not wait for Node to start. */
  warm(): void {
    this.#ensure();
  }

  /** Sends one run to the launcher; false when it cannot be used (the caller spawns in-process). */
  run(req: Omit<ToLauncher, 'op' | 'id'>, events: RunEvents): boolean {
    const child = this.#ensure();
    if (child === undefined) return false;
    const id = this.#next++;
    this.#runs.set(id, { events });
    try {
      child.send({ op: 'run', id, ...req } satisfies ToLauncher, (e) => {
        if (e && this.#runs.delete(id)) events.failed(`the launcher process was not reachable: ${e.message}`);
      });
    } catch {
      this.#runs.delete(id);
      return false;
    }
    return true;
  }

  #receive(m: FromLauncher): void {
    const run = this.#runs.get(m.id);
    if (run === undefined) return;
    if (m.op === 'spawned') {
      run.pid = m.pid;
      run.events.spawned(m.pid);
    } else if (m.op === 'out')
      run.events.out(m.fd, Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength));
    else {
      this.#runs.delete(m.id);
      if (m.op === 'failed') run.events.failed(m.error);
      else run.events.close(m.code, m.signal, m.truncated);
    }
  }

  /** The launcher is gone: the next run starts another; each run in flight ends now. */
  #ended(child: ChildProcess, why: string): void {
    if (this.#child !== child) return;
    const up = this.#up;
    this.#child = undefined;
    this.#up = false;
    const runs = [...this.#runs.values()];
    this.#runs.clear();
    for (const run of runs) {
      if (run.pid !== undefined) {
        try {
          process.kill(-run.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      // Never started by a launcher that never came up: nothing ran. Otherwise it may have.
      if (run.pid === undefined && !up) run.events.failed(why);
      else run.events.lost(why, run.pid !== undefined);
    }
  }
}

/** The daemon's one launcher. */
export const launcher = new Launcher();
