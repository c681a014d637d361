/**
 * The grants section (contract 8) and how many owners a command needs (contract 9).
 */
import { z } from 'zod';
import { hasForbiddenCharacter } from '../base/index.js';
import type { CatalogEntry } from './catalog.js';
import type { UpstreamConfig } from './upstreams.js';

const CLIENT_OR_ALL = /^(?:\*|[a-z0-9][a-z0-9_-]{0,31})$/;

/** Contract 8: `"grants":[{"command","client"?,"args"?,"note"?}]`, client default `*`. */
export const configGrantSchema = z.strictObject({
  command: z.string().min(1, 'must name a catalog command or an upstream tool'),
  client: z
    .string()
    .regex(CLIENT_OR_ALL, 'must be a client name (^[a-z0-9][a-z0-9_-]{0,31}$) or * for every client')
    .default('*'),
  args: z.record(z.string(), z.unknown(), 'must be an object of the exact arguments').optional(),
  note: z
    .string()
    .max(500, 'must be at most 500 characters')
    .refine((t) => !hasForbiddenCharacter(t), 'must hold no control or bidirectional characters')
    .optional(),
});

export type ConfigGrantEntry = z.infer<typeof configGrantSchema>;

/**
 * How many owners must approve a call of `name` (contract 9), or undefined when the config knows no such
 * command: a catalog name, or `<upstream>__<tool>` of a configured upstream whose `tools` (when given)
 * lists the tool. Static, so config grants are checked before any upstream has connected.
 */
export function commandApprovals(
  config: {
    commands: Record<string, Pick<CatalogEntry, 'approvals'>>;
    upstreams: Record<string, Pick<UpstreamConfig, 'tools' | 'approvals'>>;
  },
  name: string,
): number | undefined {
  const entry = Object.hasOwn(config.commands, name) ? config.commands[name] : undefined;
  if (entry !== undefined) return entry.approvals ?? 1;
  const sep = name.indexOf('__');
  if (sep < 0) return undefined;
  const upstreamName = name.slice(0, sep);
  const upstream = Object.hasOwn(config.upstreams, upstreamName) ? config.upstreams[upstreamName] : undefined;
  const tool = name.slice(sep + 2);
  if (upstream === undefined || tool === '') return undefined;
  if (upstream.tools !== undefined && !upstream.tools.includes(tool)) return undefined;
  return upstream.approvals;
}
