// Copies the browser assets (HTML, CSS, SVG, ...) next to the compiled scripts in dist/.
import { cpSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, extname, join, relative } from 'node:path';

const ROOTS = ['owner-ui', 'examples/avatar-app/web'];
const SKIP = new Set(['.ts']);

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (!SKIP.has(extname(name))) {
      const target = join('dist', relative('.', path));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(path, target);
    }
  }
}
for (const root of ROOTS) if (existsSync(root)) walk(root);

// The package's bins are run directly too (`dist/daemon/cli.js start`): make them executable.
import { chmodSync as chmod } from 'node:fs';

for (const bin of ['dist/daemon/cli.js', 'dist/bridge-client/cli.js']) if (existsSync(bin)) chmod(bin, 0o755);
