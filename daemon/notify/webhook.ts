/**
 * A webhook channel (contract 13.1): POSTs the message in its format to `url`, or to the URL held by the
 * variable `url_from_env`, with the headers `headers_from_env` names. Both are read when sending, so a
 * rotated secret needs no restart, and never logged: a failure is its HTTP status or an error code.
 *
 * No redirects: fetch would carry the headers (tokens from headers_from_env) to wherever one points; a 3xx is
 * a refusal. The body of the answer is not read.
 */
import type { WebhookChannelConfig } from '../config/index.js';
import { ATTEMPT_TIMEOUT_MS, type Attempt, errorCode } from './attempt.js';
import { webhookBody } from './formats.js';
import type { Message } from './message.js';

/** The URL and extra headers from the environment, or the name of what is missing. */
export function webhookTarget(
  c: WebhookChannelConfig,
  env: NodeJS.ProcessEnv,
): { ok: true; url: string; headers: Record<string, string> } | { ok: false; missing: string } {
  const url = c.url ?? env[c.url_from_env ?? ''];
  if (url === undefined || url === '') return { ok: false, missing: c.url_from_env ?? 'url' };
  const headers: Record<string, string> = {};
  for (const [name, variable] of Object.entries(c.headers_from_env ?? {})) {
    const value = env[variable];
    if (value === undefined || value === '') return { ok: false, missing: variable };
    headers[name] = value;
  }
  return { ok: true, url, headers };
}

/** Sends one message; resolves with the attempt's outcome (never rejects). */
export async function sendWebhook(
  c: WebhookChannelConfig,
  m: Message,
  env: NodeJS.ProcessEnv,
  signal?: AbortSignal,
): Promise<Attempt> {
  const target = webhookTarget(c, env);
  if (!target.ok) return { ok: false, retry: false, error: 'env_missing' };
  const { headers, body } = webhookBody(c.format, m);
  const timeout = AbortSignal.timeout(ATTEMPT_TIMEOUT_MS);
  try {
    const res = await fetch(target.url, {
      method: 'POST',
      headers: { ...headers, ...target.headers, 'User-Agent': 'ogf-broker' },
      body,
      redirect: 'manual',
      signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]),
    });
    // The answer's body is not ours to read; letting go of it frees the connection.
    await res.body?.cancel().catch(() => {});
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
    return { ok: false, retry: res.status >= 500, status: res.status };
  } catch (e) {
    return { ok: false, retry: true, error: errorCode(e) };
  }
}
