// `npm run house [-- <checkout>] [--json]`: the house as the source imports draw it (docs/architecture.md "Rooms,
// kernel and stores"): rooms and the arrows between them, arrows running back up the floors, import circles of
// files, the domain's arrows to infra and app-context, and where domain code outside stores reaches the database.
// <checkout> (default: this one) lets one measure another commit, e.g. a `git worktree add` of it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  circles,
  type DataSite,
  dataSites,
  importGraph,
  isStoreFile,
  prismaDelegates,
  QUERY_KINDS,
  root,
  sourceFiles,
} from './house-rules.js';

/**
 * The room of a source file: `domain/<area>` for src/domain/<area>/**, `domain` for the shared files directly in
 * src/domain, the folder for the other folders of src (infra, rest, graphql, http, smtp, generated), and the file
 * name for files directly in src (app, app-context, config, main, cli, …).
 */
export function roomOf(rel: string): string {
  const parts = rel.replace(/^src\//, '').split('/');
  if (parts[0] === 'domain') return parts.length > 2 ? `domain/${parts[1]}` : 'domain';
  if (parts.length > 1) return parts[0]!;
  return parts[0]!.replace(/\.ts$/, '');
}

/**
 * The floors of the house, lowest first: an arrow may point to its own floor or below; one pointing to a higher
 * floor runs back up. Rooms not listed (new top-level files) are reported on floor 1.
 */
export const FLOORS: readonly (readonly string[])[] = [
  ['generated'],
  ['config', 'webhooks-verify'],
  ['domain'], // domain, domain/<area> (the kernel included)
  ['infra'],
  ['app-context'],
  ['http', 'rest', 'graphql', 'smtp'],
  ['app'],
  ['main', 'cli', 'build-template'],
];

export function floorOf(room: string): number {
  const i = FLOORS.findIndex((rooms) => rooms.includes(room.split('/')[0]!));
  return i < 0 ? 1 : i;
}

/** The figures of one checkout (see docs/architecture.md for their meaning). */
export function measure(base = root) {
  // Generated code (src/generated, the Prisma client) is a room others import, not one whose inside is measured.
  const files = sourceFiles(path.join(base, 'src')).filter((f) => !path.relative(base, f).startsWith('src/generated/'));
  const graph = importGraph(files, base);
  const rooms = new Map<string, number>();
  const arrows = new Map<string, number>();
  const edge = (from: string, to: string) => `${from} → ${to}`;
  const domainTo = { infra: 0, appContext: 0, frontDoors: 0 };
  for (const [file, targets] of graph) {
    const from = roomOf(file);
    rooms.set(from, (rooms.get(from) ?? 0) + 1);
    for (const target of targets) {
      if (!target.startsWith('src/')) continue;
      const to = roomOf(target);
      if (to !== from) arrows.set(edge(from, to), (arrows.get(edge(from, to)) ?? 0) + 1);
      if (from.startsWith('domain')) {
        if (to === 'infra') domainTo.infra++;
        if (to === 'app-context' || to === 'app') domainTo.appContext++;
        if (['http', 'rest', 'graphql', 'smtp'].includes(to)) domainTo.frontDoors++;
      }
    }
  }
  const roomGraph = new Map<string, string[]>([...rooms.keys()].map((r) => [r, []]));
  for (const a of arrows.keys()) rooms.set(a.split(' → ')[1]!, rooms.get(a.split(' → ')[1]!) ?? 0);
  for (const a of arrows.keys()) {
    const [from, to] = a.split(' → ') as [string, string];
    roomGraph.get(from)?.push(to);
  }
  const backUp = [...arrows.keys()].filter((a) => {
    const [from, to] = a.split(' → ') as [string, string];
    return floorOf(to) > floorOf(from);
  });
  const delegates = prismaDelegates(base);
  const sites: { file: string; site: DataSite }[] = [];
  for (const f of files) {
    const rel = path.relative(base, f);
    if (!rel.startsWith('src/domain/') || isStoreFile(rel)) continue;
    for (const site of dataSites(rel, readFileSync(f, 'utf8'), delegates)) sites.push({ file: rel, site });
  }
  const count = (kinds: readonly DataSite['kind'][]) => sites.filter((s) => kinds.includes(s.site.kind)).length;
  const filesWith = (kinds: readonly DataSite['kind'][]) =>
    new Set(sites.filter((s) => kinds.includes(s.site.kind)).map((s) => s.file)).size;
  return {
    files: files.length,
    rooms: Object.fromEntries([...rooms].sort()),
    floorsUsed: new Set([...rooms.keys()].map(floorOf)).size,
    arrows: Object.fromEntries([...arrows].sort()),
    arrowsBackUp: backUp.sort(),
    roomCircles: circles(roomGraph),
    fileCircles: circles(graph),
    domainToInfra: domainTo.infra,
    domainToAppContext: domainTo.appContext,
    domainToFrontDoors: domainTo.frontDoors,
    outsideStores: {
      prismaCalls: count(['prisma-call']),
      sql: count(['raw-sql', 'sql-text', 'database-port']),
      prismaValueImports: count(['prisma-value']),
      prismaTypeImports: count(['prisma-type']),
      filesWithQueries: filesWith(QUERY_KINDS),
      filesWithGeneratedTypes: filesWith(['prisma-type']),
    },
    sites: sites.map((s) => `${s.file}:${s.site.line} ${s.site.kind} ${s.site.text}`),
  };
}

function main(argv: string[]): void {
  const json = argv.includes('--json');
  const dir = argv.find((a) => !a.startsWith('--'));
  const m = measure(dir ? path.resolve(dir) : root);
  if (json) {
    console.log(JSON.stringify(m, null, 2));
    return;
  }
  const p = (s = '') => console.log(s);
  const rooms = Object.keys(m.rooms);
  p(`rooms: ${rooms.length} (${m.files} files), on ${m.floorsUsed} floors`);
  for (const i of FLOORS.keys()) {
    const here = rooms.filter((r) => floorOf(r) === i);
    if (here.length) p(`  floor ${i}: ${here.map((r) => `${r} (${m.rooms[r]})`).join(', ')}`);
  }
  p(`arrows between rooms: ${Object.keys(m.arrows).length}`);
  for (const [a, n] of Object.entries(m.arrows)) p(`  ${a}  ×${n}`);
  p(`arrows running back up (to a higher floor): ${m.arrowsBackUp.length}`);
  for (const a of m.arrowsBackUp) p(`  ${a}  ×${m.arrows[a]}`);
  p(`room circles: ${m.roomCircles.length}`);
  for (const c of m.roomCircles) p(`  ${c.join(' ↔ ')}`);
  p(`file import circles: ${m.fileCircles.length}`);
  for (const c of m.fileCircles) p(`  ${c.join(' ↔ ')}`);
  p(
    `imports from src/domain: to infra ${m.domainToInfra}, to app-context/app ${m.domainToAppContext}, to front doors ${m.domainToFrontDoors}`,
  );
  const o = m.outsideStores;
  p(
    `src/domain outside stores: ${o.prismaCalls} Prisma calls, ${o.sql} SQL sites (in ${o.filesWithQueries} files); ` +
      `${o.prismaValueImports} runtime and ${o.prismaTypeImports} type imports from src/generated (${o.filesWithGeneratedTypes} files)`,
  );
  if (argv.includes('--sites')) for (const s of m.sites) p(`  ${s}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename))
  main(process.argv.slice(2));
