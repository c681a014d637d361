/**
 * Issue 41: a bench run must leave nothing behind however it ends. A row that throws past its own
 * `finally`, an uncaught error, Ctrl-C or a SIGTERM from the caller's timeout once left daemons, the bare
 * server and PostgreSQL running — and an orphan holding the caller's stdout kept a script reading the
 * bench waiting until its own timeout. Every child the bench starts is registered here; when the bench
 * process ends, for whatever reason, each one still registered is killed (synchronously: `exit` handlers
 * cannot wait) and each registered sync step (stopping PostgreSQL) runs once.
 */
import type { ChildProcess } from 'node:child_process';

const children = new Set<ChildProcess>();
const steps = new Set<() => void>();
let installed = false;

function endAll(): void {
  for (const step of steps) {
    try {
      step();
    } catch {
      // Best effort: the process is ending; the others still run.
    }
  }
  steps.clear();
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', endAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.once(signal, () => {
      process.stderr.write(`bench: ${signal}: stopping what it started\n`);
      endAll();
      process.exit(130);
    });
}

/** Kills `child` when the bench ends, unless it has exited by then (it is forgotten when it does). */
export function owned<C extends ChildProcess>(child: C): C {
  install();
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Runs `step` (synchronous) when the bench ends, unless the returned function was called first. */
export function atExit(step: () => void): () => void {
  install();
  steps.add(step);
  return () => {
    steps.delete(step);
  };
}
