/**
 * Builds the owner panel (issue 37 item 6): four entries, each in its own folder under owner-ui/ — the panel
 * (panel/index.html), the login page (login/login.html), the OAuth consent page (consent/consent.html) and
 * the service worker (service-worker/sw.ts) — bundled into dist/owner-ui/, which daemon/owner/static.ts
 * serves. File names stay flat and stable (`/ui/app.js`, `/ui/login.js`, `/ui/consent.js`, `/sw.js`), the
 * static files of owner-ui/public/ are copied as they are (`/ui/styles.css`, the icons, the manifest), and
 * nothing is inlined: the pages' Content Security Policy allows scripts from the origin only.
 */
import { resolve } from 'node:path';
import { defineConfig } from 'vite';

const ui = resolve(import.meta.dirname, 'owner-ui');

/** A chunk's file name as static.ts accepts it: lower-case letters, digits and dashes. */
const flat = (name: string): string => name.toLowerCase().replace(/[^a-z0-9-]+/g, '-');

export default defineConfig({
  root: ui,
  base: '/ui/',
  publicDir: resolve(ui, 'public'),
  logLevel: 'warn',
  build: {
    outDir: resolve(import.meta.dirname, 'dist', 'owner-ui'),
    emptyOutDir: true,
    target: 'es2022',
    // No inline script and no preload polyfill: the CSP is `script-src 'self'`.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    rollupOptions: {
      input: {
        app: resolve(ui, 'panel', 'index.html'),
        login: resolve(ui, 'login', 'login.html'),
        consent: resolve(ui, 'consent', 'consent.html'),
        sw: resolve(ui, 'service-worker', 'sw.ts'),
      },
      output: {
        entryFileNames: (chunk) => `${flat(chunk.name)}.js`,
        chunkFileNames: (chunk) => `chunk-${flat(chunk.name)}.js`,
        assetFileNames: (asset) => flat(asset.names[0] ?? 'asset').replace(/-(css|svg|png)$/, '.$1'),
      },
    },
  },
});
