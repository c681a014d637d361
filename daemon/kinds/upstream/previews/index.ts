/**
 * Previews of an upstream call's effect (contract 12): the presets, the runner that computes them while a
 * call awaits review, and the lines `ogf-broker list` prints of one.
 */
export { previewLines } from './lines.js';
export { previewSpecs } from './presets.js';
export { PREVIEW_CALL_TIMEOUT_MS, PREVIEW_SLOTS, type PreviewBroker, PreviewRunner } from './runner.js';
