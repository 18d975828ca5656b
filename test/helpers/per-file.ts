import { forgetFileDatabase } from './app.js';

// Runs before each test file (vitest setupFiles). With `isolate: false` files share modules, so the per-file
// PostgreSQL database of test/helpers/app.ts is forgotten here and the next file creates its own.
forgetFileDatabase();
