/**
 * The `oauth` section (contract 15): OAuth 2.1 for remote AI clients is on when `public_url` is set, or with
 * `"oauth": {"enabled": true}` (loopback development). `allow_loopback_metadata` lets a Client ID Metadata
 * Document live at `http://127.0.0.1` / `http://localhost` (development and tests); never by default.
 */
import { z } from 'zod';

export const oauthSchema = z
  .strictObject({
    enabled: z.boolean({ error: 'must be true or false' }).default(false),
    allow_loopback_metadata: z.boolean({ error: 'must be true or false' }).default(false),
  })
  .default({ enabled: false, allow_loopback_metadata: false });

/** The section once `public_url` is known: `enabled` is true whenever public_url is set. */
export interface OAuthConfig {
  enabled: boolean;
  allow_loopback_metadata: boolean;
}
