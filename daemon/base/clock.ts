/** The world the broker reads time from; injected so tests use a fake clock instead of sleeps. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): { cancel(): void };
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    // Node caps timers at 2^31-1 ms; longer review deadlines re-arm on the way.
    const MAX = 2_147_483_647;
    let t: NodeJS.Timeout;
    const arm = (left: number) => {
      t = setTimeout(() => (left > MAX ? arm(left - MAX) : fn()), Math.min(left, MAX));
      t.unref?.();
    };
    arm(Math.max(0, ms));
    return { cancel: () => clearTimeout(t) };
  },
};

/** ISO-8601 UTC with milliseconds (rule 8). */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
