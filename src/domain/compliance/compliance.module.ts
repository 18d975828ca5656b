import type { AreaModule } from '../kernel/area-module.js';
import type { DomainContext } from '../kernel/context.js';
import { didLifecycleJobKind } from './did-lifecycle.js';

/**
 * Sets up the compliance area for one app. The campaign registry adapter (`ctx.registry`, the sandbox simulator
 * by default) and its worker are chosen by the composition root (src/app.ts); the area adds the DID lifecycle job kind.
 */
export async function setupCompliance(ctx: DomainContext): Promise<AreaModule> {
  // The DID lifecycle runs whatever the registry adapter is (did-lifecycle.ts).
  ctx.jobs.register(didLifecycleJobKind(ctx));
  return { name: 'compliance' };
}
