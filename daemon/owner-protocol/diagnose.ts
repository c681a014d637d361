/**
 * Owner frames that ask the running daemon about what it uses (contract 17: "`doctor` and `notify test` ask
 * the running daemon about what it uses — its environment, its channels, its bridge — when one runs"). An
 * addition to contract 5's frames: the terminal's `doctor` and `notify test` send them with the owner token,
 * so they judge the daemon's environment, not the shell's (issue 36 item 6: `doctor` said
 * "SLACK_WEBHOOK_URL is not set" and "bridge off" while the running daemon had both).
 *
 * `{"type":"doctor","req_id"}` → `{"type":"doctor","req_id","pid","checks":[{name,ok,detail,warn?}]}`;
 * `{"type":"notify_test","req_id","channel"?}` → `{"type":"notify_test","req_id","pid","results":[{id,kind,
 * ok,status?,error?}]}` (no channel, or an unknown one: BadMessage).
 *
 * `{"type":"reload","req_id"}` → `{"type":"reload","req_id","pid","ok",...}`: `ogf-broker reload` (contract
 * 17) — the daemon reads its config again and says what it applied, what needs a restart, or why it kept
 * the old config.
 */
import { z } from 'zod';
import { must, reqId, strict } from './fields.js';

const CHANNEL = 'a notify channel id (^[a-z][a-z0-9-]{0,31}$)';

export const doctorFrame = z.strictObject({ type: z.literal('doctor'), req_id: reqId }, strict);
export const notifyTestFrame = z.strictObject(
  {
    type: z.literal('notify_test'),
    req_id: reqId,
    channel: z
      .string(must('channel', CHANNEL))
      .regex(/^[a-z][a-z0-9-]{0,31}$/, must('channel', CHANNEL))
      .optional(),
  },
  strict,
);

export const reloadFrame = z.strictObject({ type: z.literal('reload'), req_id: reqId }, strict);

export type DoctorFrame = z.infer<typeof doctorFrame>;
export type ReloadFrame = z.infer<typeof reloadFrame>;
export type NotifyTestFrame = z.infer<typeof notifyTestFrame>;
