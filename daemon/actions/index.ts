/**
 * Deciding from a notification (contract 19 (v4)): the one-time Approve and Deny URLs a channel's
 * `waiting` message carries — which commands get them (offer.ts) and how they are minted, looked up and
 * spent (desk.ts). The page and the POST that use them are the owner edge's (owner/act-routes.ts); the
 * channels lay the URLs out (notify/formats.ts, email.ts, push.ts).
 */
export {
  ACTION_TTL_MS,
  ActionDesk,
  type ActionDeskOptions,
  type ActionLinks,
  type ActionName,
  TOKEN_RE,
  tokenHash,
} from './desk.js';
export { noOfferReason, offersActions } from './offer.js';
