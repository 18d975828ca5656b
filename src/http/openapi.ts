import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { createJsonSchemaTransform, createJsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Config } from '../config.js';
import { ERROR_CODES, type ErrorCode } from '../rest/error-codes.js';

declare module 'fastify' {
  interface FastifySchema {
    /**
     * Documentation only: the error codes this operation's domain functions raise (404 NOT_FOUND, 409 …), by their
     * code in {@link ERROR_CODES}. The codes any route of its kind answers (401, 400 VALIDATION_FAILED, the
     * Idempotency-Key codes of a POST, …) are added by {@link documentRoute}; do not list them.
     */
    errors?: readonly ErrorCode[];
    /** Documentation only: headers a success response carries, by status (e.g. a paging cursor). */
    responseHeaders?: ResponseHeaders;
  }
}

/** Response headers by status: name → its JSON schema with a description (e.g. `{type: 'string', description}`). */
export type ResponseHeaders = Record<number, Record<string, { type: 'string'; description: string; enum?: string[] }>>;

/** One violation of a validation failure (component `ErrorDetail`). */
export const ErrorDetailSchema = z
  .object({
    code: z.string().describe('Stable code, e.g. REQUIRED, INVALID_FORMAT, TOO_LONG, UNKNOWN_FIELD.'),
    field: z.string().describe('Dotted path of the field, e.g. `sampleMessages.2` or `query.limit`.'),
    message: z.string(),
  })
  .meta({ id: 'ErrorDetail', description: 'One violation of a validation failure.' });

/** The one REST error body `{"error": {code, message, field?, details?}}` (component `Error`; src/rest/errors.ts). */
export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string().describe('Stable machine-readable code; each operation lists the codes it can answer.'),
      message: z.string().describe('Human-readable explanation; may change, do not parse it.'),
      field: z.string().optional().describe('The field at fault, when there is one.'),
      details: z.array(ErrorDetailSchema).optional().describe('Every violation, for VALIDATION_FAILED.'),
    }),
  })
  .meta({ id: 'Error', description: 'The one error body of every 4xx and 5xx answer.' });

/** Names of the OpenAPI tags, one per area, with their descriptions (order is the reference page's order). */
export const TAGS = [
  { name: 'operations', description: 'Liveness and readiness probes; no API key needed.' },
  {
    name: 'compliance: brands',
    description: '10DLC brands: registration with the sandbox TCR registry, identity status, vetting (spec 4.1).',
  },
  {
    name: 'compliance: campaigns',
    description: '10DLC campaigns: use case, carrier (MNO) review per network, numbers assigned (spec 4.2).',
  },
  { name: 'compliance: numbers', description: 'Provisioned E.164 numbers (DIDs) and the DID-to-campaign mapping.' },
  { name: 'compliance: enums', description: 'Values of the vertical, entityType and usecase enums (spec 4.3).' },
  {
    name: 'email',
    description: 'Email identities, sending and replying, threads by Message-ID/In-Reply-To/References (spec 4.4).',
  },
  { name: 'agents', description: 'Email agents that answer inbound mail, and their knowledge documents (spec 4.5).' },
  {
    name: 'contacts',
    description:
      'Who owns which addresses and E.164 numbers; an agent shares SMS and call history only with the contact it belongs to.',
  },
  {
    name: 'webhooks',
    description: 'Signed (HMAC) at-least-once delivery of account events to your URL, logs and redelivery (spec 4.6).',
  },
  {
    name: 'admin',
    description: 'Operator surface: accounts and API keys while the service runs (ADMIN_TOKEN; docs/operations.md).',
  },
  {
    name: 'events',
    description: 'The account event log: publish, Server-Sent Events stream with Last-Event-ID replay, history (4.7).',
  },
] as const;

/** Canonical spelling of request headers the document names (Fastify validates them in lower case). */
const HEADER_NAMES: Record<string, string> = {
  'idempotency-key': 'Idempotency-Key',
  'last-event-id': 'Last-Event-ID',
};

const idempotencyKeyHeader = z
  .string()
  .min(1)
  .max(255)
  .optional()
  .describe(
    'Makes a retried POST safe: a retry with the same key, body and API key within 24 h gets the first answer ' +
      'again (`Idempotent-Replayed: true`) and changes nothing (docs/conventions.md, "Idempotency").',
  );

