import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { printSortedSchema } from './schema.js';

/** `npm run schema:print`: writes the sorted SDL to schema.graphql (`--check`: exit 1 when it is stale). */
const target = fileURLToPath(new URL('../../schema.graphql', import.meta.url));
const sdl = printSortedSchema();
if (process.argv.includes('--check')) {
  const current = await readFile(target, 'utf8').catch(() => '');
  if (current !== sdl) {
    process.stderr.write('schema.graphql is stale: run `npm run schema:print` and commit it.\n');
    process.exit(1);
  }
} else {
  await writeFile(target, sdl);
  process.stdout.write(`wrote ${target}\n`);
}
