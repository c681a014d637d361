// Puts the avatar app's page next to the daemon in dist/: its static assets (HTML, CSS, ...) from the source
// folder, and the scripts tsc -p tsconfig.ui.json compiled into dist/.ui/ (its own outDir, so nothing it
// type-checks is emitted over the Node build's output). The owner panel is bundled by vite
// (vite.panel.config.ts, into dist/owner-ui/); only the manifest is copied here, beside the service worker,
// because the pages link it at the origin's root (/manifest.webmanifest) where vite would not leave it.
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, extname, join, relative } from 'node:path';

const ROOTS = ['examples/avatar-app/web'];
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

// Contract 13.2: the installable panel's manifest, served as /manifest.webmanifest (daemon/owner/static.ts).
const MANIFEST = 'owner-ui/service-worker/manifest.webmanifest';
if (existsSync(MANIFEST)) {
  mkdirSync(join('dist', 'owner-ui'), { recursive: true });
  cpSync(MANIFEST, join('dist', 'owner-ui', 'manifest.webmanifest'));
}

// The package's bins are run directly too (`dist/daemon/cli.js start`): make them executable.
for (const bin of ['dist/daemon/cli.js', 'dist/bridge-client/cli.js'])
  if (existsSync(bin)) chmodSync(bin, 0o755);
