/**
 * The upstream kind's stored fields in the shared types (declaration merging, core/model/lifecycle.ts KindFields):
 * which server and tool a call goes to (contract 7). Its tool's name and the View's `upstream` field are
 * the owner protocol's (common/kinds.ts).
 */
import type { UpstreamRef } from '../../../common/kinds.js';

export type { UpstreamRef };

declare module '../../core/model/lifecycle.js' {
  interface KindFields {
    /** Upstream calls (contract 7). */
    upstream?: UpstreamRef;
    /** Contract 21: a stdio server's reach in words (common/kinds.ts); none for an HTTP server. */
    reach?: string;
    /** Contract 20: the launch lane of the file a previewed call writes (previews/lane.ts); never shown. */
    file_lane?: string;
  }
}
