/**
 * What a notification says (contract 13.1), built once per channel from a committed command: a title
 * (`<client> asks: <command>`), a summary (the View's summary line with every argument value left out
 * unless the channel has `include_args`), the expiry, and the link to its card (`<base>/#<pending_id>`).
 * The formats (formats.ts, email.ts, push.ts) only lay these fields out, so no format can add what a
 * message must never hold: a token, a cookie, a session UUID (the stored command holds none: rule 4), or
 * an argument without `include_args`. The AI's justification is never sent: it is AI text, not the request.
 */
import { escapeForTerminal } from '../base/index.js';
import type { Command, KindPolicies } from '../core/index.js';
import type { Held } from './digest.js';

export type MessageEvent = 'waiting' | 'decided' | 'failed' | 'checkpoint' | 'config' | 'digest' | 'test';

export interface Message {
  event: MessageEvent;
  title: string;
  summary: string;
  /** The card (or the panel) this message is about. */
  url: string;
  /** The review deadline, for `waiting`. */
  expires?: string;
  /** The command's id, when it is about one (push notifications replace each other by it). */
  pendingId?: string;
  /** The `json` format's body (contract 13.1). */
  json: Record<string, unknown>;
  /** ntfy's Priority header: 4 for waiting. */
  priority: number;
  /** ntfy's Tags header (emoji short codes). */
  tags: string[];
  /**
   * Contract 19 (v4): the one-time Approve and Deny URLs of a `waiting` message on a channel with
   * `actions` (daemon/actions/desk.ts); the only secret a message may carry.
   */
  actions?: { approve: string; deny: string };
}

/** Which change of a command a channel may hear of (contract 13.1 `events`). */
export type CommandEventName = 'waiting' | 'decided' | 'failed';

/**
 * The event a committed change is, if any: `waiting` when a command starts awaiting review (its first
 * version; a quorum approval keeps it waiting at a later one), `decided` when it is approved or denied
 * (each happens once), `failed` when it ends ERROR or UNKNOWN (before any reconciliation).
 */
export function eventOf(c: Command): CommandEventName | undefined {
  const p = c.phase;
  switch (p.state) {
    case 'awaiting_review':
      return c.version === 1 ? 'waiting' : undefined;
    case 'approved':
    case 'denied':
      return 'decided';
    case 'failed':
    case 'unknown':
      return p.reconciliations.length === 0 ? 'failed' : undefined;
    default:
      return undefined;
  }
}

/** Contract 20: what a waiting message adds for a command that came back. */
export const REBOUND_WORDS = 'the file changed since you approved';

/** Text a notification may show: every control and bidi character escaped (what `list` does, contract 5). */
const visible = (t: string) => escapeForTerminal(t);

/** The panel's base URL without a trailing slash. */
function trim(base: string): string {
  return base.replace(/\/+$/, '');
}

/** The link to a command's card (contract 13.1): opening it shows that card (owner-ui/deep-link.ts). */
export function cardUrl(base: string, id: string): string {
  return `${trim(base)}/#${encodeURIComponent(id)}`;
}

