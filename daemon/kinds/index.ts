/**
 * Every kind of tool the daemon knows, one line each (issue 20 item 1): a new kind is its folder
 * (kinds/<kind>/: source, executor, fields, kind) plus its line here and its renderer's line in the panel
 * (owner-ui/kinds.ts). The order is the order of their fields in a stored command.
 */

import type { Kind } from '../kind/index.js';
import { catalogKind } from './catalog/index.js';
import { cueKind } from './cue/index.js';
import { type KindRegistry, kindRegistry } from './registry.js';
import { upstreamKind } from './upstream/index.js';

export type { Kind, KindRegistry };

export const KINDS: KindRegistry = kindRegistry([catalogKind, cueKind, upstreamKind]);
