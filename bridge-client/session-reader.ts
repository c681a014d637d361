/**
 * Reads the one-time session file (contract 4): opened with O_NOFOLLOW (a symlink fails with ELOOP),
 * refused unless it is a regular file owned by our uid with mode exactly 0600, read, then unlinked
 * before anything connects, so it can be used once only. A refused file is left where it is: it may not
 * be ours to delete, and the daemon removes what the client left (contract 4 step 5).
 */
import { closeSync, constants, fstatSync, openSync, readSync, unlinkSync } from 'node:fs';
import { type CheckedSessionFile, checkSessionFile } from './session-check.js';

/** Session files are a few hundred bytes; anything past this is not one of ours. */
const MAX_BYTES = 16 * 1024;

export type SessionRead =
  | { ok: true; file: CheckedSessionFile; consumed: true }
  | { ok: false; code: 'SessionFileRejected'; detail: string; consumed: boolean };

function rejected(detail: string, consumed = false): SessionRead {
  return { ok: false, code: 'SessionFileRejected', detail, consumed };
}

/** Why a stat is refused, or undefined when it is acceptable. */
export function refusal(
  st: { isFile(): boolean; uid: number; mode: number },
  uid: number,
): string | undefined {
  if (!st.isFile()) return 'the session file is not a regular file';
  if (st.uid !== uid) return `the session file belongs to uid ${st.uid}, not to this user (uid ${uid})`;
  const mode = st.mode & 0o7777;
  if (mode !== 0o600) return `the session file has mode ${mode.toString(8).padStart(4, '0')}, not 0600`;
  return undefined;
}

/** Opens, checks, reads and unlinks the session file at `path`. Never throws. */
export function readSessionFile(path: string): SessionRead {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO planted at the path must not hang the open; fstat then refuses it.
    fd = openSync(
      path,
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY,
    );
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return rejected('the session file is a symbolic link');
    if (code === 'ENOENT')
      return rejected('the session file does not exist (already used, or never written)');
    return rejected(`the session file cannot be opened (${code ?? 'error'})`);
  }
  let text: string;
  try {
    const st = fstatSync(fd);
    const uid = typeof process.getuid === 'function' ? process.getuid() : -1;
    const why = refusal(st, uid);
    if (why) return rejected(why);
    if (st.size > MAX_BYTES) return rejected(`the session file is larger than ${MAX_BYTES} bytes`);
    const buf = Buffer.alloc(MAX_BYTES + 1);
    let n = 0;
    for (;;) {
      const r = readSync(fd, buf, n, buf.length - n, null);
      if (r === 0) break;
      n += r;
      if (n > MAX_BYTES) return rejected(`the session file is larger than ${MAX_BYTES} bytes`);
    }
    text = buf.subarray(0, n).toString('utf8');
  } catch (e) {
    return rejected(`the session file cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  } finally {
    closeSync(fd);
  }
  // One-time: gone before we connect anywhere (contract 4).
  try {
    unlinkSync(path);
  } catch (e) {
    return rejected(`the session file cannot be removed (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return rejected('the session file is not valid JSON', true);
  }
  const checked = checkSessionFile(raw);
  if (!checked.ok) return rejected(`the session file is invalid: ${checked.message}`, true);
  return { ok: true, file: checked.value, consumed: true };
}
