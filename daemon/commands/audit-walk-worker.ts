/**
 * The second thread of `audit verify`'s walk (audit-walk.ts): started before it is needed (audit-walk-thread.ts),
 * it waits for the record's parts, takes them as the main thread does, walks each whole and hands each back,
 * then says it is done. It decides nothing: the main thread joins the parts, and reads the record whole if
 * any is off.
 */
import { parentPort } from 'node:worker_threads';
import { partWalker, takeParts, type WorkerInput, type WorkerMessage } from './audit-walk-parts.js';

const post = (m: WorkerMessage) => parentPort!.postMessage(m);

parentPort!.once('message', (input: WorkerInput) => {
  const walker = partWalker(input.source);
  if (walker !== undefined) {
    try {
      takeParts(input, 1, walker.walk, (index, part) => post({ index, part }));
    } finally {
      walker.close();
    }
  }
  post({ done: true });
  parentPort!.close();
});
