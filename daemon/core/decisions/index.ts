/**
 * Pure decisions, each a function of what the broker knows (architecture.md examples 2 and 3): what becomes
 * of a submitted request (intake.ts), whether an owner's approve, deny, grant or revoke may go ahead
 * (owner-decisions.ts), and what a change leaves behind besides its row (change-records.ts). runtime/
 * applies what they return.
 */
export { type Also, auditOf, logChange } from './change-records.js';
export { commandOf, type Intake, intake } from './intake.js';
export {
  decisionRefusal,
  grantRefusal,
  grantSpecOf,
  passkeyRefusal,
  type Refusal,
  revokeAnswer,
} from './owner-decisions.js';
