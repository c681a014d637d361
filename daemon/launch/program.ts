/**
 * One program started — argv only, never a shell (architecture rule 9), stdin closed, stdout and stderr
 * piped, in a process group of its own so a deadline's signal to -pid reaches its children too — and what
 * becomes of it told as events. The one place a program is forked: in the launcher process
 * (./spawner-child.ts), or in the daemon where the launcher cannot be used (./launcher.ts). Never throws.
 */
import { spawn } from 'node:child_process';

export interface Program {
  file: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd?: string;
}

export interface ProgramEvents {
  spawned(pid: number): void;
  /** It never started (no pid): nothing ran. */
  failed(error: string): void;
  out(fd: 1 | 2, data: Buffer): void;
  /** It ended and its pipes closed: all output was told before. */
  close(code: number | null, signal: NodeJS.Signals | null): void;
}

function errorText(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  return `${err.code ?? 'Error'}: ${err.message}`;
}

export function startProgram(p: Program, e: ProgramEvents): void {
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(p.file, p.args, {
      env: p.env,
      ...(p.cwd === undefined ? {} : { cwd: p.cwd }),
      shell: false,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
  } catch (err) {
    e.failed(errorText(err));
    return;
  }
  // 'error' first, before anything else can throw: a spawn that fails (EMFILE, EAGAIN, ENOENT, EACCES)
  // reports it on the next tick, and an unheard 'error' event would end the process (contract 4: a spawn
  // error is failed/LaunchFailed). Without a pid the program never started.
  child.on('error', (err) => {
    if (child.pid === undefined) e.failed(errorText(err));
  });
  // When descriptors run out Node returns before creating the pipes: stdout and stderr are left
  // undefined (not null, whatever the types say), and the 'error' above follows. Nothing ran.
  if (!child.stdout || !child.stderr) return;
  child.stdout.on('data', (d: Buffer) => e.out(1, d));
  child.stderr.on('data', (d: Buffer) => e.out(2, d));
  child.once('spawn', () => e.spawned(child.pid!));
  // 'close' waits for the pipes too, so all output is in.
  child.once('close', (code, signal) => e.close(code, signal));
}
