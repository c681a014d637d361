/**
 * The panel as an installable app (contract 13.2): registers the service worker (`/sw.js`, owner-ui/sw.ts)
 * for the whole origin. The manifest is linked from the pages themselves. A browser without service
 * workers (or an http origin other than localhost) simply keeps the panel as a page.
 */

/** The registration, once the worker is registered (the push settings ask it for a subscription). */
export function registerWorker(): Promise<ServiceWorkerRegistration | undefined> {
  if (!('serviceWorker' in navigator)) return Promise.resolve(undefined);
  return navigator.serviceWorker.register('/sw.js', { scope: '/' }).then(
    (r) => r,
    () => undefined,
  );
}
