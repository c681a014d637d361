/**
 * One delivery attempt's outcome (contract 13.1): accepted (2xx, SMTP 250), or refused — retried on a
 * network error or a 5xx answer, given up otherwise. `status` is the HTTP status or SMTP reply code and
 * `error` a short code (`ECONNREFUSED`, `TimeoutError`, `env_missing`); neither ever holds a URL or a header
 * value, so both may be logged and shown by `status`.
 */
export type Attempt =
  | { ok: true; status: number }
  | { ok: false; retry: boolean; status?: number; error?: string };

/** How long one attempt may take (contract 13.1: "sent in the background within 5 s"). */
export const ATTEMPT_TIMEOUT_MS = 5000;

/** A short code for a failed send, never its message (which may quote a URL or an address). */
export function errorCode(e: unknown): string {
  const err = e as { name?: unknown; code?: unknown; cause?: { code?: unknown; name?: unknown } };
  for (const v of [err?.cause?.code, err?.code, err?.cause?.name, err?.name])
    if (typeof v === 'string' && /^[A-Za-z0-9_]{1,40}$/.test(v) && v !== 'Error' && v !== 'TypeError')
      return v;
  return 'network_error';
}
