/**
 * What `mcp-stdio` reads from its client, with `__proto__` keys kept in sight (contract 3.1/3.3). Over HTTP the
 * body is parsed by us before the SDK sees it (json-body.ts); over stdio the SDK's transport parses each line
 * itself, and its request schema dropped an own `__proto__` key of a call's arguments before the relay could
 * see it: the call was queued as if the key were not there, where `/mcp` refuses it. This stream sits between
 * stdin and that transport and hands it the same bytes, line by line as its ReadBuffer cuts them, except that
 * a line holding such a key goes on with the key renamed in its text, every other byte as it came (json-body.ts
 * `protoKeysRenamed`).
 *
 * A line longer than `maxLine` (the SDK's own buffer limit, its STDIO_DEFAULT_MAX_BUFFER_SIZE: it refuses such
 * a line whatever it holds, and mcp-stdio's transport keeps that default) goes on as it comes, unread, so the
 * stream never holds more than the transport would.
 */
import { Transform } from 'node:stream';
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/server';
import { protoKeysRenamed } from './json-body.js';

const NEWLINE = 0x0a;

/** One line with its newline (and any `\r` before it), as it goes on to the transport. */
function lineOut(line: Buffer): Buffer {
  const text = line.toString('utf8');
  const body = text.replace(/\r?\n$/, '');
  const out = protoKeysRenamed(body);
  return out === body ? line : Buffer.from(`${out}\n`);
}

/** A stream of stdin's bytes to the SDK's stdio transport, `__proto__` keys renamed (above). */
export function protoKeysInSight(maxLine = STDIO_DEFAULT_MAX_BUFFER_SIZE): Transform {
  /** The start of a line whose newline has not come yet, in the chunks it came in (joined once, at its end). */
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  /** The line now coming is past maxLine: its bytes go on unread until its newline. */
  let unread = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      let start = 0;
      for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
        const piece = chunk.subarray(start, nl + 1);
        if (unread) this.push(piece);
        else this.push(lineOut(pending.length === 0 ? piece : Buffer.concat([...pending, piece])));
        pending = [];
        pendingBytes = 0;
        unread = false;
        start = nl + 1;
      }
      const rest = chunk.subarray(start);
      if (rest.length === 0) return done();
      if (unread) this.push(rest);
      else {
        pending.push(rest);
        pendingBytes += rest.length;
        if (pendingBytes > maxLine) {
          for (const p of pending) this.push(p);
          pending = [];
          pendingBytes = 0;
          unread = true;
        }
      }
      done();
    },
    flush(done) {
      // A last line without its newline: the transport never reads one; it goes on as it came.
      for (const p of pending) this.push(p);
      done();
    },
  });
}
