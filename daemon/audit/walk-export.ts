/**
 * An export file as `audit verify --file` walks it (walk-threads.ts): read in parts of about a set size,
 * each cut at a line end and read into memory of its own, which the main thread walks or moves to the
 * worker — never the whole file in one buffer first: 31 MB of fresh memory cost ~95 ms of page faults on
 * the bench's VM before any line was walked (row 15), where parts of ~96 KiB reuse the same few pages.
 * A part is read again by its range when the worker took it and never handed it back.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** An export's bytes by positioned reads: a file's, or bytes already in memory. */
export interface ExportBytes {
  size: number;
  /** Reads into `into` from `at`: how many bytes (fewer only at the end). */
  read(into: Buffer, at: number): number;
  close(): void;
}

export function exportFile(path: string): ExportBytes {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    return {
      size,
      read: (into, at) => {
        let n = 0;
        while (n < into.length) {
          const got = readSync(fd, into, n, into.length - n, at + n);
          if (got === 0) break;
          n += got;
        }
        return n;
      },
      close: () => closeSync(fd),
    };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

export function exportInMemory(bytes: Buffer): ExportBytes {
  return { size: bytes.length, read: (into, at) => bytes.copy(into, 0, at, at + into.length), close() {} };
}

/** The parts of an export in order (next), each `[start, end)` kept to be read again (again). */
export class ExportParts {
  readonly #bytes: ExportBytes;
  readonly #size: number;
  readonly #ranges: Array<[number, number]> = [];
  #at = 0;

  constructor(bytes: ExportBytes, size: number) {
    this.#bytes = bytes;
    this.#size = size;
  }

  /** About how many parts the export makes (the worker is worth starting for many). */
  get estimate(): number {
    return Math.ceil(this.#bytes.size / this.#size);
  }

  /** The next part's bytes (whole lines, or the file's last bytes), in memory of its own; undefined at the end. */
  next(): Buffer | undefined {
    const start = this.#at;
    if (start >= this.#bytes.size) return undefined;
    for (let want = this.#size; ; want *= 2) {
      const into = Buffer.allocUnsafeSlow(Math.min(want, this.#bytes.size - start));
      const got = into.subarray(0, this.#bytes.read(into, start));
      // A part ends after its last newline, or at the end of the file (a line longer than `want`: read more).
      const end = start + got.length === this.#bytes.size ? got.length : got.lastIndexOf(0x0a) + 1;
      if (end === 0 && got.length > 0 && start + got.length < this.#bytes.size) continue;
      if (got.length === 0) return undefined; // the file shrank under us: the walk ends short, verify.ts reads it
      this.#ranges.push([start, start + end]);
      this.#at = start + end;
      return got.subarray(0, end);
    }
  }

  /** Part `i` read again. */
  again(i: number): Buffer {
    const [start, end] = this.#ranges[i]!;
    const into = Buffer.allocUnsafeSlow(end - start);
    return into.subarray(0, this.#bytes.read(into, start));
  }

  /**
   * The highest seq named by the checkpoint lines the export ends with (export.ts writes them after the
   * entries), 0 if none: what the walk may pin. Only a guess (read from the last 256 KiB): finish checks
   * every checkpoint the walk read.
   */
  lastCheckpointSeq(): number {
    const tailSize = Math.min(this.#bytes.size, 256 * 1024);
    const tail = Buffer.allocUnsafeSlow(tailSize);
    const bytes = tail.subarray(0, this.#bytes.read(tail, this.#bytes.size - tailSize));
    const suffix = '"type":"checkpoint"}';
    let last = 0;
    let end = bytes.length;
    if (bytes[end - 1] === 0x0a) end--;
    while (end > 0) {
      const start = bytes.lastIndexOf(0x0a, end - 1) + 1;
      const line = bytes.toString('utf8', start, end);
      if (!line.endsWith(suffix)) break;
      try {
        const seq = (JSON.parse(line) as { seq?: unknown }).seq;
        if (typeof seq === 'number' && seq > last) last = seq;
      } catch {
        break;
      }
      end = start - 1;
    }
    return last;
  }
}
