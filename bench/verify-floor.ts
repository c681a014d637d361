/**
 * Bench row 15's floor (information, no goal): the least any Node 20 `audit verify --data-dir` must do on
 * this machine, and nothing more — start Node, read every entry's bytes from broker.db through
 * better-sqlite3 (the same one-pass range reads the walk makes), and hash each entry with node:crypto, on
 * two threads. No link is checked, no checkpoint, no signature, no CLI: what it costs against `sha256sum`
 * is the part of goal (b)'s 3× that Node's start and one SHA-256 call per entry take before the verify
 * does anything of its own.
 *
 * With `--history`, it also makes the one read of the commands table and the audit links that contract 14
 * (v4)'s history check needs (daemon/store/sqlite/readonly.ts `HISTORY_SQL`, `LINKS_SQL`: the verify's own
 * statements, on the same connection), and nothing of the check itself: the floor of what the contract obliges a verify to do (issue 41).
 *
 * `node dist/bench/verify-floor.js BROKER_DB [--history]` prints the number of entries hashed.
 */
import { hash } from 'node:crypto';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';

const PART = 500; // as the walk reads (daemon/audit/walk-threads.ts DEFAULT_ROWS)

/** The entries of one part (joined by newlines) hashed one by one: how many. */
function hashAll(bytes: Uint8Array): number {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  let n = 0;
  for (let start = 0; start <= text.length; n++) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    hash('sha256', text.slice(start, end), 'hex');
    start = end + 1;
  }
  return n;
}

async function main(path: string, history: boolean): Promise<void> {
  const worker = new Worker(new URL(import.meta.url));
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(path, { readonly: true, fileMustExist: true });
  db.pragma('mmap_size = 1073741824');
  const range = db
    .prepare('SELECT CAST(group_concat(entry, char(10)) AS BLOB) FROM audit WHERE seq > ? AND seq <= ?')
    .raw();
  const last = (db.prepare('SELECT max(seq) FROM audit').pluck().get() as number | null) ?? 0;
  let here = 0;
  for (let i = 0; i * PART < last; i++) {
    const [bytes] = range.get(i * PART, Math.min((i + 1) * PART, last)) as [Buffer];
    // Every other part to the worker, moved (SQLite's answer owns its memory).
    if (i % 2 === 1) worker.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
    else here += hashAll(bytes);
  }
  if (history) {
    // The verify's own two statements, on this connection (its mapping and cache), as the walk's reader does.
    const { HISTORY_SQL, LINKS_SQL } = await import('../daemon/store/sqlite/readonly.js');
    db.prepare(HISTORY_SQL).raw().all();
    db.prepare(LINKS_SQL).raw().all(last);
  }
  db.close();
  worker.postMessage(null);
  const there = await new Promise<number>((resolve) => worker.once('message', resolve));
  process.stdout.write(`${here + there}\n`);
  worker.unref(); // the process ends as the verify's does, without waiting on the worker
}

if (isMainThread) {
  await main(process.argv[2] ?? 'broker.db', process.argv.includes('--history'));
} else {
  let n = 0;
  parentPort!.on('message', (m: Uint8Array | null) => {
    if (m === null) parentPort!.postMessage(n);
    else n += hashAll(m);
  });
}