const statusText: Record<string, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  503: 'Service Unavailable',
};

const errorSchemas = new Map<string, z.ZodType>();

/**
 * The body of one error status of one operation: the `Error` component narrowed to the codes it can carry
 * (`allOf: [$ref Error, {error: {code: enum}}]`), so a generated client sees the exact codes. Cached per code set.
 */
function errorSchemaFor(codes: readonly ErrorCode[]): z.ZodType {
  const key = codes.join(',');
  let schema = errorSchemas.get(key);
  if (!schema) {
    schema = z.intersection(
      ErrorSchema,
      z.looseObject({ error: z.looseObject({ code: z.enum(codes as [ErrorCode, ...ErrorCode[]]) }) }),
    );
    errorSchemas.set(key, schema);
  }
  return schema;
}

type RouteSchema = NonNullable<RouteOptions['schema']> & Record<string, unknown>;

/**
 * The codes a route answers by its kind, beside those it lists in `schema.errors`: 401 UNAUTHENTICATED unless
 * public (src/rest/auth.ts); 400 VALIDATION_FAILED when it validates a request part (src/rest/zod.ts); the body
 * parser's codes on POST/PUT/PATCH/DELETE (BODY_NOT_ALLOWED where the route takes no body) (src/http JSON parser, src/rest/errors.ts); the Idempotency-Key codes on an
 * authenticated POST (src/rest/idempotency.ts).
 */
export function implicitErrorCodes(schema: RouteSchema, methods: readonly string[], isPublic: boolean): ErrorCode[] {
  const codes: ErrorCode[] = [];
  // Every authenticated route counts requests per key and failed authentications per address (src/http/rate-limit.ts).
  if (!isPublic) codes.push('UNAUTHENTICATED', 'RATE_LIMITED', 'AUTH_RATE_LIMITED');
  if (schema.body || schema.querystring || schema.params || schema.headers) codes.push('VALIDATION_FAILED');
  if (schema.params) codes.push('BAD_URL');
  // Fastify parses a JSON body on POST, PUT, PATCH and DELETE alike.
  if (methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH' || m === 'DELETE')) {
    codes.push('MALFORMED_JSON', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE');
    // src/rest/inputs.ts: an operation without a body schema refuses a body.
    if (!schema.body) codes.push('BODY_NOT_ALLOWED');
  }
  if (!isPublic && methods.includes('POST')) {
    codes.push('INVALID_IDEMPOTENCY_KEY', 'IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_REUSED');
    codes.push('IDEMPOTENCY_RECORD_UNREADABLE');
  }
  return codes;
}

const baseTransform = createJsonSchemaTransform({ skipList: [] });
const baseTransformObject = createJsonSchemaTransformObject({});

/**
 * @fastify/swagger `transform`: completes one route's operation from what the route declares and what the house
 * does to every route of its kind: its error responses (each status with its codes and the `Error` component), the
 * `Idempotency-Key` header on authenticated POSTs, `security` (none on public routes; `?token=` beside the bearer
 * key on stream routes), then converts the zod schemas (fastify-type-provider-zod). Throws on a code missing from
 * {@link ERROR_CODES}.
 */
export const documentRoute: typeof baseTransform = (input) => {
  const schema = input.schema as RouteSchema | undefined;
  if (!schema || schema.hide) return baseTransform(input);
  const route = input.route as RouteOptions;
  const methods = [route.method].flat().map((m) => String(m).toUpperCase());
  const isPublic = route.config?.public === true;
  const { errors = [], ...rest } = schema as RouteSchema & { errors?: readonly ErrorCode[] };

  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...implicitErrorCodes(rest, methods, isPublic), ...errors])) {
    const entry = ERROR_CODES[code];
    if (!entry) throw new Error(`${route.url}: error code ${code} is not in src/rest/error-codes.ts`);
    byStatus.set(entry.status, [...(byStatus.get(entry.status) ?? []), code]);
  }
  const response: Record<string, unknown> = { ...(rest.response as Record<string, unknown> | undefined) };
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    response[status] = {
      description: [
        `${statusText[status] ?? 'Error'}:`,
        ...codes.map((c) => `- \`${c}\`: ${ERROR_CODES[c].meaning}.`),
      ].join('\n'),
      content: { 'application/json': { schema: errorSchemaFor(codes) } },
    };
  }

  if (!Object.keys(response).some((status) => status.startsWith('4'))) {
    // Routes with no client error of their own (the public probes) still get Node's own 4xx, answered before
    // routing and without a body: headers over 16 KiB (http.maxHeaderSize).
    response[431] = z
      .undefined()
      .describe('Request Header Fields Too Large: the request headers exceed 16 KiB (answered by Node, no body).');
  }

  let headers = rest.headers as z.ZodObject | undefined;
  if (!isPublic && methods.includes('POST')) {
    headers = (headers ?? z.object({})).extend({ 'idempotency-key': idempotencyKeyHeader });
  }
  const security: { [scheme: string]: string[] }[] | undefined = isPublic
    ? []
    : route.config?.allowQueryToken
      ? [{ bearer: [] }, { queryToken: [] }]
      : undefined;

  const out = baseTransform({
    ...input,
    schema: { ...rest, response, ...(headers ? { headers } : {}), ...(security ? { security } : {}) },
  });
  const props = (out.schema as { headers?: { properties?: Record<string, unknown>; required?: string[] } }).headers;
  if (props?.properties) {
    props.properties = Object.fromEntries(
      Object.entries(props.properties).map(([name, s]) => [HEADER_NAMES[name] ?? name, s]),
    );
    if (props.required) props.required = props.required.map((name) => HEADER_NAMES[name] ?? name);
  }
  // Response headers the house sends (@fastify/swagger reads `headers` beside a response's schema).
  const responses = (out.schema as { response?: Record<string, Record<string, unknown>> }).response ?? {};
  const declared = (rest as { responseHeaders?: ResponseHeaders }).responseHeaders ?? {};
  for (const [status, res] of Object.entries(responses)) {
    const headers: ResponseHeaders[number] = { ...declared[Number(status)] };
    if (status === '401') {
      headers['WWW-Authenticate'] = { type: 'string', description: '`Bearer` (RFC 6750).' };
    }
    if (!isPublic && methods.includes('POST') && status.startsWith('2')) {
      headers['Idempotent-Replayed'] = {
        type: 'string',
        enum: ['true'],
        description: '`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`.',
      };
    }
    if (Object.keys(headers).length > 0) res.headers = headers;
  }
  return out;
};

