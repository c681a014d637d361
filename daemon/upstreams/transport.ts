/**
 * Opens the transport of one upstream (contract 7): a stdio server we spawn (stdio.ts), or a Streamable
 * HTTP server whose headers come from the daemon's environment (`headers_from_env`). A header's value is
 * read here, at each connection, and handed to the transport only — never logged, stored or shown.
 *
 * Contract 12 (v4): previews never share a connection with approved calls. `instance: "preview"` opens the
 * preview connection: for a stdio upstream a second instance of the server (its spawn made by
 * `stdioSpawn`, confined with nothing writable), for an HTTP upstream a connection of its own (a new
 * transport has no session id, so the server gives it a session of its own at initialize).
 */
import type { Transport } from '@modelcontextprotocol/client';
import { type Logger, mcpClientLoaded } from '../base/index.js';
import type { UpstreamConfig } from '../config/index.js';
import { type Confiner, previewView } from '../sandbox/index.js';
import { boundedFetch } from './bounded-fetch.js';
import { MAX_MESSAGE_BYTES } from './limits.js';
import { StdioUpstreamTransport } from './stdio.js';

/** Which connection of an upstream: the one approved calls go through, or the one previews use. */
export type Instance = 'main' | 'preview';

/** What a stdio upstream's process is started as. */
export interface Spawn {
  argv: readonly string[];
  env?: Record<string, string> | undefined;
  cwd?: string | undefined;
}

/**
 * The spawn of a stdio upstream (contract 21): its argv under its own confinement; a preview's instance
 * always confined with nothing writable, seeing what the server's own instance sees (sandbox/bwrap.ts
 * `previewView`), whatever the upstream's setting, so a preview can only read.
 */
export function stdioSpawn(config: UpstreamConfig, instance: Instance, confiner: Confiner): Spawn {
  const own = config.sandbox || undefined;
  const confinement = instance === 'preview' ? previewView(own) : own;
  const [file, ...args] = config.argv!;
  const launch = confiner.launch(confinement, { file: file!, args, cwd: config.cwd });
  return { argv: [launch.file, ...launch.args], env: config.env, cwd: launch.cwd };
}

/** Builds the transport for `config`; throws (naming the variable, not its value) when a header's variable is unset. */
export function openTransport(
  name: string,
  config: UpstreamConfig,
  log: Logger,
  env: NodeJS.ProcessEnv = process.env,
  instance: Instance,
  confiner: Confiner,
): Transport {
  if (config.argv !== undefined) {
    const spawn = stdioSpawn(config, instance, confiner);
    return new StdioUpstreamTransport({
      name,
      ...spawn,
      instance: instance === 'preview' ? 'preview' : undefined,
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
  const { StreamableHTTPClientTransport } = mcpClientLoaded();
  return new StreamableHTTPClientTransport(new URL(config.url!), {
    requestInit: { headers, redirect: 'error' },
    fetch: boundedFetch(MAX_MESSAGE_BYTES, (why) =>
      log.log('warn', 'upstream_message_refused', {
        upstream: name,
        ...(instance === 'preview' ? { instance } : {}),
        why,
      }),
    ),
  });
}
