import type { AppContext } from '../../app-context.js';
import type { AreaModule } from '../../infra/area-module.js';

/**
 * Sets up the compliance area for one app. The campaign registry adapter (`ctx.registry`, the sandbox simulator
 * by default) and its worker are chosen by the composition root (src/app.ts); the area itself starts nothing.
 */
export async function setupCompliance(_ctx: AppContext): Promise<AreaModule> {
  return { name: 'compliance' };
}
