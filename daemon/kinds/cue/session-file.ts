/**
 * The one-time protected session file (contracts.md 4): its path is fixed when the cue is queued and
 * shown to the owner; it is created only on approval, exclusively (`O_CREAT|O_EXCL|O_NOFOLLOW`, 0600) in
 * `run/` (0700), consumed and unlinked by the bridge client, removed by the daemon if left, and any
 * leftovers are swept at start (a daemon killed between writing and cleanup leaves one behind).
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { SessionFile } from '../../../common/ogf-bridge.js';
import { writePrivateFileExclusive } from '../../datadir/index.js';

const NAME_RE = /^cue-[A-Za-z0-9_-]{16,64}\.json$/;

/** A fresh path `<run>/cue-<random>.json`; nothing is created. */
export function newSessionFilePath(runDir: string): string {
  return join(runDir, `cue-${randomBytes(16).toString('base64url')}.json`);
}

/** Creates the file exclusively with mode 0600; throws if anything is already at that path. */
export function writeSessionFile(path: string, content: SessionFile): void {
  writePrivateFileExclusive(path, `${JSON.stringify(content)}\n`);
}

/** Removes the file if it is still there; returns true when it was (the client did not consume it). */
export function removeSessionFile(path: string): boolean {
  try {
    unlinkSync(path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
}

/** Deletes every leftover session file in `run/`; returns how many. */
export function sweepRunDir(runDir: string): number {
  let n = 0;
  for (const name of readdirSync(runDir)) {
    if (NAME_RE.test(name) || /^cue-.*\.json(\.tmp)?$/.test(name)) {
      if (removeSessionFile(join(runDir, name))) n++;
    }
  }
  return n;
}
