/**
 * Previews of an upstream call's effect (contract 12): the presets, the runner that computes them while a
 * call awaits review, and the lines `ogf-broker list` prints of one.
 */

export { type FileSeen, sha256Of } from './compute.js';
export { fileLane } from './lane.js';
export { previewLines } from './lines.js';
export { previewSpecs } from './presets.js';
export { type Recheck, type RecheckWorld, recheck } from './recheck.js';
export { PREVIEW_CALL_TIMEOUT_MS, PREVIEW_SLOTS, type PreviewBroker, PreviewRunner } from './runner.js';
export { previewThrough } from './through.js';
