import type { AppContext } from '../../app-context.js';
import type { AreaModule } from '../../infra/area-module.js';

/** Sets up the events area's background work (workers, event hooks, listeners) for one app. */
export async function setupEvents(_ctx: AppContext): Promise<AreaModule> {
  return { name: 'events' };
}
