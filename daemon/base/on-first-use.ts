/**
 * A module loaded on its first use, once, instead of at start: a package a daemon may never need (the
 * WebAuthn certificate stack, the mail and Web Push senders) does not delay every start and every restart.
 * Node caches the module itself; this keeps the one promise so callers need not await a second import. A
 * load that failed (descriptors exhausted at that moment, say) is not kept: the next use tries again, so a
 * moment of trouble cannot disable passkeys or upstreams until a restart.
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((e: unknown) => {
      loading = undefined;
      throw e;
    });
    return loading;
  };
}
