/**
 * `fetch` for Streamable HTTP upstreams with a bound on what one message may weigh (architecture.md rule 5:
 * validate at every edge). The SDK reads a JSON answer whole (`response.json()`) and an SSE stream event by
 * event, with no limit: an upstream that answers `tools/call` with an endless body grew the daemon's memory
 * until it died (test/attack-upstream-body.test.ts). Here a JSON body, and each SSE event, may hold at most
 * `maxBytes`; past that the body errors, the SDK drops the stream, and the call ends `unknown` / `UpstreamError`
 * (contract 7: its answer could not be read, and it may have run).
 */
import type { FetchLike } from '@modelcontextprotocol/client';

const LF = 0x0a;

/** A TransformStream passing bytes through until one message exceeds `maxBytes`, then erroring. */
function limiter(maxBytes: number, perEvent: boolean, onRefused: (why: string) => void) {
  let size = 0;
  let lastLf = false;
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (perEvent) {
        // An SSE event ends at a blank line: two LFs in a row (CRLF CRLF has them too, a CR between).
        for (const byte of chunk) {
          if (byte === LF) {
            if (lastLf) size = 0;
            lastLf = true;
          } else if (byte !== 0x0d) {
            lastLf = false;
          }
          size++;
        }
      } else {
        size += chunk.byteLength;
      }
      if (size > maxBytes) {
        const why = `one message of more than ${maxBytes} bytes`;
        onRefused(why);
        controller.error(new Error(`the upstream sent ${why}`));
        return;
      }
      controller.enqueue(chunk);
    },
  });
}

/** `fetch` whose response bodies are bounded per message; `onRefused` is told (for the log) when one is cut. */
export function boundedFetch(
  maxBytes: number,
  onRefused: (why: string) => void,
  inner: FetchLike = fetch,
): FetchLike {
  return async (url, init) => {
    const res = await inner(url, init);
    if (res.body === null) return res;
    const sse = (res.headers.get('content-type') ?? '').includes('text/event-stream');
    const body = res.body.pipeThrough(limiter(maxBytes, sse, onRefused));
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
