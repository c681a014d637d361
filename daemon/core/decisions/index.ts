/**
 * TODO
 */
export { type Also, auditOf, logChange } from './change-records.js';
export { commandOf, intake } from './intake.js';
export {
  decisionRefusal,
  grantRefusal,
  grantSpecOf,
  passkeyRefusal,
  type Refusal,
  revokeAnswer,
} from './owner-decisions.js';
