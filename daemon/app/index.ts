/**
 * The daemon's composition root (issue 20 item 4): `Daemon` wires config, store, broker, kinds and edges
 * together; `ogf-broker start` runs it.
 */
export { Daemon } from './daemon.js';
export { checkBridge } from './diagnose.js';
