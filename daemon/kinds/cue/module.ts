/**
 * The cue as registered (kinds/index.ts): `ogf_cue`, off (answering DENIED at once) without `ogf_bridge`.
 * Built at start, before anything is queued: session files a crashed daemon left in run/ are removed first
 * (contract 4: a session file lives only while its cue runs).
 */
import type { KindModule } from '../../tool-kind/index.js';
import { createCueFeature } from './feature.js';
import { cueKind } from './kind.js';
import { sweepRunDir } from './session-file.js';
import { CueSource } from './source.js';

export const cue: KindModule = {
  kind: cueKind,
  source({ config, paths, log }) {
    const swept = sweepRunDir(paths.run);
    if (swept > 0) log.log('warn', 'session_files_swept', { count: swept });
    return new CueSource(createCueFeature({ config, paths, log }), log);
  },
};
