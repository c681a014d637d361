/**
 * Web Push (contracts.md 13.2): the owners' devices and how a message reaches them. Each `waiting` message
 * (and each digest) goes to every subscription of every owner, encrypted for that browser (RFC 8291,
 * aes128gcm) and signed with the daemon's VAPID key (RFC 8292) — both by the `web-push` library, whose
 * request we send ourselves with fetch, because its own sender speaks https only and a push relay on
 * loopback (how tests play the push service) is http. The payload follows the redaction of 13.1: the title,
 * the summary without arguments, and the card's path (`/#<pending_id>`), which the service worker opens on
 * its own origin (owner-ui/service-worker/sw.ts). A push service answering 404 or 410 has forgotten the subscription: it
 * is removed. Subscriptions live in the store and survive restarts; every change is audited.
 */
import type webpush from 'web-push';
import type { Logger } from '../base/index.js';
import type { AuditAction, PushStore, PushSubscriptionRecord } from '../core/index.js';
import { ATTEMPT_TIMEOUT_MS, type Attempt, errorCode } from './attempt.js';
import { webPush } from './libraries.js';
import type { Message } from './message.js';
import type { ExtraRecipients, WithActions } from './notifier.js';
import type { Job } from './queue.js';
import type { VapidKeys } from './vapid.js';

/** What the panel lists of a device (contract 13.2: "This device and 2 others get notifications"). */
export interface PushDevice {
  endpoint: string;
  created_at: string;
  user_agent?: string;
}

/** A subscription as the browser gives it (PushSubscription.toJSON()), already checked at the edge. */
export interface PushSubscriptionJson {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export interface PushOptions {
  store: PushStore;
  keys: VapidKeys;
  /** The VAPID `sub` claim: public_url, or a mailto: address. */
  subject: string;
  log: Logger;
  now?: () => number;
}

const DAY_S = 86_400;

/** An action's path (`/act/<token>`): the worker resolves it on the origin the device subscribed on. */
function actionPath(url: string): string {
  return new URL(url).pathname;
}

export class PushDevices implements ExtraRecipients {
  readonly #o: PushOptions;
  readonly #now: () => number;
  readonly #subs = new Map<string, PushSubscriptionRecord>();

  constructor(o: PushOptions) {
    this.#o = o;
    this.#now = o.now ?? Date.now;
  }

