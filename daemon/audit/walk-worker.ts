/**
 * The second thread of `audit verify`'s walk (walk-threads.ts): started before it is needed (walk-thread.ts),
 * it waits to be told what to walk — an export, whose parts it takes as the main thread does, or broker.db
 * rows the main thread reads and hands over — walks each part whole, and hands each back; then says it is
 * done. It decides nothing: the main thread joins the parts, and reads the record whole if any is off.
 */
import { parentPort } from 'node:worker_threads';
import {
  type ToWorker,
  takeFileParts,
  type WorkerInput,
  type WorkerMessage,
  walkRows,
} from './walk-parts.js';

const port = parentPort!;
const post = (m: WorkerMessage) => port.postMessage(m);
let input: WorkerInput | undefined;
/** The ids of the commands table (contract 14 (v4)): only their entries' facts are folded. */
let rows: ReadonlySet<string> = new Set();

function finish(): void {
  post({ done: true });
  port.close();
}

port.on('message', (m: ToWorker) => {
  if ('kind' in m) {
    input = m;
    if (m.kind === 'rows') rows = new Set(m.rowIds);
    if (m.kind === 'file') {
      takeFileParts(m, 1, (index, part) => post({ index, part }));
      finish();
    }
  } else if ('end' in m) {
    finish();
  } else if (input?.kind === 'rows') {
    const state = new Int32Array(input.state);
    const part =
      Atomics.load(state, 1) === 0 ? walkRows(m.entries, m.hashes, m.n, input.pinnedUpTo, rows) : undefined;
    if (part === undefined) Atomics.store(state, 1, 1);
    Atomics.add(state, 0, 1);
    post({ index: m.index, part });
  }
});
