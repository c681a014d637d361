/**
 * The launcher process (./spawner.ts says why it exists): a small Node process the daemon starts once, which
 * spawns each approved program for it and reports back over the IPC channel — `spawned` (pid) or `failed`
 * (no pid: nothing ran), the output as it comes (`out`, at most `limit` bytes a stream, then only counted as
 * more), and `close` once the program and its pipes ended. Forking here costs this small process a
 * millisecond; forking in the daemon blocked its event loop for several and left its memory copy-on-write.
 *
 * It starts nothing on its own and reads nothing but the daemon's messages: it has no port, no file, and its
 * channel is a socketpair only the daemon holds. It runs with the owner's umask (the daemon starts it inside
 * `withOwnerUmask`), which every program it starts inherits (contract 1.1 (v4)). When the daemon goes, the
 * channel closes and this process exits; the programs it started run on in their own process groups, as
 * they did when the daemon spawned them itself (the next daemon settles their commands: rule 3).
 */
import { spawn } from 'node:child_process';
import type { FromLauncher, ToLauncher } from './spawner-protocol.js';

function say(m: FromLauncher): void {
  if (process.connected) process.send?.(m);
}

function errorText(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  return `${err.code ?? 'Error'}: ${err.message}`;
}

/** Forwards up to `limit` bytes of one stream, then only says that more came. */
function forward(id: number, fd: 1 | 2, limit: number, stream: NodeJS.ReadableStream): () => boolean {
  let sent = 0;
  let more = false;
  stream.on('data', (chunk: Buffer) => {
    const room = limit - sent;
    if (room <= 0) {
      more = true;
      return;
    }
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (part.length < chunk.length) more = true;
    sent += part.length;
    say({ op: 'out', id, fd, data: part });
  });
  return () => more;
}

function run(m: Extract<ToLauncher, { op: 'run' }>): void {
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(m.file, m.args, {
      env: m.env,
      ...(m.cwd === undefined ? {} : { cwd: m.cwd }),
      shell: false,
      // Its own process group, so the daemon's deadline (a signal to -pid) reaches grandchildren too.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
  } catch (e) {
    say({ op: 'failed', id: m.id, error: errorText(e) });
    return;
  }
  // A spawn that fails (EMFILE, EAGAIN, ENOENT, EACCES) says so on the next tick; without a pid nothing ran.
  child.on('error', (e) => {
    if (child.pid === undefined) say({ op: 'failed', id: m.id, error: errorText(e) });
  });
  if (!child.stdout || !child.stderr) return;
  const outMore = forward(m.id, 1, m.limit, child.stdout);
  const errMore = forward(m.id, 2, m.limit, child.stderr);
  child.once('spawn', () => say({ op: 'spawned', id: m.id, pid: child.pid! }));
  // 'close' waits for the pipes too, so all output was forwarded before it.
  child.once('close', (code, signal) =>
    say({ op: 'close', id: m.id, code, signal, truncated: outMore() || errMore() }),
  );
}

process.on('message', (m: ToLauncher) => {
  if (m.op === 'run') run(m);
});
// The daemon is gone (or closed the channel): nothing more will be asked.
process.on('disconnect', () => process.exit(0));
