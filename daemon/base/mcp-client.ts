/**
 * The MCP client SDK (`@modelcontextprotocol/client`, with its own copy of the protocol's core), loaded when
 * it is first needed — an upstream connecting, a preview connection, `doctor`'s probe, `mcp-stdio`'s link —
 * and not at every start: it was a fifth of a start, and a daemon with no upstream never uses it.
 * `mcpClientLoaded()` is for the synchronous steps that run only after an `await mcpClient()` (a transport
 * opened by a connection that awaited it); the error checks answer "no" before it is loaded, since none of
 * its errors can exist before then, and never load it themselves.
 */
import type * as Sdk from '@modelcontextprotocol/client';
import { onFirstUse } from './on-first-use.js';

let loaded: typeof Sdk | undefined;

export const mcpClient = onFirstUse(async () => {
  loaded = await import('@modelcontextprotocol/client');
  return loaded;
});

/** The SDK if it is loaded already (a step that may go on at once then, and awaits `mcpClient()` else). */
export function mcpClientIfLoaded(): typeof Sdk | undefined {
  return loaded;
}

export function mcpClientLoaded(): typeof Sdk {
  if (loaded === undefined) throw new Error('the MCP client SDK is used before mcpClient() loaded it');
  return loaded;
}

/** Whether `e` is the client SDK's own error with one of `codes` (SdkErrorCode's names). */
export function isSdkError(e: unknown, ...codes: Array<keyof typeof Sdk.SdkErrorCode>): e is Sdk.SdkError {
  const sdk = loaded;
  return sdk !== undefined && e instanceof sdk.SdkError && codes.some((c) => e.code === sdk.SdkErrorCode[c]);
}

/** Whether `e` is a JSON-RPC error the other side answered (the client SDK's ProtocolError). */
export function isProtocolError(e: unknown): e is Sdk.ProtocolError {
  return loaded !== undefined && e instanceof loaded.ProtocolError;
}

/** Whether `e` is an HTTP error status the client SDK saw (SdkHttpError). */
export function isSdkHttpError(e: unknown): e is Sdk.SdkHttpError {
  return loaded !== undefined && e instanceof loaded.SdkHttpError;
}
