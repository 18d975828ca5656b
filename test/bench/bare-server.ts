/**
 * The bare baseline of `npm run bench`: node:http + `pg` with named prepared statements (or PGlite, in PGlite
 * mode) reading and writing the service's own tables and answering the same JSON bytes as the service, with no
 * framework, no validation library and no ORM. What the service costs above this is its overhead.
 *
 * Environment: PORT; DATABASE_URL (PostgreSQL) or BARE_PGLITE_DIR (a PGlite data directory, a copy of the
 * service's); BARE_KEYS, JSON `{ "<api key>": "<account id>" }` (keys are resolved from memory: the ideal cache).
 *
 * Routes (the service's paths): GET /compliance/brands/{id}, GET /compliance/brands?limit=N, POST /graphql
 * (`brand(id)` and `brands(first)` with the bench's selection set only), POST /api/events (one INSERT),
 * POST /compliance/brands (one INSERT of the brand row), GET /api/events with Last-Event-ID (replay as SSE).
 * Prints `listening <port>` when ready. Loopback only.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pg from 'pg';
import { brandThroughput } from '../../src/domain/compliance/throughput.rules.js';
import { readBody, send, serve } from './bare-http.js';

interface Runner {
  query(name: string, text: string, values: unknown[]): Promise<Record<string, any>[]>;
}

async function openRunner(): Promise<Runner> {
  if (process.env.DATABASE_URL) {
    const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
    return {
      async query(name, text, values) {
        return (await pool.query({ name, text, values })).rows;
      },
    };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const lite = await PGlite.create({ dataDir: process.env.BARE_PGLITE_DIR! });
  return {
    async query(_name, text, values) {
      return (await lite.query<Record<string, any>>(text, values)).rows;
    },
  };
}

const db = await openRunner();
const keys = new Map<string, string>(Object.entries(JSON.parse(process.env.BARE_KEYS ?? '{}')));

const BRAND_COLUMNS = `id, name, ein, vertical, entity_type, country, website, email, phone, stock_symbol, stock_exchange,
  display_name, street, city, state, postal_code, first_name, last_name, mobile_phone, brand_relationship,
  alt_business_id, alt_business_id_type, business_contact_email, reference_id, mock, vetting_score, status,
  identity_status, created_at, updated_at`;

function brandJson(r: Record<string, any>) {
  return {
    id: r.id,
    name: r.name,
    ein: r.ein,
    vertical: r.vertical,
    entityType: r.entity_type,
    country: r.country,
    website: r.website,
    email: r.email,
    phone: r.phone,
    stockSymbol: r.stock_symbol,
    stockExchange: r.stock_exchange,
    companyName: r.name,
    displayName: r.display_name ?? r.name,
    street: r.street,
    city: r.city,
    state: r.state,
    postalCode: r.postal_code,
    firstName: r.first_name,
    lastName: r.last_name,
    mobilePhone: r.mobile_phone,
    brandRelationship: r.brand_relationship,
    altBusinessId: r.alt_business_id,
    altBusinessIdType: r.alt_business_id_type,
    businessContactEmail: r.business_contact_email,
    referenceId: r.reference_id,
    mock: r.mock,
    status: r.status,
    identityStatus: r.identity_status,
    vettingScore: r.vetting_score,
    // The response carries the brand's computed throughput tier: the same pure rule the service uses.
    throughput: brandThroughput({ entityType: r.entity_type, vettingScore: r.vetting_score }),
    createdAt: (r.created_at as Date).toISOString(),
    updatedAt: (r.updated_at as Date).toISOString(),
  };
}

function accountOf(req: IncomingMessage, url: URL): string | undefined {
  const h = req.headers.authorization;
  const key = h?.startsWith('Bearer ') ? h.slice(7) : (url.searchParams.get('token') ?? undefined);
  return key ? keys.get(key) : undefined;
}

async function brandById(accountId: string, id: string) {
  const rows = await db.query(
    'bare_brand',
    `SELECT ${BRAND_COLUMNS} FROM compliance_brands WHERE id = $1 AND account_id = $2`,
    [id, accountId],
  );
  return rows[0] ? brandJson(rows[0]) : undefined;
}

async function brandPage(accountId: string, limit: number) {
  const rows = await db.query(
    'bare_brands',
    `SELECT ${BRAND_COLUMNS} FROM compliance_brands WHERE account_id = $1 ORDER BY id LIMIT $2`,
    [accountId, limit + 1],
  );
  return { page: rows.slice(0, limit).map(brandJson), more: rows.length > limit };
}

/** The fields the bench's GraphQL queries select, in their order (GraphQL answers follow the selection). */
const GQL_FIELDS = [
  'id',
  'name',
  'ein',
  'vertical',
  'entityType',
  'country',
  'website',
  'email',
  'phone',
  'stockSymbol',
  'stockExchange',
  'status',
  'identityStatus',
  'createdAt',
  'updatedAt',
] as const;
const gqlBrand = (b: Record<string, unknown>) => Object.fromEntries(GQL_FIELDS.map((f) => [f, b[f]]));

