/**
 * The starter config `ogf-broker init` writes (contract 17): the official filesystem server behind the gate
 * as upstream `notes` over one folder, reads allowed without asking (`trust_read_only_hint`), writes under
 * `<folder>/drafts` allowed by a rule, everything else asked; the server confined to the folder (contract
 * 21: it writes nowhere else and has no network). Pure: the caller says where the server is.
 */

/** The starter rule's id (docs/rules.md: `^[a-z][a-z0-9-]{0,31}$`). */
export const DRAFTS_RULE = 'notes-drafts';

/** A CEL single-quoted string literal: `\` and `'` escaped, so any folder name stays one literal. */
function celString(s: string): string {
  return `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/**
 * The config for `folder` (absolute). `server` is the filesystem server's argv before the folder: node and
 * the installed entry when it resolves from this package, else `npx -y @modelcontextprotocol/server-filesystem`.
 */
export function starterConfig(
  folder: string,
  server: readonly string[],
  sandbox: { writable: string[]; network: boolean } = { writable: [folder], network: false },
): Record<string, unknown> {
  const drafts = `${folder.replace(/\/+$/, '')}/drafts`;
  return {
    upstreams: {
      notes: {
        argv: [...server, folder],
        preset: 'filesystem',
        trust_read_only_hint: true,
        sandbox,
      },
    },
    rules: [
      {
        id: DRAFTS_RULE,
        when: `(command == 'notes__write_file' || command == 'notes__edit_file') && path_under(args.path, ${celString(drafts)})`,
        decision: 'allow',
      },
    ],
  };
}
