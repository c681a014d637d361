// Puts the browser side next to the daemon in dist/: the static assets (HTML, CSS, SVG, ...) from the
// source folders, and the scripts tsc -p tsconfig.ui.json compiled into dist/.ui/. The browser build has
// its own outDir so the daemon files it type-checks against (view, lifecycle, ...) are never emitted
// over the Node build's output.
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, extname, join, relative } from 'node:path';

const ROOTS = ['owner-ui', 'examples/avatar-app/web'];
const UI_OUT = join('dist', '.ui');

function walk(dir, keep, targetOf) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, keep, targetOf);
    else if (keep(name)) {
      const target = targetOf(path);
      mkdirSync(dirname(target), { recursive: true });
      cpSync(path, target);
    }
  }
}

for (const root of ROOTS) {
  if (existsSync(root))
    walk(
      root,
      (n) => extname(n) !== '.ts',
      (p) => join('dist', relative('.', p)),
    );
  const compiled = join(UI_OUT, root);
  if (existsSync(compiled))
    walk(
      compiled,
      (n) => n.endsWith('.js'),
      (p) => join('dist', relative(UI_OUT, p)),
    );
}

// Contract 13.3: the browser half of WebAuthn (@simplewebauthn/browser) reaches the panel without a bundler:
// its own bundle, served as /ui/simplewebauthn-browser.js, which owner-ui/webauthn.ts imports.
const WEBAUTHN = 'node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js';
if (existsSync(WEBAUTHN)) {
  mkdirSync(join('dist', 'owner-ui'), { recursive: true });
  cpSync(WEBAUTHN, join('dist', 'owner-ui', 'simplewebauthn-browser.js'));
}

// The package's bins are run directly too (`dist/daemon/cli.js start`): make them executable.
for (const bin of ['dist/daemon/cli.js', 'dist/bridge-client/cli.js'])
  if (existsSync(bin)) chmodSync(bin, 0o755);
