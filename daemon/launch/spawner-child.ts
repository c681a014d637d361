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
import { startProgram } from './program.js';
import type { FromLauncher, ToLauncher } from './spawner-protocol.js';

function say(m: FromLauncher): void {
  if (process.connected) process.send?.(m);
}

function run(m: Extract<ToLauncher, { op: 'run' }>): void {
  const more = { 1: false, 2: false };
  const sent = { 1: 0, 2: 0 };
  startProgram(m, {
    spawned: (pid) => say({ op: 'spawned', id: m.id, pid }),
    failed: (error) => say({ op: 'failed', id: m.id, error }),
    // Up to `limit` bytes of each stream, then only that more came (the daemon keeps as much: launcher.ts).
    out: (fd, chunk) => {
      const room = m.limit - sent[fd];
      const part = room <= 0 ? undefined : chunk.length > room ? chunk.subarray(0, room) : chunk;
      if (part === undefined || part.length < chunk.length) more[fd] = true;
      if (part === undefined) return;
      sent[fd] += part.length;
      say({ op: 'out', id: m.id, fd, data: part });
    },
    close: (code, signal) => say({ op: 'close', id: m.id, code, signal, truncated: more[1] || more[2] }),
  });
}

process.on('message', (m: ToLauncher) => {
  if (m.op === 'run') run(m);
});
// The daemon is gone (or closed the channel): nothing more will be asked.
process.on('disconnect', () => process.exit(0));
