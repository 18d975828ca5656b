// GraphQL object fields derived from a domain response shape (issue 23 "one declaration per noun"): the compliance
// nouns (brand, vetting, carrier, campaign, number) are declared once as zod objects in
// src/domain/compliance/compliance.dto.ts; their GraphQL object types take every field from that shape, so a new
// field of the API appears in REST (the same zod object) and GraphQL without touching this folder. Only fields the
// mapping cannot infer are written out: GraphQL enums (`enums`), nested objects and GraphQL-only fields (`fields`).

import { z } from 'zod';
import { idString, isoTimestamp } from '../../domain/compliance/compliance.dto.js';
import type { builder, InputFields } from '../builder.js';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;
type ObjectFields<P> = PothosSchemaTypes.ObjectFieldBuilder<Types, P>;
type FieldMap = Record<string, PothosSchemaTypes.FieldRef<Types, any, 'Object'>>;

/** How each scalar of a shape maps: `id` → ID, `isoTimestamp` → DateTime, string/number/boolean/string[] as is. */
function unwrap(schema: z.ZodType): { inner: z.ZodType; nullable: boolean } {
  return schema instanceof z.ZodNullable
    ? { inner: schema.unwrap() as z.ZodType, nullable: true }
    : { inner: schema, nullable: false };
}

/**
 * The GraphQL fields of `shape` for an object type whose parent value is the shape's output: every key of the
 * shape, in order, typed from its zod schema (nullable stays nullable; `.describe()` becomes the description, with a
 * final period). `enums` gives the GraphQL enum of string fields that have one; `fields` gives fields written out
 * (nested objects, loaders, arguments) and GraphQL-only fields, which follow the shape's.
 * @throws Error at schema build for a shape field the mapping cannot type (a nested object not in `fields`).
 */
export function shapeFields<P extends object>(
  t: ObjectFields<P>,
  shape: z.ZodObject,
  options: { enums?: Record<string, unknown>; fields?: FieldMap } = {},
): FieldMap {
  const out: FieldMap = {};
  const explicit = options.fields ?? {};
  for (const [key, schema] of Object.entries(shape.shape) as [string, z.ZodType][]) {
    if (key in explicit) {
      out[key] = explicit[key]!;
      continue;
    }
    const { inner, nullable } = unwrap(schema);
    const given = schema.description ?? inner.description;
    // The timestamp marker's own description says what DateTime already does.
    const text = given === isoTimestamp.description ? undefined : given;
    const description = text === undefined ? undefined : text.endsWith('.') ? text : `${text}.`;
    const opts = { nullable, ...(description !== undefined ? { description } : {}) };
    const resolve = (parent: P) => (parent as Record<string, unknown>)[key] as never;
    const enumRef = options.enums?.[key];
    const name = key as never;
    if (enumRef !== undefined) out[key] = t.field({ type: enumRef as never, ...opts, resolve });
    else if (inner === isoTimestamp) out[key] = t.field({ type: 'DateTime', ...opts, resolve });
    else if (inner === idString) out[key] = t.exposeID(name, opts as never);
    else if (inner instanceof z.ZodString) out[key] = t.exposeString(name, opts as never);
    else if (inner instanceof z.ZodNumber) out[key] = t.exposeInt(name, opts as never);
    else if (inner instanceof z.ZodBoolean) out[key] = t.exposeBoolean(name, opts as never);
    else if (inner instanceof z.ZodArray && inner.element instanceof z.ZodString) {
      out[key] = t.exposeStringList(name, opts as never);
    } else throw new Error(`shapeFields: field ${key} needs an explicit GraphQL field`);
  }
  for (const [key, field] of Object.entries(explicit)) if (!(key in out)) out[key] = field;
  return out;
}

/** The zod def type of a schema (zod 4: `_zod.def.type`), e.g. string, enum, boolean, optional, nullable, default. */
function defType(schema: z.ZodType): string {
  return (schema as unknown as { _zod: { def: { type: string } } })._zod.def.type;
}

/** The type a zod field parses to, under optional/nullable/default wrappers and preprocess pipes. */
function core(field: z.ZodType): { inner: z.ZodType; optional: boolean } {
  let inner = field;
  let optional = false;
  for (;;) {
    const type = defType(inner);
    if (type === 'optional' || type === 'nullable' || type === 'default') {
      optional = true;
      inner = (inner as unknown as { _zod: { def: { innerType: z.ZodType } } })._zod.def.innerType;
    } else if (type === 'pipe') {
      // A preprocess is a pipe from a transform: the field's type is what it pipes into.
      const def = (inner as unknown as { _zod: { def: { in: z.ZodType; out: z.ZodType } } })._zod.def;
      inner = defType(def.in) === 'transform' ? def.out : def.in;
    } else return { inner, optional };
  }
}

/**
 * The GraphQL input fields of a body's zod fields: required when the zod field is (neither optional, nullish nor
 * defaulted), typed String (also a zod enum without a GraphQL one), [String], ID (`ids`), Boolean, Int or the GraphQL
 * enum `enums` gives; the description is the zod one.
 * Parsing stays the domain's (parseArgs runs the same schema REST runs), so limits and rules are not repeated here.
 * @throws Error at schema build for a field the mapping cannot type.
 */
export function shapeInputFields(
  t: InputFields,
  fields: Record<string, z.ZodType>,
  options: {
    enums?: Record<string, unknown>;
    /** String fields typed ID. */
    ids?: readonly string[];
    /** Fields left out of the GraphQL input. */
    omit?: readonly string[];
    /** Every field optional (a partial update's input). */
    partial?: boolean;
  } = {},
): Record<string, any> {
  const out: Record<string, any> = {};
  for (const [key, field] of Object.entries(fields)) {
    if (options.omit?.includes(key)) continue;
    const { inner, optional } = core(field);
    const required = !options.partial && !optional;
    const text = field.description;
    const opts = { required, ...(text !== undefined ? { description: text } : {}) };
    const enumRef = options.enums?.[key];
    const type = defType(inner);
    if (enumRef !== undefined) out[key] = t.field({ type: enumRef as never, ...opts });
    else if (type === 'string' && options.ids?.includes(key)) out[key] = t.id(opts);
    else if (type === 'string') out[key] = t.string(opts);
    else if (type === 'enum') out[key] = t.string(opts);
    else if (
      type === 'array' &&
      ['string', 'enum'].includes(defType(core((inner as z.ZodArray).element as z.ZodType).inner))
    ) {
      out[key] = t.stringList(opts);
    } else if (type === 'boolean') out[key] = t.boolean(opts);
    else if (type === 'number') out[key] = t.int(opts);
    else throw new Error(`shapeInputFields: field ${key} (${type}) needs an explicit GraphQL input field`);
  }
  return out;
}
