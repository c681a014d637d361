/**
 * The configured channels (contract 13.1) as the notifier drives them: which events each hears, whether it
 * shows arguments, and how it sends one message (webhook.ts, email.ts).
 */
import type { NotifyChannelConfig, NotifyEventName } from '../config/index.js';
import type { Attempt } from './attempt.js';

/** Contract 19: the owner a channel's actions decide as when it names none (the first owner's name). */
export const FIRST_OWNER = 'owner';

import { sendEmail } from './email.js';
import type { Message } from './message.js';
import { sendWebhook } from './webhook.js';

export interface Channel {
  id: string;
  /** `webhook/<format>` or `email`: how `status` names it. */
  kind: string;
  events: ReadonlySet<NotifyEventName>;
  includeArgs: boolean;
  /** Contract 19 (v4): Approve and Deny in its `waiting` messages, decided as this owner. */
  actionsAs?: string;
  send(m: Message, signal?: AbortSignal): Promise<Attempt>;
}

export function channelOf(c: NotifyChannelConfig, env: NodeJS.ProcessEnv): Channel {
  const common = {
    id: c.id,
    events: new Set(c.events),
    includeArgs: c.include_args,
    ...(c.actions === true ? { actionsAs: c.owner ?? FIRST_OWNER } : {}),
  };
  if (c.type === 'webhook')
    return { ...common, kind: `webhook/${c.format}`, send: (m, signal) => sendWebhook(c, m, env, signal) };
  return { ...common, kind: 'email', send: (m, signal) => sendEmail(c, m, env, signal) };
}
