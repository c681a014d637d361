/**
 * The second thread of `audit verify`'s walk (walk-threads.ts): started before it is needed (walk-thread.ts),
 * it waits to be told what to walk — broker.db rows or an export's lines, which the main thread reads and
 * hands over part by part — walks each part whole, and hands each back; then says it is done. It decides
 * nothing: the main thread joins the parts, and reads the record whole if any is off.
 */
import { parentPort } from 'node:worker_threads';
import {
  type ToWorker,
  type WorkerInput,
  type WorkerMessage,
  walkLinesPart,
  walkRows,
} from './walk-parts.js';

const port = parentPort!;
const post = (m: WorkerMessage) => port.postMessage(m);
let input: WorkerInput | undefined;
/** The ids of the commands table (contract 14 (v4)): only their entries' facts are folded. */
let rows: ReadonlySet<string> = new Set();

port.on('message', (m: ToWorker) => {
  if ('kind' in m) {
    input = m;
    rows = new Set(m.rowIds);
  } else if ('end' in m) {
    post({ done: true });
    port.close();
  } else if (input !== undefined) {
    const state = new Int32Array(input.state);
    let part: ReturnType<typeof walkRows>;
    if (Atomics.load(state, 1) !== 0) part = undefined;
    else if ('lines' in m) part = walkLinesPart(m.lines, input.pinnedUpTo);
    else part = walkRows(m.entries, m.hashes, m.n, input.pinnedUpTo, rows);
    if (part === undefined) Atomics.store(state, 1, 1);
    Atomics.add(state, 0, 1);
    post({ index: m.index, part });
  }
});