/** Every `$ref` to `#/components/schemas/<name>` inside `value`. */
function refsIn(value: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(value)) {
    for (const v of value) refsIn(v, out);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')) {
        out.add(v.slice('#/components/schemas/'.length));
      } else refsIn(v, out);
    }
  }
  return out;
}

interface OperationObject {
  responses?: Record<string, { description?: string }>;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: any }> } | { $ref: string };
}

const SCHEMA_REF = '#/components/schemas/';

/**
 * Moves each named body schema (`<Name>Input`) to `components.requestBodies.<Name>` and points the operations at it.
 * Where it lives matters to generators: openapi-typescript types a property with a `default` as required unless the
 * schema sits under a request body, so `country` (default US) stays optional only there. A body that may be absent
 * (`anyOf` with null) is marked not required.
 */
function bodiesAsComponents(
  paths: Record<string, Record<string, OperationObject>>,
  schemas: Record<string, any>,
): Record<string, unknown> {
  const bodies: Record<string, unknown> = {};
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      const body = operation.requestBody;
      if (!body || '$ref' in body) continue;
      const schema = body.content?.['application/json']?.schema;
      if (Array.isArray(schema?.anyOf) && schema.anyOf.some((s: { type?: string }) => s.type === 'null')) {
        body.required = false;
      }
      const ref: unknown = schema?.$ref;
      if (typeof ref !== 'string' || !ref.startsWith(SCHEMA_REF) || !ref.endsWith('Input')) continue;
      const name = ref.slice(SCHEMA_REF.length);
      const component = schemas[name];
      if (!component) continue;
      const bodyName = name.slice(0, -'Input'.length);
      bodies[bodyName] = {
        description: component.description ?? `The ${bodyName} body.`,
        required: true,
        content: { 'application/json': { schema: component } },
      };
      operation.requestBody = { $ref: `#/components/requestBodies/${bodyName}` };
    }
  }
  return Object.fromEntries(Object.entries(bodies).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * @fastify/swagger `transformObject`: adds the named zod schemas as components (fastify-type-provider-zod emits an
 * input and an output variant of each), keeps only those the operations reach, and names responses that have no
 * description by their status.
 */
export const finishDocument: typeof baseTransformObject = (input) => {
  const doc = baseTransformObject(input) as {
    paths?: Record<string, Record<string, OperationObject>>;
    components?: { schemas?: Record<string, unknown>; requestBodies?: Record<string, unknown> };
  };
  const schemas = doc.components?.schemas ?? {};
  const requestBodies = bodiesAsComponents(doc.paths ?? {}, schemas);
  if (doc.components && Object.keys(requestBodies).length > 0) doc.components.requestBodies = requestBodies;
  const reachable = refsIn([doc.paths, requestBodies], new Set());
  const queue = [...reachable];
  while (queue.length > 0) {
    const name = queue.pop()!;
    for (const ref of refsIn(schemas[name], new Set())) {
      if (!reachable.has(ref)) {
        reachable.add(ref);
        queue.push(ref);
      }
    }
  }
  if (doc.components) {
    doc.components.schemas = Object.fromEntries(
      Object.entries(schemas)
        .filter(([name]) => reachable.has(name))
        .sort(([a], [b]) => a.localeCompare(b)),
    );
  }
  for (const operations of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const [status, res] of Object.entries(operation.responses ?? {})) {
        if (res.description === 'Default Response') res.description = statusText[status] ?? 'Response';
      }
    }
  }
  return doc as ReturnType<typeof baseTransformObject>;
};

