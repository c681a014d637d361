/**
 * The requests in flight, for a clean stop (contract 17): once the daemon stops taking calls, a new request
 * is answered 503 and closed, and the stop waits (briefly) for the answers already on their way — an MCP call
 * that waited for a decision has just been answered with its command's current result (`PENDING` and its
 * `pending_id`), and its stream must carry that answer before the daemon closes it (issue 36 item 3: on Ctrl-C
 * a waiting call's stream ended with no result, and the SDK client hung until its own timeout).
 *
 * Only requests that end are counted: a GET (the standalone SSE stream, a page) may stay open for as long as
 * the client likes, and the stop closes those itself.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** How long a clean stop waits for the answers of the calls it just released to be written. */
export const STOP_ANSWERS_MS = 1_500;

export class Flight {
  #stopping = false;
  #open = 0;
  readonly #idle = new Set<() => void>();

  /** Whether the daemon has stopped taking calls. */
  get stopping(): boolean {
    return this.#stopping;
  }

  /** Counts `req` until its answer is finished or its connection closed. */
  track(req: IncomingMessage, res: ServerResponse): void {
    if (req.method === 'GET' || req.method === 'HEAD') return;
    this.#open++;
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      this.#open--;
      if (this.#open === 0) for (const f of [...this.#idle]) f();
    };
    res.once('finish', end);
    res.once('close', end);
  }

  /** Stops taking calls: every later request is refused (503). */
  stop(): void {
    this.#stopping = true;
  }

  /** Resolves once no counted request is open, or after `ms`, whichever is first. */
  idle(ms = STOP_ANSWERS_MS): Promise<void> {
    if (this.#open === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#idle.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#idle.add(done);
    });
  }
}
