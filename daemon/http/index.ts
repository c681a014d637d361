/**
 * The HTTP server (Host/Origin checks, connection limits) and what every edge is handed and gives back
 * (edge.ts: EdgeContext, routes, Edge).
 */
export { type ConnectionLimits, connectionLimits, descriptorLimit } from './connections.js';
export type { BearerAuthority, Edge, EdgeContext, HttpRoute, Origins, UpgradeRoute } from './edge.js';
export { Flight } from './flight.js';
export { sendJson } from './json.js';
export { createOrigins } from './origins.js';
export { createHttpServer } from './server.js';
export { TurnLimit } from './turns.js';
