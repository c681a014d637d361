/**
 * The cue kind (contracts.md 3.3, 4): `ogf_cue` to the OGF bridge, its feature, source, executor,
 * session files and policy.
 */
export { createCueFeature } from './feature.js';
export { cueKind } from './kind.js';
export { cue } from './module.js';
export { sweepRunDir } from './session-file.js';
export { CueSource } from './source.js';
