/**
 * `notifications/progress` while a tool call waits (contract 3.1): every 5 s when the client gave a progress
 * token, so clients that reset their request timeout on progress keep waiting, and people see it is alive.
 */

export const PROGRESS_INTERVAL_MS = 5000;

export interface ProgressNotification {
  method: 'notifications/progress';
  params: { progressToken: string | number; progress: number; total?: number; message?: string };
}

/** What a waiting call needs: the client's token (if any) and a way to send a notification for this request. */
export interface ProgressSink {
  token: string | number | undefined;
  send(notification: ProgressNotification): Promise<void>;
}

/**
 * Starts the ticker; returns a function that stops it. `describe()` says what is being waited for now
 * (read at each tick, so the message follows the command's phase). Progress counts elapsed seconds and
 * `total` is the wait, both strictly increasing as the MCP spec asks.
 */
export function startProgress(
  sink: ProgressSink | undefined,
  totalSeconds: number,
  describe: () => string,
  intervalMs = PROGRESS_INTERVAL_MS,
): () => void {
  const token = sink?.token;
  if (sink === undefined || token === undefined) return () => {};
  const started = Date.now();
  let stopped = false;
  const timer = setInterval(() => {
    if (stopped) return;
    const elapsed = Math.round((Date.now() - started) / 100) / 10;
    sink
      .send({
        method: 'notifications/progress',
        params: {
          progressToken: token,
          progress: Math.min(elapsed, totalSeconds),
          total: totalSeconds,
          message: describe(),
        },
      })
      // A client that went away cannot be told anything; the wait itself ends on its own.
      .catch(() => {});
  }, intervalMs);
  timer.unref?.();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
