/**
 * The catalog kind (contracts.md 1.3, 3.1): the owner's commands, their source, executor and policy.
 */
export { Catalog } from './catalog.js';
export { CatalogExecutor } from './executor.js';
export { catalogKind } from './kind.js';
export { catalog } from './module.js';
export { CatalogSource } from './source.js';
