import type { AppContext } from '../../app-context.js';
import type { AreaModule } from '../../infra/area-module.js';
import { didLifecycleJobKind } from './did-lifecycle.js';

/**
 * Sets up the compliance area for one app. The campaign registry adapter (`ctx.registry`, the sandbox simulator
 * by default) and its worker are chosen by the composition root (src/app.ts); the area adds the DID lifecycle job kind.
 */
export async function setupCompliance(ctx: AppContext): Promise<AreaModule> {
  // The DID lifecycle runs whatever the registry adapter is (did-lifecycle.ts).
  ctx.jobs.register(didLifecycleJobKind(ctx));
  return { name: 'compliance' };
}
