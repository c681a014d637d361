/**
 * The bubblewrap command line (contract 21) as bwrap.ts builds it: the order decides what wins (a later
 * mount covers an earlier one), so the data dir is hidden last, whatever else names it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bwrapArgs, previewView } from './bwrap.js';

const tmp = mkdtempSync('/tmp/ogf-bwrap-unit-');
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('[c21.confined] bwrapArgs', () => {
  it('read-only root, private /tmp keeping what the argv names, writable binds, the data dir hidden last', () => {
    const args = bwrapArgs(
      { writable: ['/home/u/notes'], network: false },
      { file: '/usr/bin/node', args: [join(tmp, 'server.js'), '/home/u/notes'], cwd: '/home/u' },
      [join(tmp, 'data')],
    );
    expect(args).toEqual([
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--tmpfs',
      '/tmp',
      '--ro-bind',
      tmp,
      tmp,
      '--bind',
      '/home/u/notes',
      '/home/u/notes',
      '--tmpfs',
      join(tmp, 'data'),
      '--unshare-pid',
      '--die-with-parent',
      '--unshare-net',
      '--chdir',
      '/home/u',
      '--',
      '/usr/bin/node',
      join(tmp, 'server.js'),
      '/home/u/notes',
    ]);
  });

  it('a preview of an unconfined server sees the machine read-only, /tmp included, with its network', () => {
    const args = bwrapArgs(previewView(undefined), { file: 'node', args: ['/tmp/x/s.js'] }, []);
    expect(args).not.toContain('--tmpfs');
    expect(args).not.toContain('--bind');
    expect(args).not.toContain('--unshare-net');
  });

  it('a preview of a confined server: its writable paths read-only, its network as it has it', () => {
    const args = bwrapArgs(
      previewView({ writable: ['/home/u/notes'], network: false }),
      { file: 'node', args: [] },
      [],
    );
    expect(args.join(' ')).toContain('--ro-bind /home/u/notes /home/u/notes');
    expect(args).not.toContain('--bind');
    expect(args).toContain('--unshare-net');
  });
});
