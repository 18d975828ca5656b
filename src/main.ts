import { reexecWithAsyncContextFrame } from './infra/async-context-frame.js';

// Entry point of `npm start`. On Node 22/23 the process first replaces itself with the same command plus
// --experimental-async-context-frame (src/infra/async-context-frame.ts), before the service and its dependencies load;
// then src/serve.ts reads the configuration, builds the app and listens.
reexecWithAsyncContextFrame();
await import('./serve.js');
