/**
 * Confinement (contract 21): what an approved process can touch. The daemon builds one `Confiner` and hands
 * it to whatever starts a process for a catalog command or a stdio upstream; `start`, `reload` and `doctor`
 * check a config against it.
 */
export { type Launch, previewView, type SandboxView } from './bwrap.js';
export { assertConfinable, confinedEntries, confinementLines, confinementProblem } from './check.js';
export { Confiner } from './confiner.js';
export { type BubblewrapProbe, findBubblewrap, probeBubblewrap } from './probe.js';
