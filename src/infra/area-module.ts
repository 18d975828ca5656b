export type { AreaModule } from '../domain/kernel/area-module.js';