/** The message for a command's `event`; `includeArgs` is the channel's (contract 13.1). */
export function commandMessage(
  event: CommandEventName,
  c: Command,
  includeArgs: boolean,
  kinds: KindPolicies,
  base: string,
): Message {
  const kind = kinds.of(c.tool);
  const summary = visible(includeArgs ? kind.summary(c) : kind.bareSummary(c));
  const url = cardUrl(base, c.id);
  const client = visible(c.client);
  const command = visible(c.command);
  const json: Record<string, unknown> = {
    event,
    pending_id: c.id,
    client: c.client,
    command: c.command,
    summary,
    review_expires_at: c.review_expires_at,
    url,
  };
  const common = { event, summary, url, pendingId: c.id, json };
  if (event === 'waiting') {
    // Contract 20: back from a changed file — the owners are told why they are asked again.
    if (c.rebound_at !== undefined) {
      json.rebound_at = c.rebound_at;
      json.summary = `${summary} — ${REBOUND_WORDS}`;
    }
    return {
      ...common,
      ...(c.rebound_at === undefined ? {} : { summary: `${summary} — ${REBOUND_WORDS}` }),
      title: `${client} asks: ${command}`,
      expires: c.review_expires_at,
      priority: 4,
      tags: ['bell'],
    };
  }
  const p = c.phase;
  const by = 'decided_by' in p ? visible(p.decided_by) : undefined;
  if (event === 'decided') {
    const approved = p.state === 'approved';
    const reason = 'reason' in p ? p.reason : undefined;
    json.state = p.state;
    if (by !== undefined) json.decided_by = by;
    if (reason !== undefined) json.reason = reason;
    return {
      ...common,
      title: `${client}: ${command} ${approved ? 'approved' : 'denied'}`,
      summary: `${summary} — ${approved ? `approved by ${by}` : `denied (${reason ?? 'denied'})`}`,
      priority: 3,
      tags: [approved ? 'white_check_mark' : 'x'],
    };
  }
  const status = p.state === 'failed' ? 'ERROR' : 'UNKNOWN';
  const reason = 'reason' in p ? p.reason : status;
  json.state = p.state;
  json.reason = reason;
  return {
    ...common,
    title: `${client}: ${command} ended ${status}`,
    summary: `${summary} — ${reason}`,
    priority: 4,
    tags: ['warning'],
  };
}

/**
 * The digest of the 6th and later waiting commands of a window (contract 13.1): "7 more requests from local";
 * json carries the exact `count` and the `pending_ids` it covers.
 */
export function digestMessage(held: Readonly<Held>, base: string): Message {
  const byClient = held.byClient;
  const total = [...byClient.values()].reduce((a, b) => a + b, 0);
  const requests = total === 1 ? 'request' : 'requests';
  const clients = [...byClient.entries()];
  const from =
    clients.length === 1
      ? visible(clients[0]![0])
      : clients.map(([name, n]) => `${visible(name)} (${n})`).join(', ');
  const summary = `${total} more ${requests} from ${from}`;
  const url = `${trim(base)}/`;
  return {
    event: 'digest',
    title: `ogf-broker: ${total} more ${requests} waiting`,
    summary,
    url,
    json: {
      event: 'digest',
      count: total,
      pending_ids: [...held.ids],
      clients: Object.fromEntries(byClient),
      summary,
      url,
    },
    priority: 4,
    tags: ['bell'],
  };
}

/**
 * An event another part of the daemon publishes (contract 13.1 `checkpoint`: the audit record, 14; `config`:
 * the config weakened, 14 (v4)).
 */
export interface PublishedEvent {
  event: 'checkpoint' | 'config';
  title: string;
  summary: string;
  /** Extra `json` fields (plain values, never a secret). */
  fields?: Record<string, string | number | boolean | readonly string[]>;
}

export function publishedMessage(e: PublishedEvent, base: string): Message {
  const url = `${trim(base)}/`;
  const title = visible(e.title);
  const summary = visible(e.summary);
  return {
    event: e.event,
    title,
    summary,
    url,
    json: { ...e.fields, event: e.event, title, summary, url },
    // A weaker config is the owner's to notice at once; a checkpoint is for the record.
    priority: e.event === 'config' ? 4 : 2,
    tags: [e.event === 'config' ? 'warning' : 'lock'],
  };
}

/** `ogf-broker notify test` (contract 13.1). */
export function testMessage(channel: string, base: string): Message {
  const url = `${trim(base)}/`;
  const summary = `A test message from ogf-broker: the channel ${channel} works.`;
  return {
    event: 'test',
    title: 'ogf-broker test message',
    summary,
    url,
    json: { event: 'test', channel, summary, url },
    priority: 3,
    tags: ['test_tube'],
  };
}
