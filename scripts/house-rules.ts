import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/*
 * The house as its imports draw it: source files, the import graph between them, and where domain code reaches the
 * database. Shared by scripts/house.ts (the figures of docs/architecture.md "Rooms, kernel and stores") and
 * test/architecture/domain-imports.test.ts (the rules), so the figures and the rules count the same things.
 */

/** The repository root (this file lives in scripts/). */
export const root = path.resolve(import.meta.dirname, '..');

/** Every `.ts` file under `dir` (absolute paths, sorted). */
export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out.sort();
}

/**
 * The files `file` imports (static imports, re-exports, `import()`), as TypeScript's pre-processor reads them,
 * resolved to files of the repository; package imports are left out. Type-only imports count: they are arrows of
 * the code's structure even though they vanish at run time. @returns repository-relative paths.
 */
export function importsOf(file: string, text = readFileSync(file, 'utf8'), base = root): string[] {
  const out = new Set<string>();
  for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const stem = path.resolve(path.dirname(file), fileName).replace(/\.js$/, '');
    const target = [`${stem}.ts`, stem, path.join(stem, 'index.ts')].find((c) => c.endsWith('.ts') && existsSync(c));
    if (target) out.add(path.relative(base, target));
    // Generated code may be absent from a checkout that was never built (`npm run generate`): still an arrow.
    else if (path.relative(base, stem).startsWith('src/generated/')) out.add(`${path.relative(base, stem)}.ts`);
  }
  return [...out];
}

/** The import graph of `files` (under `base`): repository-relative path → the repository files it imports. */
export function importGraph(files: string[], base = root): Map<string, string[]> {
  return new Map(files.map((f) => [path.relative(base, f), importsOf(f, undefined, base)]));
}

/**
 * Strongly connected components of a graph (Tarjan, iterative), each with more than one node or a self-arrow:
 * the import circles. @returns each circle's nodes, sorted; circles sorted by their first node.
 */
