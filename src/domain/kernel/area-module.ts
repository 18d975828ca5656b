/**
 * What an area (compliance, events, webhooks, email) adds to a running app besides routes and GraphQL types:
 * background work started on listen and stopped on close. Each area's `setup…(ctx)` returns one; it may also
 * register workers (`ctx.workers.add`) and event hooks (`ctx.events.addHook`) while setting up.
 */
export interface AreaModule {
  name: string;
  /** Called once the HTTP server listens (e.g. the SMTP listener). */
  start?(): Promise<void>;
  /** Called on close, before the database closes; must end streams and wait for in-flight work. */
  stop?(): Promise<void>;
}
