/**
 * What each refusal of the owner socket (contracts.md 5, the owner error codes) means to the owner, in
 * words, shown on the card it concerns next to the daemon's own message.
 */
export const EXPLAIN: Record<string, string> = {
  AlreadyDecided: 'Already decided elsewhere (another tab or the terminal) — the card shows what happened.',
  VersionConflict: 'This request changed while you looked at it. Check the card again, then decide.',
  NotFound: 'The daemon does not know this request any more.',
  NotReconcilable: 'Only ERROR or UNKNOWN commands can be reconciled.',
  BadMessage: 'The panel sent something the daemon refused; reload the page.',
  NotGrantable:
    'This command cannot be allowed for a while (it needs several owners or your passkey, or it is not in the catalog any more). Nothing was approved: use Approve or Deny.',
  NotRevocable: 'This grant comes from the config file: remove it there and restart the daemon.',
  AlreadyApproved: 'You already approved this request; it waits for the other owners.',
  NotRevertible:
    'Nothing was written: the file no longer holds what that command wrote (or it made a new file, or the kept content is gone).',
  PasskeyRequired:
    'This request needs your passkey, and the daemon did not get a valid one for it. Nothing was approved: press Approve with passkey again.',
};
