/**
 * Opens the transport of one upstream (contract 7): a stdio server we spawn (stdio.ts), or a Streamable
 * HTTP server whose headers come from the daemon's environment (`headers_from_env`). A header's value is
 * read here, at each connection, and handed to the transport only — never logged, stored or shown.
 */
import { StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import type { Logger } from '../base/index.js';
import type { UpstreamConfig } from '../config/index.js';
import { boundedFetch } from './bounded-fetch.js';
import { MAX_MESSAGE_BYTES } from './limits.js';
import { StdioUpstreamTransport } from './stdio.js';

/** Builds the transport for `config`; throws (naming the variable, not its value) when a header's variable is unset. */
export function openTransport(
  name: string,
  config: UpstreamConfig,
  log: Logger,
  env: NodeJS.ProcessEnv = process.env,
): Transport {
  if (config.argv !== undefined) {
    return new StdioUpstreamTransport({
      name,
      argv: config.argv,
      env: config.env,
      cwd: config.cwd,
      maxMessageBytes: MAX_MESSAGE_BYTES,
      log,
    });
  }
  const headers: Record<string, string> = {};
  for (const [header, variable] of Object.entries(config.headers_from_env ?? {})) {
    const value = env[variable];
    if (value === undefined || value === '') {
      throw new Error(`the environment variable ${variable} (for the header ${header}) is not set`);
    }
    headers[header] = value;
  }
  // No redirects: fetch would carry our custom headers (tokens from headers_from_env) to wherever one points.
  return new StreamableHTTPClientTransport(new URL(config.url!), {
    requestInit: { headers, redirect: 'error' },
    fetch: boundedFetch(MAX_MESSAGE_BYTES, (why) =>
      log.log('warn', 'upstream_message_refused', { upstream: name, why }),
    ),
  });
}
