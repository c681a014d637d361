/**
 * Error lines of the `ogf-broker` command (contract 17: every error line starts `ogf-broker: `), in one
 * place: the CLI's own errors, the daemon's refusals a terminal command prints (`AlreadyDecided: …`), and
 * the notices that go with them. Before, some began with the subcommand, some with the code, some bare.
 */

/** Writes one error line to stderr, prefixed `ogf-broker: `. */
export function sayError(text: string): void {
  process.stderr.write(`ogf-broker: ${text}\n`);
}
