/**
 * The data dir (contracts.md 1.1): its paths, private files and secrets, and daemon.json that tells the
 * other commands a daemon is running.
 */
export { type DaemonInfo, removeDaemonInfo, runningDaemon, writeDaemonInfo } from './daemon-info.js';
export {
  type DataDir,
  dataDirPaths,
  inspectDataDir,
  newToken,
  openDataDir,
  readOrCreateSecret,
  writePrivateFileExclusive,
} from './datadir.js';
export { defaultDataDir, resolveDataDir } from './resolve.js';
export { readStatusFile, removeStatusFile, writeStatusFile } from './status-file.js';
