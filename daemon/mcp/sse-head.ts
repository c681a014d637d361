/**
 * A 2025 session's POST answered as an SSE stream sends its head with its first event, not alone. The SDK's
 * Node adapter (Hono's) flushes an SSE answer's head as soon as the stream exists, which for a tool call is
 * before the call has an answer: the head went out in one write and the event and the stream's end in a
 * second, a wake-up and a read more for the client each time (bench row 4: the two socket writes were ~6 %
 * of the daemon's CPU per submission). Held, Node sends the head with the first chunk in one write.
 *
 * A head is never held for long: when no event comes within HEAD_HOLD_MS (a call that waits for its owner),
 * the head goes out alone as before, so the client knows at once that its call was taken. A GET stream is
 * never held (it may carry nothing for minutes).
 */
import type { ServerResponse } from 'node:http';

/** Node's OutgoingMessage field: true once the head was written to the socket. */
type HeadWritten = ServerResponse & { _headerSent?: boolean };

/** How long a POST's SSE head may wait for the first event before it is sent alone. */
export const HEAD_HOLD_MS = 20;

/** Makes `res.flushHeaders()` wait up to `ms` for the first write, which then carries the head. */
export function holdHeadForFirstEvent(res: ServerResponse, ms = HEAD_HOLD_MS): void {
  const flush = res.flushHeaders.bind(res);
  res.flushHeaders = () => {
    // (`headersSent` is already true once writeHead stored the head; Node's own `_headerSent` tells whether
    // it was written.)
    const timer = setTimeout(() => {
      if (!(res as HeadWritten)._headerSent && !res.writableEnded && !res.destroyed) flush();
    }, ms);
    timer.unref();
    // A call answered at once ends its response before the hold: the timer goes with it, so the event loop
    // does not wake up for it (strace: ~0.8 wake-ups more per call while it did).
    res.once('close', () => clearTimeout(timer));
  };
}
