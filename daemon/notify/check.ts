/**
 * What `doctor` and `notify test` ask of the notify section (contract 13.1, 1.1): whether each channel's
 * variables are set and hold what they must (an http(s) URL, an smtp(s) URL), and a test message sent
 * through each channel once, accepted only on 2xx / SMTP 250. Nothing printed names a variable's value.
 */
import { isHttpUrl, isSmtpUrl, type NotifyChannelConfig } from '../config/index.js';
import type { Attempt } from './attempt.js';
import { channelOf } from './channels.js';
import { testMessage } from './message.js';

/** One line of doctor's report (commands/doctor-checks.ts Check). */
export interface ChannelCheck {
  name: string;
  ok: boolean;
  detail: string;
}

function variable(env: NodeJS.ProcessEnv, name: string, what: string, valid: (v: string) => boolean) {
  const v = env[name];
  if (v === undefined || v === '') return `${name} is not set (it must hold ${what})`;
  return valid(v) ? undefined : `${name} does not hold ${what}`;
}

/** Doctor: one check per channel — its variables set and valid (values never shown). */
export function checkChannels(
  channels: readonly NotifyChannelConfig[],
  env: NodeJS.ProcessEnv,
): ChannelCheck[] {
  return channels.map((c) => {
    const problems: string[] = [];
    let where: string;
    if (c.type === 'webhook') {
      if (c.url_from_env !== undefined) {
        const p = variable(env, c.url_from_env, 'an http:// or https:// URL', isHttpUrl);
        if (p !== undefined) problems.push(p);
        where = `${c.format} webhook, URL from ${c.url_from_env}`;
      } else where = `${c.format} webhook, URL in the config`;
      for (const [header, name] of Object.entries(c.headers_from_env ?? {})) {
        const p = variable(env, name, `the ${header} header's value`, () => true);
        if (p !== undefined) problems.push(p);
      }
    } else {
      const p = variable(env, c.smtp_url_from_env, 'an smtp:// or smtps:// URL', isSmtpUrl);
      if (p !== undefined) problems.push(p);
      where = `email to ${c.to.length} address${c.to.length === 1 ? '' : 'es'}, SMTP from ${c.smtp_url_from_env}`;
    }
    return problems.length === 0
      ? { name: `notify ${c.id}`, ok: true, detail: `${where}; events ${c.events.join(', ')}` }
      : { name: `notify ${c.id}`, ok: false, detail: problems.join('; ') };
  });
}

/** `notify test`: a test message through each channel, once; each channel's outcome, in order. */
export async function testChannels(
  channels: readonly NotifyChannelConfig[],
  env: NodeJS.ProcessEnv,
  base: string,
): Promise<Array<{ id: string; kind: string; attempt: Attempt }>> {
  return Promise.all(
    channels.map(async (c) => {
      const ch = channelOf(c, env);
      return { id: c.id, kind: ch.kind, attempt: await ch.send(testMessage(c.id, base)) };
    }),
  );
}
