/**
 * The worker thread of `audit verify`'s walk (walk-worker.ts), started as early as the CLI knows it
 * will verify (cli.ts, before the command's own modules load): a thread takes ~40 ms to start and load its
 * modules here, as long as the walk of 100,000 entries takes the main thread alone (bench row 15). It
 * waits for its work, and holds no process open: unused, it ends with the process.
 */
import { Worker } from 'node:worker_threads';

const WORKER = new URL('./walk-worker.js', import.meta.url);

let early: Worker | undefined;

/** Workers that have ended (failed to start, or exited): no message nor exit will come from them again. */
const ended = new WeakSet<Worker>();

/** Whether `worker` has ended. */
export function hasEnded(worker: Worker): boolean {
  return ended.has(worker);
}

/** Starts the worker now, for a walk to come (once). */
export function startWalkThread(): void {
  early ??= spawnWalkThread(WORKER);
}

/** The worker started early, if any (once), else a new one from `url` (tests name the built one). */
export function takeWalkThread(url: URL = WORKER): Worker | undefined {
  const worker = early ?? spawnWalkThread(url);
  early = undefined;
  return worker;
}

/** A worker from `url`, or undefined when none can be started; it does not hold the process open. */
function spawnWalkThread(url: URL): Worker | undefined {
  try {
    const worker = new Worker(url);
    worker.unref();
    // A worker that fails to start is not an error of the verify: the main thread walks alone.
    worker.on('error', () => ended.add(worker));
    worker.on('exit', () => ended.add(worker));
    return worker;
  } catch {
    return undefined;
  }
}