export function circles(graph: Map<string, Iterable<string>>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  const succ = (n: string) => [...(graph.get(n) ?? [])].filter((m) => graph.has(m));
  for (const start of graph.keys()) {
    if (indices.has(start)) continue;
    const work: { node: string; next: number; succs: string[] }[] = [];
    const open = (node: string) => {
      indices.set(node, index);
      low.set(node, index++);
      stack.push(node);
      onStack.add(node);
      work.push({ node, next: 0, succs: succ(node) });
    };
    open(start);
    while (work.length) {
      const top = work[work.length - 1]!;
      if (top.next < top.succs.length) {
        const m = top.succs[top.next++]!;
        if (!indices.has(m)) open(m);
        else if (onStack.has(m)) low.set(top.node, Math.min(low.get(top.node)!, indices.get(m)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(top.node)!));
      if (low.get(top.node) === indices.get(top.node)) {
        const scc: string[] = [];
        let n: string;
        do {
          n = stack.pop()!;
          onStack.delete(n);
          scc.push(n);
        } while (n !== top.node);
        if (scc.length > 1 || succ(top.node).includes(top.node)) out.push(scc.sort());
      }
    }
  }
  return out.sort((x, y) => x[0]!.localeCompare(y[0]!));
}

/**
 * Files of src/domain that may hold Prisma calls and SQL (issue 23's store convention): an area's stores
 * (`<area>.store.ts`, `<topic>.store.ts`), the event log (its own store) and the kernel (the database port types).
 */
export function isStoreFile(rel: string): boolean {
  return (
    /^src\/domain\/.+\.store\.ts$/.test(rel) ||
    rel === 'src/domain/events/event-log.ts' ||
    rel.startsWith('src/domain/kernel/')
  );
}

/** The Prisma model delegates (`db.brand`, `tx.emailMessage`, …): each `model X` of prisma/schema, in lower camel case. */
export function prismaDelegates(base = root): Set<string> {
  const dir = path.join(base, 'prisma/schema');
  const names = new Set<string>();
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.prisma')))
    for (const [, name] of readFileSync(path.join(dir, f), 'utf8').matchAll(/^model\s+(\w+)\s*\{/gm))
      names.add(name!.charAt(0).toLowerCase() + name!.slice(1));
  return names;
}

const DELEGATE_METHODS = new Set([
  'findUnique',
  'findUniqueOrThrow',
  'findFirst',
  'findFirstOrThrow',
  'findMany',
  'create',
  'createMany',
  'createManyAndReturn',
  'update',
  'updateMany',
  'updateManyAndReturn',
  'upsert',
  'delete',
  'deleteMany',
  'count',
  'aggregate',
  'groupBy',
]);
const RAW_METHODS = new Set(['$queryRaw', '$queryRawUnsafe', '$executeRaw', '$executeRawUnsafe']);
const DATABASE_METHODS = new Set(['read', 'statement', 'preparedWrite', 'raw']);
/** SQL text in a string: a statement's opening words, upper case as this code base writes SQL. */
const SQL_TEXT =
  /^\s*(SELECT\s|INSERT\s+INTO\s|UPDATE\s+"?\w+"?\s+SET\s|DELETE\s+FROM\s|WITH\s+\w+\s+AS\s*\(|LOCK\s+TABLE\s)/;

/** One place where code reaches the database or holds SQL. */
export interface DataSite {
  /** 1-based line. */
  line: number;
  /**
   * `prisma-call`: a model delegate call (`ctx.db.brand.findMany`, `tx.emailMessage.create`); `raw-sql`:
   * `$queryRaw`/`$executeRaw` (and their `Unsafe` forms); `sql-text`: `Prisma.sql`/`Prisma.raw`/`Prisma.join`/
   * `Prisma.empty` or a string holding a SQL statement; `database-port`: `database.read/statement/preparedWrite/raw`
   * (the runner below Prisma); `prisma-value`: a runtime value imported from src/generated (`Prisma`, enums);
   * `prisma-type`: a type imported from src/generated.
   */
  kind: 'prisma-call' | 'raw-sql' | 'sql-text' | 'database-port' | 'prisma-value' | 'prisma-type';
  text: string;
}

/**
 * Where `text` (one TypeScript file) reaches the database or holds SQL, read from its syntax tree. Transactions
 * (`$transaction`) are not sites: a service may open one and pass its `tx` to stores. @param delegates see
 * {@link prismaDelegates}.
 */
export function dataSites(fileName: string, text: string, delegates: Set<string>): DataSite[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const sites: DataSite[] = [];
  const add = (node: ts.Node, kind: DataSite['kind'], what = node.getText(source)) =>
    sites.push({
      line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
      kind,
      text: what.replace(/\s+/g, ' ').slice(0, 80),
    });
  const fromGenerated = (spec: string) => /(^|\/)generated\//.test(spec);
  const visit = (node: ts.Node): void => {
    if (
      ts.isImportDeclaration(node) &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      fromGenerated(node.moduleSpecifier.text)
    ) {
      const clause = node.importClause;
      const typeOnly = clause?.isTypeOnly ?? false;
      const named =
        clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : [];
      for (const el of named) add(el, typeOnly || el.isTypeOnly ? 'prisma-type' : 'prisma-value', el.name.text);
      if (clause?.name) add(clause.name, typeOnly ? 'prisma-type' : 'prisma-value');
      if (clause?.namedBindings && ts.isNamespaceImport(clause.namedBindings))
        add(clause.namedBindings, typeOnly ? 'prisma-type' : 'prisma-value');
      if (!clause) add(node, 'prisma-value');
      return;
    }
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const callee = node.expression;
      const method = callee.name.text;
      const target = callee.expression;
      if (DELEGATE_METHODS.has(method) && ts.isPropertyAccessExpression(target) && delegates.has(target.name.text))
        add(node, 'prisma-call', callee.getText(source));
      else if (RAW_METHODS.has(method)) add(node, 'raw-sql', callee.getText(source));
      else if (
        DATABASE_METHODS.has(method) &&
        ((ts.isIdentifier(target) && target.text === 'database') ||
          (ts.isPropertyAccessExpression(target) && target.name.text === 'database'))
      )
        add(node, 'database-port', callee.getText(source));
    }
    if (ts.isTaggedTemplateExpression(node) && RAW_METHODS.has(node.tag.getText(source).split('.').pop()!))
      add(node, 'raw-sql', node.tag.getText(source));
    if (
      ts.isPropertyAccessExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'Prisma' &&
      ['sql', 'raw', 'join', 'empty'].includes(node.name.text)
    )
      add(node, 'sql-text');
    else if (
      (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node)) &&
      SQL_TEXT.test(node.text) &&
      !(
        ts.isTaggedTemplateExpression(node.parent) ||
        (ts.isTemplateExpression(node.parent) && ts.isTaggedTemplateExpression(node.parent.parent))
      )
    )
      add(node, 'sql-text', node.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return sites;
}

/** The kinds of {@link DataSite} that are queries or SQL (everything but imported generated names). */
export const QUERY_KINDS: readonly DataSite['kind'][] = ['prisma-call', 'raw-sql', 'sql-text', 'database-port'];
