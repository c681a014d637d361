/**
 * The configured channels (contract 13.1) as the notifier drives them: which events each hears, whether it
 * shows arguments, and how it sends one message (webhook.ts, email.ts).
 */
import type { NotifyChannelConfig, NotifyEventName } from '../config/index.js';
import type { Attempt } from './attempt.js';
import { sendEmail } from './email.js';
import type { Message } from './message.js';
import { sendWebhook } from './webhook.js';

export interface Channel {
  id: string;
  /** `webhook/<format>` or `email`: how `status` names it. */
  kind: string;
  events: ReadonlySet<NotifyEventName>;
  includeArgs: boolean;
  send(m: Message, signal?: AbortSignal): Promise<Attempt>;
}

export function channelOf(c: NotifyChannelConfig, env: NodeJS.ProcessEnv): Channel {
  const common = { id: c.id, events: new Set(c.events), includeArgs: c.include_args };
  if (c.type === 'webhook')
    return { ...common, kind: `webhook/${c.format}`, send: (m, signal) => sendWebhook(c, m, env, signal) };
  return { ...common, kind: 'email', send: (m, signal) => sendEmail(c, m, env, signal) };
}
