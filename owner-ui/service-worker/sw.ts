/**
 * The panel's service worker (contract 13.2), served at `/sw.js` so its scope is the whole panel. It caches
 * the panel's own files only — `/ui/*` scripts, styles and icons and the manifest — network first, so a
 * phone with a weak link still opens the panel's shell; it never caches or even sees a command: `/`, the
 * login, `/owner/*` (the socket, the session probe, the push key) and `/mcp` go to the network untouched,
 * and a WebSocket never passes through a service worker at all.
 *
 * Web Push (contract 13.2): a `push` shows the notification the daemon encrypted for this device (title,
 * summary — never an argument — and the card's link); a click focuses an open panel on that card, or opens
 * one (`/#<pending_id>`, owner-ui/deep-link.ts). With actions (contract 19 (v4)), the notification has
 * Approve and Deny buttons: a click POSTs that one-time URL and shows the result.
 *
 * A classic script (no import or export): module service workers are not yet everywhere.
 */

interface SwExtendableEvent extends Event {
  waitUntil(p: Promise<unknown>): void;
}
interface SwFetchEvent extends SwExtendableEvent {
  request: Request;
  respondWith(r: Promise<Response>): void;
}
interface SwPushEvent extends SwExtendableEvent {
  data: { json(): unknown } | null;
}
interface SwNotificationEvent extends SwExtendableEvent {
  notification: Notification;
  /** The id of the notification's action button clicked, or '' for the notification itself. */
  action: string;
}
interface SwClient {
  url: string;
  focus(): Promise<unknown>;
  navigate(url: string): Promise<unknown>;
}
interface SwScope {
  location: Location;
  addEventListener(type: 'install' | 'activate', f: (e: SwExtendableEvent) => void): void;
  addEventListener(type: 'fetch', f: (e: SwFetchEvent) => void): void;
  addEventListener(type: 'push', f: (e: SwPushEvent) => void): void;
  addEventListener(type: 'notificationclick', f: (e: SwNotificationEvent) => void): void;
  skipWaiting(): Promise<void>;
  clients: {
    claim(): Promise<void>;
    matchAll(o: { type: 'window'; includeUncontrolled: boolean }): Promise<SwClient[]>;
    openWindow(url: string): Promise<unknown>;
  };
  registration: { showNotification(title: string, options: NotificationOptions): Promise<void> };
}

const swScope = self as unknown as SwScope;
const SHELL_CACHE = 'ogf-panel-shell-v1';
/** The panel's own files: what the daemon's static.ts serves under /ui/, and the manifest. */
const SHELL_PATH = /^\/(?:ui\/[a-z0-9][a-z0-9-]*\.(?:js|css|svg|png)|manifest\.webmanifest)$/;

swScope.addEventListener('install', () => {
  void swScope.skipWaiting();
});

swScope.addEventListener('activate', (e) => {
  e.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== SHELL_CACHE).map((k) => caches.delete(k))))
      .then(() => swScope.clients.claim()),
  );
});

swScope.addEventListener('fetch', (e) => {
  const url = new URL(e.request.url);
  // Everything that is not the panel's own file goes to the network as if there were no worker.
  if (e.request.method !== 'GET' || url.origin !== swScope.location.origin || !SHELL_PATH.test(url.pathname))
    return;
  e.respondWith(
    fetch(e.request).then(
      (res) => {
        if (res.ok) {
          const copy = res.clone();
          void caches.open(SHELL_CACHE).then((c) => c.put(e.request, copy));
        }
        return res;
      },
      () => caches.match(e.request).then((hit) => hit ?? Response.error()),
    ),
  );
});

interface PushPayload {
  title?: unknown;
  body?: unknown;
  url?: unknown;
  tag?: unknown;
  /** Contract 19 (v4): the one-time action paths (`/act/<token>`), when this device's owner may decide. */
  actions?: unknown;
}

/** An action's path as the worker accepts it: a one-time action of its own origin, nothing else. */
const ACTION_PATH = /^\/act\/[A-Za-z0-9_-]{43}$/;

/** The approve and deny paths of a payload or a notification's data, when both are well formed. */
function actionPaths(v: unknown): { approve: string; deny: string } | undefined {
  const a = v as { approve?: unknown; deny?: unknown } | null | undefined;
  if (typeof a?.approve !== 'string' || typeof a.deny !== 'string') return undefined;
  if (!ACTION_PATH.test(a.approve) || !ACTION_PATH.test(a.deny)) return undefined;
  return { approve: a.approve, deny: a.deny };
}

/**
 * Waits for `work` when the event allows it. A click the test dispatches itself (test/browser-actions) is
 * not trusted, and waitUntil throws for it; the work runs all the same.
 */
function keepAlive(e: SwExtendableEvent, work: Promise<unknown>): void {
  try {
    e.waitUntil(work);
  } catch {
    // An untrusted event: nothing to extend.
  }
}

swScope.addEventListener('push', (e) => {
  let p: PushPayload = {};
  try {
    p = (e.data?.json() ?? {}) as PushPayload;
  } catch {
    p = {};
  }
  const title = typeof p.title === 'string' ? p.title : 'ogf-broker';
  const url = typeof p.url === 'string' && p.url.startsWith('/') ? p.url : '/';
  const actions = actionPaths(p.actions);
  const options: NotificationOptions & { actions?: Array<{ action: string; title: string }> } = {
    body: typeof p.body === 'string' ? p.body : 'A request waits for you.',
    icon: '/ui/icon-192.png',
    tag: typeof p.tag === 'string' ? p.tag : 'ogf-broker',
    data: { url, ...(actions === undefined ? {} : { actions }) },
  };
  if (actions !== undefined)
    options.actions = [
      { action: 'approve', title: 'Approve' },
      { action: 'deny', title: 'Deny' },
    ];
  e.waitUntil(swScope.registration.showNotification(title, options));
});

/**
 * Contract 19 (v4): an action button clicked. The worker POSTs its one-time URL itself (no cookie: the
 * token is the authority) and shows what happened in place of the request's notification.
 */
function decide(n: Notification, action: 'approve' | 'deny', path: string): Promise<unknown> {
  const done = action === 'approve' ? 'Approved' : 'Denied';
  const data = n.data as { url?: unknown } | null;
  return fetch(path, { method: 'POST', credentials: 'omit', cache: 'no-store' })
    .then((res) => res.status)
    .catch(() => 0)
    .then((status) =>
      swScope.registration.showNotification(
        status === 200 ? `${done}: ${n.title}` : `Not decided: ${n.title}`,
        {
          body:
            status === 200
              ? `${done} from this notification.`
              : 'This action no longer applies (used, expired or the request changed). Open the panel to decide.',
          icon: '/ui/icon-192.png',
          tag: n.tag,
          data: { url: typeof data?.url === 'string' ? data.url : '/', result: status },
        },
      ),
    );
}

swScope.addEventListener('notificationclick', (e) => {
  e.notification.close();
  const data = e.notification.data as { url?: unknown; actions?: unknown } | null;
  const actions = actionPaths(data?.actions);
  if (actions !== undefined && (e.action === 'approve' || e.action === 'deny')) {
    keepAlive(e, decide(e.notification, e.action, actions[e.action]));
    return;
  }
  const path = typeof data?.url === 'string' && data.url.startsWith('/') ? data.url : '/';
  const target = new URL(path, swScope.location.origin).href;
  e.waitUntil(
    swScope.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((open) => {
      const panel = open.find((c) => new URL(c.url).origin === swScope.location.origin);
      if (panel === undefined) return swScope.clients.openWindow(target);
      return panel.navigate(target).then(() => panel.focus());
    }),
  );
});
