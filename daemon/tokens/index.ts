/**
 * Owner and client tokens (contracts.md 1.1, 9): the owner's token file, client tokens and their names.
 */
export {
  checkClientName,
  checkOwnerName,
  FIRST_OWNER,
  LOCAL_CLIENT,
  type OwnerCredential,
  Tokens,
} from './tokens.js';
