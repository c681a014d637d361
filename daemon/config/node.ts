/**
 * Contract 16: `node_name` names this daemon among the daemons sharing one PostgreSQL. Each command belongs
 * to the node that received it, and only that node launches it; a second live daemon with the same name on
 * one database exits 2. Default: this machine's host name, made to fit the pattern (its first label, lower
 * case, anything else a `-`), so two machines get two names without a config line.
 */
import { hostname } from 'node:os';
import { z } from 'zod';

export const NODE_NAME_RE = /^[a-z][a-z0-9-]{0,31}$/;

/** `node_name` in the config file. */
export const nodeNameSchema = z
  .string('must be a string')
  .regex(
    NODE_NAME_RE,
    'must match ^[a-z][a-z0-9-]{0,31}$ (a lower-case letter, then up to 31 of a-z, 0-9, -)',
  );

/**
 * The host name as a node name: `Build-Box.example.com` → `build-box`; one that starts with no letter gets
 * `n-` in front; an empty one is `node`.
 */
export function defaultNodeName(host: string = hostname()): string {
  let name = (host.split('.')[0] ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .replace(/^-+|-+$/g, '');
  if (name === '') return 'node';
  if (!/^[a-z]/.test(name)) name = `n-${name}`;
  return name.slice(0, 32).replace(/-+$/, '');
}

/**
 * Whether this daemon acts on a command as its node (contract 16): previews it, notifies of it. Every
 * command is its own on a database of its own; on a shared one, those it received (each node notifies of
 * its own commands, so an owner hears of each once, and previews through its own upstreams).
 */
export function ownsCommand(
  config: { database_url: string | null; node_name: string },
  command: { node?: string },
): boolean {
  return config.database_url === null || command.node === config.node_name;
}
