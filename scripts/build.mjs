// `npm run build` (also run by `prepare`, so `npm install` leaves a runnable dist/): bundles src/main.ts and
// src/cli.ts with esbuild into dist/ (dependencies stay in node_modules, so their own files such as PGlite's wasm
// resolve as usual), then writes dist/pglite-template.tgz, a migrated PGlite data directory that a first start
// unpacks instead of running initdb. Type checking is `npm run typecheck`; this step only transpiles.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist`;
const started = Date.now();
rmSync(outdir, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: ['src/main.ts', 'src/cli.ts', 'src/build-template.ts'],
  outdir,
  bundle: true,
  packages: 'external',
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22.19',
  sourcemap: true,
  logLevel: 'warning',
});
if (process.env.SWITCHBOARD_SKIP_TEMPLATE !== '1') {
  execFileSync(
    process.execPath,
    ['--enable-source-maps', `${outdir}/build-template.js`, `${outdir}/pglite-template.tgz`],
    {
      stdio: 'inherit',
    },
  );
}
process.stdout.write(`built dist/ in ${Date.now() - started} ms\n`);
