/**
 * The owner's `args` frame (an addition to contract 5; issue 19, owner frames): a View carries arguments
 * over 16 KiB of JSON only as a preview (core/args-preview.ts), and the owner asks for them whole when a
 * card is opened — `{"type":"args","req_id","id"}` → `{"type":"args","req_id","id","version","args"}`, or a
 * `NotFound` reply for an id that is no command. Every owner sees every command, so there is nothing more
 * to check.
 *
 * The answer is one text frame of the stored arguments: at most 1 MiB of JSON characters for an upstream
 * call (bounded at the door, sources/upstream-bounds.ts; ≤ 3 MiB of UTF-8), a catalog command's within its
 * catalog's bounds. It goes out like any reply, so a socket that stops reading is still cut by the hub's
 * send bound (hub.ts MAX_BUFFERED_BYTES) rather than holding the daemon's memory.
 */

import type { ArgsMessage, ServerMessage } from '../../common/owner-messages.js';
import type { BrokerApi } from '../core/index.js';
import type { ArgsFrame } from './protocol.js';

/** The answer to one `args` frame, as the text to send. */
export function argsAnswer(broker: Pick<BrokerApi, 'get'>, f: ArgsFrame): string {
  const command = broker.get(f.id);
  if (command === undefined) {
    const refusal: ServerMessage = {
      type: 'reply',
      req_id: f.req_id,
      ok: false,
      error: { code: 'NotFound', message: `no command ${f.id}` },
    };
    return JSON.stringify(refusal);
  }
  const answer: ArgsMessage = {
    type: 'args',
    req_id: f.req_id,
    id: command.id,
    version: command.version,
    args: command.args,
  };
  return JSON.stringify(answer);
}
