/**
 * The backup archive (contract 17): one file, a magic line, a JSON manifest line, then each member's bytes
 * in the manifest's order. Hand-written on purpose: no dependency, readable with `head -2`, streamed member
 * by member so a large broker.db is never held in memory. Each member carries its size and sha256: a
 * truncated or altered archive is refused before a restore keeps anything from it.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, openSync, readSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../base/index.js';

export const MAGIC = 'OGF-BROKER-BACKUP 1';

/** A member's name: a plain file name of the data dir, never a path (a restore writes nothing elsewhere). */
const MEMBER_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

export interface Member {
  name: string;
  size: number;
  sha256: string;
}

export interface Manifest {
  created_at: string;
  broker_version: string;
  /** `sqlite`: broker.db is a member; `postgres`: the database is not in the archive (pg_dump it). */
  database: 'sqlite' | 'postgres';
  members: Member[];
}

const CHUNK = 1 << 20;

function writeAll(fd: number, buf: Buffer): void {
  for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
}

function hashFile(path: string): Member['sha256'] {
  const h = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(CHUNK);
    for (;;) {
      const n = readSync(fd, buf, 0, CHUNK, null);
      if (n === 0) break;
      h.update(buf.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return h.digest('hex');
}

/**
 * Writes the archive `file` (0600, created exclusively: an existing file is refused) from `sources`
 * (member name → the file to copy). All or nothing: a failure removes the partial archive.
 */
export function writeArchive(
  file: string,
  meta: Omit<Manifest, 'members'>,
  sources: ReadonlyArray<{ name: string; path: string }>,
): Manifest {
  const members = sources.map(({ name, path }) => {
    if (!MEMBER_NAME.test(name))
      throw new Error(`backup: member name ${JSON.stringify(name)} is not a file name`);
    return { name, size: statSync(path).size, sha256: hashFile(path) };
  });
  const manifest: Manifest = { ...meta, members };
  let fd: number;
  try {
    fd = openSync(
      file,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST')
      throw new UsageError(`backup: ${file} exists already; name a new file`);
    throw e;
  }
  try {
    writeAll(fd, Buffer.from(`${MAGIC}\n${JSON.stringify(manifest)}\n`, 'utf8'));
    const buf = Buffer.alloc(CHUNK);
    sources.forEach(({ path }, i) => {
      const src = openSync(path, 'r');
      try {
        let left = members[i]!.size;
        while (left > 0) {
          const n = readSync(src, buf, 0, Math.min(CHUNK, left), null);
          if (n === 0) throw new Error(`backup: ${path} shrank while it was copied`);
          writeAll(fd, buf.subarray(0, n));
          left -= n;
        }
      } finally {
        closeSync(src);
      }
    });
  } catch (e) {
    closeSync(fd);
    rmSync(file, { force: true });
    throw e;
  }
  closeSync(fd);
  return manifest;
}

/** Reads and checks the archive's manifest; returns it and where the first member's bytes start. */
export function readManifest(file: string): { manifest: Manifest; dataStart: number } {
  const fd = openSync(file, 'r');
  let head: Buffer;
  try {
    const buf = Buffer.alloc(1 << 20);
    head = buf.subarray(0, readSync(fd, buf, 0, buf.length, 0));
  } finally {
    closeSync(fd);
  }
  const first = head.indexOf(10);
  const second = first < 0 ? -1 : head.indexOf(10, first + 1);
  if (first < 0 || head.subarray(0, first).toString('utf8') !== MAGIC || second < 0)
    throw new UsageError(`restore: ${file} is not an ogf-broker backup (its first line is not "${MAGIC}")`);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(head.subarray(first + 1, second).toString('utf8')) as Manifest;
  } catch {
    throw new UsageError(`restore: ${file}: its manifest line is not JSON`);
  }
  const names = new Set<string>();
  for (const m of manifest.members ?? []) {
    if (
      typeof m?.name !== 'string' ||
      !MEMBER_NAME.test(m.name) ||
      names.has(m.name) ||
      !Number.isSafeInteger(m.size) ||
      m.size < 0 ||
      typeof m.sha256 !== 'string'
    )
      throw new UsageError(`restore: ${file}: its manifest lists a member that is not valid`);
    names.add(m.name);
  }
  const total = second + 1 + manifest.members.reduce((s, m) => s + m.size, 0);
  if (statSync(file).size !== total)
    throw new UsageError(
      `restore: ${file} is truncated or has extra bytes (its manifest does not match its size)`,
    );
  return { manifest, dataStart: second + 1 };
}

/**
 * Writes each member of the archive into `dir` (each file 0600, created exclusively), checking its sha256;
 * on any failure removes every file it wrote and throws.
 */
export function extractArchive(file: string, dir: string): Manifest {
  const { manifest, dataStart } = readManifest(file);
  const written: string[] = [];
  const src = openSync(file, 'r');
  try {
    let pos = dataStart;
    const buf = Buffer.alloc(CHUNK);
    for (const m of manifest.members) {
      const path = join(dir, m.name);
      const out = openSync(
        path,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o600,
      );
      written.push(path);
      const h = createHash('sha256');
      try {
        for (let left = m.size; left > 0; ) {
          const n = readSync(src, buf, 0, Math.min(CHUNK, left), pos);
          if (n === 0) throw new UsageError(`restore: ${file} ends inside member ${m.name}`);
          h.update(buf.subarray(0, n));
          writeAll(out, buf.subarray(0, n));
          pos += n;
          left -= n;
        }
      } finally {
        closeSync(out);
      }
      if (h.digest('hex') !== m.sha256)
        throw new UsageError(
          `restore: member ${m.name} of ${file} does not match its sha256: the archive is damaged`,
        );
    }
  } catch (e) {
    for (const p of written) rmSync(p, { force: true });
    throw e;
  } finally {
    closeSync(src);
  }
  return manifest;
}
