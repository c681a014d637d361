/**
 * Spawning child processes: argv only, never a shell (rule 2), with a minimal environment.
 */
export { minimalEnv, type ProcessResult, runProcess } from './launcher.js';
export { launcher } from './spawner.js';
