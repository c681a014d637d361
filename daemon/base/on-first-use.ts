/**
 * A module loaded on its first use, once, instead of at start: a package a daemon may never need (the
 * WebAuthn certificate stack, the mail and Web Push senders) does not delay every start and every restart.
 * Node caches the module itself; this keeps the one promise so callers need not await a second import.
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load();
    return loading;
  };
}
