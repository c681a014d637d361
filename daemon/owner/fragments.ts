/**
 * One long owner message (a snapshot, a history: contract 5) written as UTF-8 fragments (RFC 6455 5.4)
 * straight from the pieces' text: each piece — a View's cached JSON (core/model/owner-view.ts), a comma, the
 * head and tail — is encoded once into the current fragment buffer, and a full buffer is handed to `emit`.
 *
 * Why not join the pieces into strings and let `ws` send those (what the hub did before): `ws` measures a
 * string with `Buffer.byteLength`, which flattens a joined string (a rope of thousands of pieces) into a
 * new multi-megabyte string, and then the socket encodes it to UTF-8 again. A profile of owner snapshots
 * of 10,001 Views (6.6 MiB) put most of the daemon's time per snapshot there (docs/performance.md,
 * "Snapshot and growth"). Encoding each piece once into a Buffer makes no large string, and `ws` sends a
 * Buffer without copying it (a server does not mask).
 *
 * The fragment buffers come from a FragmentPool and go back to it once the socket has written them (the
 * `done` callback of `emit`): fresh megabyte buffers for every snapshot were freed only when V8 next
 * collected, and left the daemon's malloc heap ~28 MiB larger after 25 snapshots.
 *
 * No fragment is larger than the pool's buffer size except one holding a single piece larger than that
 * (sent on its own), so memory, not V8's string limit, bounds a message (contract 5 v2: no frame size can
 * stop the daemon).
 */

/** About this many bytes of UTF-8 per fragment. */
export const FRAGMENT_BYTES = 1024 * 1024;
/** Buffers a pool keeps for reuse: enough for a snapshot of ~10,000 Views (6.6 MiB) at once. */
export const POOL_KEEP = 8;

/** The most UTF-8 bytes one UTF-16 code unit can become (a surrogate pair: 4 bytes for 2 units). */
const MAX_BYTES_PER_UNIT = 3;
const COMMA = 0x2c;

/** Fragment buffers of one size, reused once the socket is done with them; at most `keep` are kept. */
export class FragmentPool {
  readonly size: number;
  readonly #keep: number;
  readonly #free: Buffer[] = [];

  constructor(size = FRAGMENT_BYTES, keep = POOL_KEEP) {
    this.size = size;
    this.#keep = keep;
  }

  take(): Buffer {
    return this.#free.pop() ?? Buffer.allocUnsafeSlow(this.size);
  }

  give(buf: Buffer): void {
    if (this.#free.length < this.#keep && buf.length === this.size && !this.#free.includes(buf))
      this.#free.push(buf);
  }

  /** Buffers waiting for reuse (tests). */
  get idle(): number {
    return this.#free.length;
  }
}

/**
 * Receives each fragment in order, `fin` true on the last one only. `done`, when given, must be called
 * once the bytes are no longer needed (written or dropped): their buffer is then reused.
 */
export type Emit = (bytes: Buffer, fin: boolean, done?: () => void) => void;

export class FragmentWriter {
  readonly #emit: Emit;
  readonly #pool: FragmentPool;
  #buf: Buffer;
  #used = 0;

  constructor(emit: Emit, pool: FragmentPool = new FragmentPool()) {
    this.#emit = emit;
    this.#pool = pool;
    this.#buf = pool.take();
  }

  /** Appends `text`, preceded by a comma when `comma` (the separator of a JSON array's items). */
  write(text: string, comma = false): void {
    const size = this.#pool.size;
    // Room for the worst case, so `buf.write` never cuts the text (it stops at the buffer's end).
    const most = text.length * MAX_BYTES_PER_UNIT + 1;
    if (this.#used + most > size) {
      if (comma) {
        if (this.#used + 1 > size) this.#flush();
        this.#buf[this.#used++] = COMMA;
        comma = false;
      }
      this.#flush();
      if (most > size) {
        this.#emit(Buffer.from(text, 'utf8'), false);
        return;
      }
    }
    if (comma) this.#buf[this.#used++] = COMMA;
    this.#used += this.#buf.write(text, this.#used, 'utf8');
  }

  /** Appends `text` and sends the last fragment. The writer is spent afterwards. */
  end(text: string): void {
    this.write(text);
    this.#send(true);
  }

  /** Sends what the buffer holds (if anything) as a non-final fragment. */
  #flush(): void {
    if (this.#used > 0) this.#send(false);
  }

  /**
   * Emits the buffer's bytes. When they fill little of it they are copied out and the buffer is kept: a
   * queued fragment holds its whole buffer, and `ws` counts only the fragment's bytes against the socket's
   * bound (fanout.ts MAX_BUFFERED_BYTES), so a short reply must not pin a megabyte.
   */
  #send(fin: boolean): void {
    const buf = this.#buf;
    const bytes = buf.subarray(0, this.#used);
    this.#used = 0;
    if (bytes.length * 4 < buf.length) {
      this.#emit(Buffer.from(bytes), fin);
      if (fin) this.#pool.give(buf);
      return;
    }
    let given = false;
    this.#emit(bytes, fin, () => {
      if (given) return;
      given = true;
      this.#pool.give(buf);
    });
    if (!fin) this.#buf = this.#pool.take();
  }
}