/** One registered route as Fastify saw it (for the test that the document and the routes agree). */
export interface RegisteredRoute {
  method: string;
  url: string;
  /** `schema.hide`: kept out of the document (GraphQL, the document itself, the reference page). */
  hidden: boolean;
}

const registeredRoutes = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/** Every route registered after {@link registerOpenApi}, HEAD twins excluded. */
export function routesOf(app: FastifyInstance): readonly RegisteredRoute[] {
  return registeredRoutes.get(app) ?? [];
}

/**
 * Registers the OpenAPI 3.1 document (served at GET /openapi.json by the system routes) and the rendered
 * reference at /docs (Swagger UI from the packaged swagger-ui-dist assets, no CDN, no external validator).
 * Call before registering routes: @fastify/swagger collects routes added after it.
 */
export async function registerOpenApi(app: FastifyInstance, config: Config): Promise<void> {
  const routes: RegisteredRoute[] = [];
  registeredRoutes.set(app, routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue; // Fastify's automatic twin of a GET route (the app declares no HEAD route)
      routes.push({ method: String(method), url: route.url, hidden: Boolean((route.schema as RouteSchema)?.hide) });
    }
  });
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Switchboard REST API',
        version: '0.1.0',
        description:
          '10DLC compliance, email identities and agents, webhooks and the event stream of one account. ' +
          'Authenticate with `Authorization: Bearer <API_KEY>`. Every error answers the one body ' +
          '`{"error": {"code", "message", "field"?, "details"?}}` (component `Error`); each operation lists its ' +
          'statuses and codes. GraphQL serves the same operations at `/graphql`.',
        license: { name: 'UNLICENSED', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [
        ...(config.PUBLIC_BASE_URL
          ? [{ url: config.PUBLIC_BASE_URL.replace(/\/+$/, ''), description: 'PUBLIC_BASE_URL' }]
          : []),
        { url: '/', description: 'The instance serving this document' },
      ],
      tags: TAGS.map((t) => ({ ...t })),
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer <API_KEY>`.' },
          queryToken: {
            type: 'apiKey',
            in: 'query',
            name: 'token',
            description: 'The API key as `?token=`, for stream clients that cannot send headers (spec 5.2).',
          },
        },
      },
      security: [{ bearer: [] }],
    },
    transform: documentRoute,
    transformObject: finishDocument,
  });
  // The reference page and its assets need no API key: mark every route the plugin adds as public and undocumented.
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...(route.config as object), public: true };
      route.schema = { ...route.schema, hide: true };
    });
    await docs.register(fastifySwaggerUi, {
      routePrefix: '/docs',
      uiConfig: { validatorUrl: null, deepLinking: true, displayOperationId: true, tryItOutEnabled: false },
      staticCSP: true,
    });
  });
}
