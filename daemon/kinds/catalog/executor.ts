/**
 * Runs an approved catalog command as a process (contracts.md 4, "Generic catalog commands"): argv from
 * the template, PATH/HOME/LANG plus the entry's env, `timeout_s` then SIGTERM and SIGKILL 5 s later.
 * exit 0 → succeeded; other exit → failed/NonZeroExit; cannot start → failed/LaunchFailed; past the
 * deadline → unknown/KilledAtDeadline (it may have done part of its work).
 */

import type { Command, ExecutionIo, ExecutionReport, Executor, Outcome } from '../../core/index.js';
import { minimalEnv, type ProcessResult, runProcess } from '../../launch/index.js';
import { Confiner, type Launch } from '../../sandbox/index.js';
import type { Catalog } from './catalog.js';

export const KILL_GRACE_MS = 5000;

function outcomeOf(r: ProcessResult): Outcome {
  const o: Outcome = { stdout: r.stdout, stderr: r.stderr, output_truncated: r.outputTruncated };
  if (r.exitCode !== null) o.exit_code = r.exitCode;
  if (r.signal !== null) o.signal = r.signal;
  return o;
}

export class CatalogExecutor implements Executor {
  readonly #catalog: Catalog;
  readonly #confiner: Confiner;
  readonly #outputLimit: number;

  /** `confiner`: contract 21 (a catalog without confined commands never uses it: tests may leave it out). */
  constructor(
    catalog: Catalog,
    outputLimitBytes: number,
    confiner: Confiner = new Confiner(process.env, []),
  ) {
    this.#catalog = catalog;
    this.#outputLimit = outputLimitBytes;
    this.#confiner = confiner;
  }

  async execute(command: Command, io: ExecutionIo): Promise<ExecutionReport> {
    const entry = this.#catalog.entry(command.command);
    if (entry === undefined) {
      // The owner removed it from the config between approval and a restart or reload: nothing runs.
      return {
        kind: 'aborted',
        reason: 'LaunchFailed',
        detail: `The catalog no longer has a command named ${command.command}.`,
      };
    }
    // Contract 21: under its confinement, or not at all (bubblewrap gone since start: nothing runs).
    const [file, ...args] = command.display as [string, ...string[]];
    let launch: Launch;
    try {
      launch = this.#confiner.launch(entry.sandbox || undefined, { file, args, cwd: entry.cwd });
    } catch (e) {
      return {
        kind: 'aborted',
        reason: 'LaunchFailed',
        detail: `Nothing was launched: ${(e as Error).message}.`,
      };
    }
    if (!(await io.markRunning())) {
      return {
        kind: 'aborted',
        reason: 'LaunchFailed',
        detail: 'The daemon was shutting down, so nothing was launched.',
      };
    }
    const r = await runProcess({
      file: launch.file,
      args: launch.args,
      env: minimalEnv(entry.env),
      ...(launch.cwd === undefined ? {} : { cwd: launch.cwd }),
      deadlineMs: entry.timeout_s * 1000,
      killGraceMs: KILL_GRACE_MS,
      outputLimitBytes: this.#outputLimit,
    });
    if (r.spawnError !== undefined) {
      return {
        kind: 'failed',
        reason: 'LaunchFailed',
        detail: `Could not start ${file}: ${r.spawnError}.`,
        outcome: {},
      };
    }
    const outcome = outcomeOf(r);
    if (r.lost !== undefined) {
      // The daemon's launcher process ended while it ran: it was stopped, what it did is unknown (spawner.ts).
      return {
        kind: 'unknown',
        reason: 'DaemonRestarted',
        detail: `${r.lost.replace(/^./, (c) => c.toUpperCase())}, and it may have done part of its work.`,
        outcome,
      };
    }
    if (r.killedAtDeadline) {
      return {
        kind: 'unknown',
        reason: 'KilledAtDeadline',
        detail: `Still running after its ${entry.timeout_s} s limit, so it was stopped; it may have done part of its work.`,
        outcome,
      };
    }
    if (r.exitCode === 0) return { kind: 'succeeded', outcome };
    const how = r.exitCode !== null ? `exit code ${r.exitCode}` : `signal ${r.signal}`;
    return { kind: 'failed', reason: 'NonZeroExit', detail: `The command ended with ${how}.`, outcome };
  }
}