const cursorOf = (id: string) => Buffer.from(id, 'utf8').toString('base64url');

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url!, 'http://x');
  const accountId = accountOf(req, url);
  if (!accountId) return send(res, 401, { error: { code: 'UNAUTHENTICATED', message: 'missing or unknown API key' } });
  const p = url.pathname;
  if (req.method === 'GET' && p.startsWith('/compliance/brands/')) {
    const brand = await brandById(accountId, decodeURIComponent(p.slice('/compliance/brands/'.length)));
    return brand ? send(res, 200, brand) : send(res, 404, { error: { code: 'NOT_FOUND', message: 'brand not found' } });
  }
  if (req.method === 'GET' && p === '/compliance/brands') {
    const limit = Number(url.searchParams.get('limit') ?? 50);
    const { page, more } = await brandPage(accountId, limit);
    return send(res, 200, { brands: page, nextCursor: more ? cursorOf(page.at(-1)!.id) : null });
  }
  if (req.method === 'POST' && p === '/graphql') {
    const body = await readBody(req);
    if (body.variables?.id !== undefined) {
      const brand = await brandById(accountId, String(body.variables.id));
      return send(res, 200, { data: { brand: brand ? gqlBrand(brand) : null } });
    }
    const first = Number(body.variables?.first ?? 20);
    const { page, more } = await brandPage(accountId, first);
    return send(res, 200, {
      data: {
        brands: {
          edges: page.map((node) => ({ cursor: cursorOf(node.id), node: gqlBrand(node) })),
          pageInfo: { hasNextPage: more, endCursor: page.length ? cursorOf(page.at(-1)!.id) : null },
        },
      },
    });
  }
  if (req.method === 'POST' && p === '/api/events') {
    const body = await readBody(req);
    const channel = String(body.eventType).split('.')[0];
    // `seq` (the account's gapless position, NOT NULL) is written as 0: the baseline is the bare single-row INSERT
    // the issue names, with no per-account ordering; its rows go to accounts the service's scenarios do not read.
    const [row] = await db.query(
      'bare_event',
      'INSERT INTO events (account_id, channel, event_type, payload, seq) VALUES ($1, $2, $3, $4, 0) RETURNING id, created_at',
      [accountId, channel, body.eventType, JSON.stringify(body.payload ?? {})],
    );
    return send(res, 202, {
      id: String(row!.id),
      channel,
      eventType: body.eventType,
      timestamp: (row!.created_at as Date).toISOString(),
    });
  }
  if (req.method === 'POST' && p === '/compliance/brands') {
    const b = await readBody(req);
    const now = new Date();
    const [row] = await db.query(
      'bare_brand_insert',
      `INSERT INTO compliance_brands (id, account_id, name, ein, vertical, entity_type, country, website, email, phone,
         stock_symbol, stock_exchange, status, identity_status, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'PENDING', 'SELF_DECLARED', $13, $13)
       RETURNING ${BRAND_COLUMNS}`,
      [
        randomUUID(),
        accountId,
        b.name,
        b.ein,
        b.vertical,
        b.entityType,
        b.country ?? 'US',
        b.website ?? null,
        b.email ?? null,
        b.phone ?? null,
        b.stockSymbol ?? null,
        b.stockExchange ?? null,
        now,
      ],
    );
    return send(res, 201, brandJson(row!));
  }
  if (req.method === 'GET' && p === '/api/events') {
    const after = String(req.headers['last-event-id'] ?? '0');
    const rows = await db.query(
      'bare_replay',
      `SELECT id, channel, event_type, payload, created_at FROM events
       WHERE account_id = $1 AND id > $2 ORDER BY id LIMIT 1000`,
      [accountId, after],
    );
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    let out = 'retry: 1000\n: connected\n\n';
    for (const r of rows) {
      const data = JSON.stringify({
        channel: r.channel,
        eventType: r.event_type,
        payload: r.payload,
        customerId: accountId,
        timestamp: (r.created_at as Date).toISOString(),
      });
      out += `event: ${r.event_type}\nid: ${r.id}\ndata: ${data}\n\n`;
    }
    res.write(out);
    // Like the service, the stream stays open for live events; the client closes it.
    return;
  }
  send(res, 404, { error: { code: 'NOT_FOUND', message: 'no such route' } });
}

serve(handle);
