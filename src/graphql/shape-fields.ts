import type { z } from 'zod';

/**
 * The GraphQL fields of an object type derived from the domain's zod schema of the noun (issue 23 "one declaration
 * per noun"): the domain declares the shape once (field, type, nullability, description), the REST route uses the
 * schema as its response, and the GraphQL type lists its fields through this, so a new field of the noun is declared
 * in one place. Each key of `schema`, in order, becomes a field that exposes the property of the same name:
 *
 * | zod                               | GraphQL                                  |
 * | --------------------------------- | ---------------------------------------- |
 * | `z.string()`                      | `String` (`ID` when the key is in `ids`) |
 * | `z.iso.datetime()`                | `DateTime`                               |
 * | `z.number().int()` / `z.number()` | `Int` / `Float`                          |
 * | `z.boolean()`                     | `Boolean`                                |
 * | `z.array(z.string())`             | `[String!]`                              |
 * | `z.record(…)`                     | `JSON`                                   |
 *
 * `.nullable()` / `.optional()` make the field nullable; `.describe()` is its description. Anything else (enums,
 * nested objects, fields with arguments) is given in `custom` (keyed by the schema's key; a custom field may also
 * add a key the schema lacks); `omit` leaves keys out.
 * @throws Error at schema build time for a key of a kind the table lacks and no `custom` field.
 */
export function shapeFields<S extends z.ZodRawShape, F>(
  t: any, // the Pothos field builder of whatever object type calls this
  schema: z.ZodObject<S>,
  opts: { ids?: readonly (keyof S)[]; custom?: Record<string, F>; omit?: readonly (keyof S)[] } = {},
): Record<string, F> {
  const fields: Record<string, F> = {};
  for (const [key, field] of Object.entries(schema.shape) as [string, z.ZodType][]) {
    if (opts.omit?.includes(key)) continue;
    const custom = opts.custom?.[key];
    fields[key] = custom ?? derived(t, key, field, opts.ids?.includes(key) ?? false);
  }
  for (const [key, custom] of Object.entries(opts.custom ?? {})) if (!(key in fields)) fields[key] = custom;
  return fields;
}

/** The field of one schema key (see {@link shapeFields}). */
function derived(t: any, key: string, field: z.ZodType, isId: boolean) {
  let inner = field;
  let nullable = false;
  while (inner.def.type === 'nullable' || inner.def.type === 'optional') {
    nullable = true;
    inner = (inner.def as unknown as { innerType: z.ZodType }).innerType;
  }
  const description = field.description ?? inner.description;
  const options = { nullable, ...(description ? { description } : {}) };
  const kind = inner.def.type;
  const format = (inner as unknown as { format?: string | null }).format;
  if (kind === 'string' && format === 'datetime') {
    return t.field({ type: 'DateTime', ...options, resolve: (p: Record<string, unknown>) => p[key] });
  }
  if (kind === 'string') return isId ? t.exposeID(key, options) : t.exposeString(key, options);
  if (kind === 'boolean') return t.exposeBoolean(key, options);
  if (kind === 'number') {
    return (inner as unknown as { isInt?: boolean }).isInt ? t.exposeInt(key, options) : t.exposeFloat(key, options);
  }
  if (kind === 'array') {
    const element = (inner.def as unknown as { element: z.ZodType }).element;
    if (element.def.type === 'string') return t.exposeStringList(key, options);
  }
  if (kind === 'record') return t.field({ type: 'JSON', ...options, resolve: (p: Record<string, unknown>) => p[key] });
  throw new Error(`shapeFields: no GraphQL field for "${key}" (zod ${kind}); pass it in custom`);
}
