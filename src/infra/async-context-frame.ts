/** The Node.js flag that backs AsyncLocalStorage with AsyncContextFrame on the lines where it is not the default. */
export const ASYNC_CONTEXT_FRAME_FLAG = '--experimental-async-context-frame';

/**
 * The arguments to re-execute this process with {@link ASYNC_CONTEXT_FRAME_FLAG}, or `undefined` when it should run
 * as it is. AsyncLocalStorage (the request log scope, src/infra/logger.ts) is built on async_hooks on Node 22 and 23:
 * once a store is entered, every promise, nextTick and timer of the process calls an init hook (about 20 per REST
 * read). Node 22.7+ and 23 take this flag to use AsyncContextFrame instead, the implementation Node 24 made the
 * default (nodejs/node#55552), where the flag no longer exists and is refused (`bad option`, also in NODE_OPTIONS).
 * Re-executed only when all hold: the major is 22 or 23; neither the command line nor NODE_OPTIONS names any
 * `async-context-frame` option already (so `node --no-experimental-async-context-frame dist/main.js` opts out);
 * `process.execve` exists (Node 22.15+, POSIX; not in worker threads); no IPC channel to a parent (its descriptor
 * would not survive the exec).
 */
export function asyncContextFrameArgv(
  proc: Pick<NodeJS.Process, 'versions' | 'execArgv' | 'argv' | 'execPath' | 'env' | 'execve' | 'channel'> = process,
): string[] | undefined {
  const major = Number(proc.versions.node.split('.')[0]);
  if (major !== 22 && major !== 23) return undefined;
  if (typeof proc.execve !== 'function' || proc.channel !== undefined) return undefined;
  const named = (s: string) => s.includes('async-context-frame');
  if (proc.execArgv.some(named) || named(proc.env.NODE_OPTIONS ?? '')) return undefined;
  return [proc.execPath, ASYNC_CONTEXT_FRAME_FLAG, ...proc.execArgv, ...proc.argv.slice(1)];
}

/**
 * Replaces this process (same pid, descriptors and environment) with the same command plus
 * {@link ASYNC_CONTEXT_FRAME_FLAG} when {@link asyncContextFrameArgv} says so; otherwise returns. Call first thing in
 * an entry point, before anything is loaded or opened: what ran before the exec is discarded.
 */
export function reexecWithAsyncContextFrame(): void {
  const argv = asyncContextFrameArgv();
  if (argv) process.execve?.(process.execPath, argv, process.env);
}
