import type { AppContext } from '../../app-context.js';
import type { AreaModule } from '../../infra/area-module.js';
import { setRegistry } from './registry.port.js';
import { SandboxRegistry } from './sandbox-registry.js';

/**
 * Sets up the compliance area for one app: installs the campaign registry adapter (the sandbox simulator) and
 * registers its worker, which executes the registry's due decisions from the database.
 */
export async function setupCompliance(ctx: AppContext): Promise<AreaModule> {
  const registry = new SandboxRegistry(ctx);
  setRegistry(ctx, registry);
  ctx.workers.add(registry.worker());
  return { name: 'compliance' };
}
