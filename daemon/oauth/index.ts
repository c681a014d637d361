/**
 * OAuth 2.1 for remote AI clients (contract 15): the authorization server for the daemon's own /mcp
 * (metadata, CIMD and DCR clients, /authorize with the owner's consent in the panel, /token, /revoke) and
 * the check /mcp makes of an access token. See docs/oauth.md.
 */

export { isPublicAddress } from './address.js';
export { type OwnerDoor, oauthOffRoute, oauthOwnerRoutes } from './owner-routes.js';
export { oauthRoutes } from './routes.js';
export { type ConsentView, OAuthServer, type OAuthServerOptions } from './server.js';
