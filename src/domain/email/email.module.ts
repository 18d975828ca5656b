import type { AppContext } from '../../app-context.js';
import type { AreaModule } from '../../infra/area-module.js';

/** Sets up the email area's background work (workers, event hooks, listeners) for one app. */
export async function setupEmail(_ctx: AppContext): Promise<AreaModule> {
  return { name: 'email' };
}
