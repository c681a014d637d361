/**
 * The systemd user unit `ogf-broker service install` writes (contract 17). Pure: the text from node's
 * path, this install's cli.js and the data dir.
 */

export const UNIT_NAME = 'ogf-broker.service';

/** The first line of every unit this command writes: `uninstall` removes only a unit that has it. */
export const UNIT_MARK =
  '# Written by `ogf-broker service install`; `ogf-broker service uninstall` removes it.';

/**
 * One word of a systemd command line: double-quoted, `\` and `"` escaped, `%` (a specifier) doubled and `$`
 * (a variable) doubled, so any path is passed as it is (systemd.service(5) "Command lines").
 */
export function systemdWord(word: string): string {
  const escaped = word
    .replaceAll('\\', '\\\\')
    .replaceAll('"', '\\"')
    .replaceAll('%', '%%')
    .replaceAll('$', '$$$$');
  return `"${escaped}"`;
}

export function serviceUnit(node: string, cli: string, dataDir: string): string {
  const start = [node, cli, 'start', '--data-dir', dataDir].map(systemdWord).join(' ');
  return `${UNIT_MARK}
[Unit]
Description=ogf-broker: the owner's approval gate between an AI and this machine

[Service]
Type=simple
ExecStart=${start}
# Contract 17: SIGHUP reloads the config; SIGTERM is a clean stop (within 5 s).
ExecReload=/bin/kill -HUP $MAINPID
Restart=on-failure
RestartSec=2
TimeoutStopSec=15
# Contract 1.1: the daemon makes its own files private itself; what it starts for you (catalog commands,
# upstream servers) gets this umask, your usual one, so a file an approved command writes is 0644.
UMask=0022

[Install]
WantedBy=default.target
`;
}
