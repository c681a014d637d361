/**
 * The messages between the daemon and its launcher process (./spawner.ts, ./spawner-child.ts), sent over the
 * IPC channel with Node's `advanced` serialization (structured clone: output chunks travel as bytes).
 */

/** The daemon asks: run this program (never a shell), forwarding at most `limit` bytes of each stream. */
export type ToLauncher = {
  op: 'run';
  id: number;
  file: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd?: string;
  limit: number;
};

/** The launcher answers, per run: its pid or why it never started, its output, its end. */
export type FromLauncher =
  | { op: 'spawned'; id: number; pid: number }
  | { op: 'failed'; id: number; error: string }
  | { op: 'out'; id: number; fd: 1 | 2; data: Uint8Array }
  | { op: 'close'; id: number; code: number | null; signal: NodeJS.Signals | null; truncated: boolean };
