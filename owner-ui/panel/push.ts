/**
 * Web Push settings (contract 13.2): "Notify this device" subscribes this browser with the daemon's VAPID
 * key (`GET /owner/push-key`) and hands the subscription over the owner socket (`push_subscribe`); the list
 * says which devices get notifications ("This device and 2 others get notifications") with a Remove button
 * each (`push_unsubscribe`; removing this device also ends its browser subscription). It lives in the
 * footer, below every card, so nothing it shows can move a card.
 */
import type { ServerMessage } from '../../common/owner-messages.js';
import { byId, el, setText } from '../dom.js';
import { time } from './when.js';

type Device = Extract<ServerMessage, { type: 'push_devices' }>['devices'][number];
type Reply = Extract<ServerMessage, { type: 'reply' }>;

const PREFIX = 'push';
const SUBSCRIBE_TIMEOUT_MS = 10_000;

/** A device's name from its browser's User-Agent: enough to tell a phone from a laptop. */
function deviceName(ua: string | undefined): string {
  if (ua === undefined) return 'A browser';
  const os = /Android|iPhone|iPad|Windows|Mac OS X|Linux/.exec(ua)?.[0]?.replace('Mac OS X', 'macOS');
  const browser = /(Edg|Firefox|Chrome|Safari)\//.exec(ua)?.[1]?.replace('Edg', 'Edge');
  return [browser, os && `on ${os}`].filter(Boolean).join(' ') || ua.slice(0, 40);
}

export class PushSettings {
  readonly #status = byId('devices-status');
  readonly #list = byId('devices-list');
  readonly #button = byId<HTMLButtonElement>('push-subscribe');
  readonly #worker: Promise<ServiceWorkerRegistration | undefined>;
  readonly #send: (frame: Record<string, unknown>) => boolean;
  #next = 1;
  #mine: string | undefined;
  #devices: Device[] = [];

  /** `send(frame)`: over the owner socket; false when not connected. */
  constructor(
    worker: Promise<ServiceWorkerRegistration | undefined>,
    send: (frame: Record<string, unknown>) => boolean,
  ) {
    this.#worker = worker;
    this.#send = send;
    this.#button.addEventListener('click', () => void this.#enable());
    this.#list.addEventListener('click', (e) => {
      const b = (e.target as HTMLElement).closest<HTMLButtonElement>('button[data-push-remove]');
      if (b !== null) void this.#remove(b.dataset.pushRemove ?? '');
    });
    void worker.then(async (reg) => {
      this.#mine = (await reg?.pushManager?.getSubscription())?.endpoint;
      this.#render();
    });
  }

  #request(frame: Record<string, unknown>): boolean {
    return this.#send({ ...frame, req_id: `${PREFIX}${this.#next++}` });
  }

  /** Asks the daemon for this owner's devices (after each connect). */
  refresh(): void {
    this.#request({ type: 'push_list' });
  }

  /** The answer to `push_list`. */
  devices(devices: Device[]): void {
    this.#devices = devices;
    this.#render();
  }

  /** A reply to one of our frames: true when it was ours. */
  reply(m: Reply): boolean {
    if (m.req_id === null || !m.req_id.startsWith(PREFIX)) return false;
    if (!m.ok) setText(this.#status, `Could not change your devices: ${m.error.code}: ${m.error.message}`);
    this.refresh();
    return true;
  }

  #render(): void {
    const mine = this.#devices.some((d) => d.endpoint === this.#mine);
    const others = this.#devices.length - (mine ? 1 : 0);
    const n = (k: number, one: string, many: string) => (k === 1 ? one : many.replace('#', String(k)));
    setText(
      this.#status,
      mine
        ? others === 0
          ? 'This device gets notifications.'
          : `This device and ${n(others, '1 other', '# others')} get notifications.`
        : this.#devices.length === 0
          ? 'No device gets notifications yet.'
          : `${n(others, '1 device gets', '# devices get')} notifications (not this one).`,
    );
    this.#list.replaceChildren(
      ...this.#devices.map((d) =>
        el(
          'li',
          { class: 'device' },
          el(
            'span',
            { class: 'device-name' },
            d.endpoint === this.#mine ? 'This device' : deviceName(d.user_agent),
          ),
          ` · since ${time(d.created_at)} · via ${new URL(d.endpoint).host} `,
          el(
            'button',
            { type: 'button', class: 'quiet', 'data-push-remove': d.endpoint },
            d.endpoint === this.#mine ? 'Remove this device' : 'Remove',
          ),
        ),
      ),
    );
    this.#button.hidden = mine;
  }

  async #enable(): Promise<void> {
    const reg = await this.#worker;
    if (reg === undefined || !('PushManager' in window) || !('Notification' in window)) {
      setText(
        this.#status,
        'This browser cannot get push notifications here: it needs HTTPS (public_url) or localhost, and on an iPhone the panel added to the home screen.',
      );
      return;
    }
    if ((await Notification.requestPermission()) !== 'granted') {
      setText(
        this.#status,
        'Notifications are blocked for this site: allow them in the browser’s settings first.',
      );
      return;
    }
    setText(this.#status, 'Subscribing this device…');
    try {
      const r = await fetch('/owner/push-key', { cache: 'no-store' });
      const { public_key } = (await r.json()) as { public_key: string };
      // A browser whose push service cannot be reached may never answer (headless Chromium): give up then.
      const sub = await Promise.race([
        reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: public_key }),
        new Promise<never>((_, reject) =>
          window.setTimeout(() => reject(new Error('no answer within 10 s')), SUBSCRIBE_TIMEOUT_MS),
        ),
      ]);
      this.#mine = sub.endpoint;
      if (!this.#request({ type: 'push_subscribe', subscription: sub.toJSON() }))
        setText(this.#status, 'Not connected: wait for the panel to reconnect, then try again.');
    } catch (e) {
      setText(this.#status, `This browser’s push service refused the subscription: ${(e as Error).message}`);
    }
  }

  async #remove(endpoint: string): Promise<void> {
    if (endpoint === this.#mine) {
      const reg = await this.#worker;
      await (await reg?.pushManager?.getSubscription())?.unsubscribe().catch(() => false);
      this.#mine = undefined;
    }
    if (!this.#request({ type: 'push_unsubscribe', endpoint }))
      setText(this.#status, 'Not connected: wait for the panel to reconnect, then try again.');
  }
}
