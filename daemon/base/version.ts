/** The package version, read once from package.json (dist/daemon/base/ → ../../../package.json). */
import { readFileSync } from 'node:fs';

function read(): string {
  for (const rel of ['../../../package.json', '../../package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      // try the next layout
    }
  }
  return '0.0.0';
}

export const VERSION = read();
