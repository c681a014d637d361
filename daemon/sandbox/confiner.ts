/**
 * Runs what the config confines under bubblewrap (contract 21), or not at all: `launch` turns a process to
 * start into its bwrap command line (bwrap.ts), and throws — so the spawn fails and nothing runs — when
 * bubblewrap cannot be used here. Whether it can is found once, lazily (probe.ts): a daemon that confines
 * nothing never runs the probe, and `start`/`reload` call `check` to refuse a config whose confined entries
 * cannot be confined (naming the entry and what is missing).
 */
import type { Confinement } from '../config/index.js';
import { bwrapArgs, type Launch, type SandboxView } from './bwrap.js';
import { type BubblewrapProbe, probeBubblewrap } from './probe.js';

export class Confiner {
  readonly #env: NodeJS.ProcessEnv;
  readonly #hidden: readonly string[];
  #probe: BubblewrapProbe | undefined;

  /** `hidden`: paths a confined process must not see (the daemon's data dir). */
  constructor(env: NodeJS.ProcessEnv, hidden: readonly string[]) {
    this.#env = env;
    this.#hidden = hidden;
  }

  /** Whether bubblewrap works here (probed once, then remembered). */
  get probe(): BubblewrapProbe {
    this.#probe ??= probeBubblewrap(this.#env);
    return this.#probe;
  }

  /** `launch` as started under `c`; unchanged when `c` is undefined. Throws when it cannot be confined. */
  launch(c: Confinement | SandboxView | undefined, launch: Launch): Launch {
    if (c === undefined) return launch;
    const p = this.probe;
    if (!p.ok) throw new Error(`it cannot be confined: ${p.why}`);
    return { file: p.path, args: bwrapArgs(c, launch, this.#hidden), cwd: launch.cwd };
  }
}
