/**
 * One long owner message (a snapshot, a history: contract 5) written as UTF-8 fragments (RFC 6455 5.4)
 * straight from the pieces' text: each piece — a View's cached JSON (core/view.ts), a comma, the head and
 * tail — is encoded once into the current fragment buffer, and a full buffer is handed to `emit`.
 *
 * Why not join the pieces into strings and let `ws` send those (what the hub did before): `ws` measures a
 * string with `Buffer.byteLength`, which flattens a joined string (a rope of thousands of pieces) into a
 * new multi-megabyte string, and then the socket encodes it to UTF-8 again. A profile of owner snapshots
 * of 10,001 Views (6.6 MiB) put ~80 % of the daemon's time per snapshot there (docs/performance.md,
 * "Snapshot and growth"). Encoding each piece once into a Buffer makes no large string and no garbage
 * but the fragment buffers themselves, which `ws` sends without copying (a server does not mask).
 *
 * No fragment is larger than `size` bytes except one holding a single piece larger than that (sent on its
 * own), so memory, not V8's string limit, bounds a message (contract 5 v2: no frame size can stop the
 * daemon).
 */

/** About this many bytes of UTF-8 per fragment. */
export const FRAGMENT_BYTES = 1024 * 1024;

/** The most UTF-8 bytes one UTF-16 code unit can become (a surrogate pair: 4 bytes for 2 units). */
const MAX_BYTES_PER_UNIT = 3;
const COMMA = 0x2c;

export class FragmentWriter {
  readonly #emit: (bytes: Buffer, fin: boolean) => void;
  readonly #size: number;
  #buf: Buffer;
  #used = 0;

  /** `emit` is called with each fragment in order, `fin` true on the last one only. */
  constructor(emit: (bytes: Buffer, fin: boolean) => void, size = FRAGMENT_BYTES) {
    this.#emit = emit;
    this.#size = size;
    this.#buf = Buffer.allocUnsafe(size);
  }

  /** Appends `text`, preceded by a comma when `comma` (the separator of a JSON array's items). */
  write(text: string, comma = false): void {
    // Room for the worst case, so `buf.write` never cuts the text (it stops at the buffer's end).
    const most = text.length * MAX_BYTES_PER_UNIT + 1;
    if (this.#used + most > this.#size) {
      if (comma) {
        this.#room(1);
        this.#buf[this.#used++] = COMMA;
        comma = false;
      }
      this.#flush();
      if (most > this.#size) {
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

  #room(bytes: number): void {
    if (this.#used + bytes > this.#size) this.#flush();
  }

  /** Sends what the buffer holds (if anything) as a non-final fragment. */
  #flush(): void {
    if (this.#used > 0) this.#send(false);
  }

  /**
   * Emits the buffer's bytes. When they fill little of it they are copied to a buffer of their own and the
   * big one is reused: a queued fragment keeps its whole buffer alive, and `ws` counts only the fragment's
   * bytes against the socket's bound (hub.ts MAX_BUFFERED_BYTES), so a short reply must not pin a megabyte.
   */
  #send(fin: boolean): void {
    const bytes = this.#buf.subarray(0, this.#used);
    this.#used = 0;
    if (bytes.length * 4 < this.#size) {
      this.#emit(Buffer.from(bytes), fin);
      return;
    }
    this.#emit(bytes, fin);
    if (!fin) this.#buf = Buffer.allocUnsafe(this.#size);
  }
}