  /** Reads the stored subscriptions (at start). */
  async load(): Promise<void> {
    for (const s of await this.#o.store.all()) this.#subs.set(s.endpoint, s);
  }

  /** The VAPID public key the panel subscribes with (`GET /owner/push-key`). */
  get publicKey(): string {
    return this.#o.keys.publicKey;
  }

  /** How many devices get notifications, all owners together. */
  get size(): number {
    return this.#subs.size;
  }

  /** `owner`'s device: added, or an endpoint already known handed to this owner with these keys. */
  async subscribe(owner: string, sub: PushSubscriptionJson, userAgent?: string): Promise<void> {
    const record: PushSubscriptionRecord = {
      endpoint: sub.endpoint,
      keys: { p256dh: sub.keys.p256dh, auth: sub.keys.auth },
      owner,
      created_at: new Date(this.#now()).toISOString(),
    };
    if (userAgent !== undefined && userAgent !== '') record.user_agent = userAgent.slice(0, 200);
    await this.#o.store.put(record, this.#audit('push_subscribed', owner, sub.endpoint));
    this.#subs.set(record.endpoint, record);
  }

  /** Removes one of `owner`'s devices; false when `owner` has no such endpoint. */
  async unsubscribe(owner: string, endpoint: string): Promise<boolean> {
    const sub = this.#subs.get(endpoint);
    if (sub === undefined || sub.owner !== owner) return false;
    this.#subs.delete(endpoint);
    return this.#o.store.remove(endpoint, this.#audit('push_unsubscribed', owner, endpoint));
  }

  /** `owner`'s devices, oldest first. */
  list(owner: string): PushDevice[] {
    return [...this.#subs.values()]
      .filter((s) => s.owner === owner)
      .map((s) => ({
        endpoint: s.endpoint,
        created_at: s.created_at,
        ...(s.user_agent === undefined ? {} : { user_agent: s.user_agent }),
      }));
  }

  #audit(action: AuditAction, owner: string, endpoint: string, by: 'owner' | 'daemon' = 'owner') {
    return {
      at: new Date(this.#now()).toISOString(),
      actor:
        by === 'owner'
          ? { kind: 'owner' as const, name: owner }
          : { kind: 'daemon' as const, name: 'daemon' },
      action,
      // The push service's origin only: the endpoint's path is a capability to push to this device.
      detail: { owner, push_service: new URL(endpoint).origin },
    };
  }

  /**
   * One job per device (every owner's), each sending the message built when its turn comes; with
   * `withActions` (contract 19), each device's copy carries Approve and Deny of the owner who subscribed it,
   * minted once for that device.
   */
  jobs(event: string, build: () => Message, withActions?: WithActions): Job[] {
    let message: Message | undefined;
    const once = () => {
      message ??= build();
      return message;
    };
    return [...this.#subs.values()].map((sub) => {
      let mine: Promise<Message> | undefined;
      const copy = () => {
        mine ??= withActions!(once(), sub.owner, 'push');
        return mine;
      };
      return {
        channel: 'push',
        event,
        send: async (signal) => this.#send(sub, withActions === undefined ? once() : await copy(), signal),
      };
    });
  }

  async #send(sub: PushSubscriptionRecord, m: Message, signal: AbortSignal): Promise<Attempt> {
    if (this.#subs.get(sub.endpoint) !== sub) return { ok: true, status: 0 };
    const payload = JSON.stringify({
      title: m.title,
      body: m.summary,
      url: m.pendingId === undefined ? '/' : `/#${encodeURIComponent(m.pendingId)}`,
      tag: m.pendingId ?? `ogf-${m.event}`,
      // Contract 19 (v4): the service worker POSTs the chosen one on its own origin (owner-ui/service-worker).
      ...(m.actions === undefined
        ? {}
        : { actions: { approve: actionPath(m.actions.approve), deny: actionPath(m.actions.deny) } }),
    });
    const left = m.expires === undefined ? 3600 : Math.floor((Date.parse(m.expires) - this.#now()) / 1000);
    let details: ReturnType<typeof webpush.generateRequestDetails>;
    try {
      details = (await webPush()).generateRequestDetails(
        { endpoint: sub.endpoint, keys: sub.keys },
        payload,
        {
          vapidDetails: {
            subject: this.#o.subject,
            publicKey: this.#o.keys.publicKey,
            privateKey: this.#o.keys.privateKey,
          },
          TTL: Math.max(60, Math.min(DAY_S, left)),
          contentEncoding: 'aes128gcm',
          urgency: 'high',
        },
      );
    } catch (e) {
      return { ok: false, retry: false, error: errorCode(e) };
    }
    try {
      const res = await fetch(details.endpoint, {
        method: details.method,
        headers: details.headers as Record<string, string>,
        body: new Uint8Array(details.body as Buffer),
        redirect: 'manual',
        signal: AbortSignal.any([signal, AbortSignal.timeout(ATTEMPT_TIMEOUT_MS)]),
      });
      await res.body?.cancel().catch(() => {});
      if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
      if (res.status === 404 || res.status === 410) await this.#expired(sub);
      return { ok: false, retry: res.status >= 500, status: res.status };
    } catch (e) {
      return { ok: false, retry: true, error: errorCode(e) };
    }
  }

  /** The push service forgot this subscription (404/410): so do we. */
  async #expired(sub: PushSubscriptionRecord): Promise<void> {
    if (this.#subs.get(sub.endpoint) !== sub) return;
    this.#subs.delete(sub.endpoint);
    try {
      await this.#o.store.remove(
        sub.endpoint,
        this.#audit('push_expired', sub.owner, sub.endpoint, 'daemon'),
      );
      this.#o.log.log('info', 'push_subscription_removed', {
        owner: sub.owner,
        push_service: new URL(sub.endpoint).origin,
      });
    } catch (e) {
      this.#o.log.log('error', 'push_subscription_not_removed', { error: (e as Error).message });
    }
  }
}
