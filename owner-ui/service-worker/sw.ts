/**
 * The panel's service worker (contract 13.2), served at `/sw.js` so its scope is the whole panel. It caches
 * the panel's own files only — `/ui/*` scripts, styles and icons and the manifest — network first, so a
 * phone with a weak link still opens the panel's shell; it never caches or even sees a command: `/`, the
 * login, `/owner/*` (the socket, the session probe, the push key) and `/mcp` go to the network untouched,
 * and a WebSocket never passes through a service worker at all.
 *
 * Web Push (contract 13.2): a `push` shows the notification the daemon encrypted for this device (title,
 * summary — never an argument — and the card's link); a click focuses an open panel on that card, or opens
 * one (`/#<pending_id>`, owner-ui/deep-link.ts).
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
  e.waitUntil(
    swScope.registration.showNotification(title, {
      body: typeof p.body === 'string' ? p.body : 'A request waits for you.',
      icon: '/ui/icon-192.png',
      tag: typeof p.tag === 'string' ? p.tag : 'ogf-broker',
      data: { url },
    }),
  );
});

swScope.addEventListener('notificationclick', (e) => {
  e.notification.close();
  const data = e.notification.data as { url?: unknown } | null;
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
