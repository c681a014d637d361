/**
 * Test-only crash points (issue 6, fault injection). The fault suites must kill the daemon inside
 * windows too narrow for a signal sent from outside to hit reliably: between writing a cue's session
 * file and committing `running`, between that commit and the spawn, and between a child's exit and the
 * commit of its outcome (rule 3).
 *
 * Inert in production: it is armed only by the environment variable `OGF_BROKER_FAULT`, read once when
 * the daemon is built (daemon.ts hands `faultsFromEnv(env)` to the broker; every other broker gets
 * `noFaults`), and nothing a client sends (MCP, owner frames, bridge frames,
 * config file) can set or change it. Value: `<point>` or `<point>:<n>` — at the n-th time (default 1)
 * the daemon reaches that point it SIGKILLs itself, exactly as `kill -9` would, with no cleanup.
 */

import type { Faults } from '../ports/index.js';

/** No crash points: every broker but the daemon's own under a fault test. */
export const noFaults: Faults = () => {};

/**
 * The crash points `OGF_BROKER_FAULT` arms in `env` (`<point>` or `<point>:<n>`: SIGKILL at the n-th time
 * the daemon reaches that point), or `noFaults` when it is unset.
 */
export function faultsFromEnv(
  env: NodeJS.ProcessEnv,
  kill: () => void = () => process.kill(process.pid, 'SIGKILL'),
): Faults {
  const value = env.OGF_BROKER_FAULT;
  if (value === undefined || value === '') return noFaults;
  const [point, n] = value.split(':');
  const at = n === undefined ? 1 : Number(n);
  let hits = 0;
  return (p) => {
    if (p !== point) return;
    hits++;
    if (hits === at) kill();
  };
}
