// graphql-ws (the GraphQL over WebSocket protocol, `graphql-transport-ws`) on /graphql: the default subscription
// transport of Apollo Client and urql. Same schema, the same envelop pipeline as HTTP (limits, NUL/surrogate checks,
// stream-token rule, masked errors: Yoga's `getEnveloped`), the same authentication, and the same Redis-backed
// subscriptions (the schema's resolvers subscribe through ctx.notices / the event bus, as on graphql-sse).
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { type ExecutionArgs, GraphQLError } from 'graphql';
import type { AppContext } from '../app-context.js';
import type { Actor } from '../domain/accounts/account.service.js';
import { authenticateStreamToken, credentialActive, isStreamToken } from '../domain/accounts/stream-token.js';
import { DomainError } from '../domain/errors.js';
import type { GraphQLContext } from './builder.js';
import type { createGraphQLServer } from './yoga.js';

type Yoga = ReturnType<typeof createGraphQLServer>;

/** What a connection carries after `connection_init`: the caller, authenticated once per socket. */
interface ConnectionExtra extends Record<PropertyKey, unknown> {
  actor?: Actor;
}

/**
 * The credential in `connectionParams` (a WebSocket from a browser cannot send headers): `authorization`
 * (`Bearer <key or stream token>`, any case of the name), or `apiKey`, or `token`.
 */
export function credentialOf(params: Readonly<Record<string, unknown>> | undefined): string | undefined {
  if (!params) return undefined;
  for (const [name, value] of Object.entries(params)) {
    if (name.toLowerCase() === 'authorization' && typeof value === 'string') {
      return /^Bearer\s+(\S+)\s*$/i.exec(value)?.[1];
    }
  }
  for (const name of ['apiKey', 'token']) if (typeof params[name] === 'string') return params[name] as string;
  return undefined;
}

/**
 * Accepts graphql-ws connections on the HTTP server's `upgrade` of /graphql (`ws` in noServer mode; `ws` and
 * graphql-ws load on the first upgrade, so start-up does not pay for them). `connection_init` must carry an API key
 * or a stream token (`credentialOf`); a missing or refused one closes the socket with 4403 and the reason. A stream
 * token opens subscriptions only (queries and mutations answer UNAUTHENTICATED, as on HTTP). Each operation
 * re-checks the credential (`credentialActive`): once the key is revoked or the stream token expired, the next
 * operation closes the socket with 4403, and open subscriptions complete within EVENT_STREAM_HEARTBEAT_MS. Other
 * upgrade paths are refused. Shutdown closes every socket (1001) before the HTTP server closes.
 */
export function mountGraphQLWs(http: FastifyInstance, ctx: AppContext, yoga: Yoga): void {
  type Wss = import('ws').WebSocketServer;
  let server: Promise<Wss> | undefined;
  const start = async (): Promise<Wss> => {
    const [{ WebSocketServer }, { useServer }] = await Promise.all([import('ws'), import('graphql-ws/use/ws')]);
    const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
    useServer<Record<string, unknown>, ConnectionExtra>(
      {
        connectionInitWaitTimeout: 10_000,
        onConnect: async (c) => {
          try {
            const key = credentialOf(c.connectionParams);
            c.extra.actor =
              key && isStreamToken(key) ? await authenticateStreamToken(ctx, key) : await ctx.auth.authenticate(key);
            return true;
          } catch (err) {
            const reason = err instanceof DomainError ? err.message : 'Authentication failed.';
            c.extra.socket.close(4403, `Forbidden: ${reason}`.slice(0, 120));
            return false;
          }
        },
        onSubscribe: async (c, id, payload) => {
          const actor = c.extra.actor as Actor;
          // A socket outlives its key: every operation re-checks it (revoked or deleted key, expired stream token),
          // and a socket whose credential no longer holds is closed as at connect. Open subscriptions end on their
          // own within a heartbeat (watchCredential).
          if (!(await credentialActive(ctx, actor))) {
            c.extra.socket.close(4403, 'Forbidden: the API key was revoked or the stream token expired.');
            return [new GraphQLError('The credential no longer holds.', { extensions: { code: 'UNAUTHENTICATED' } })];
          }
          const enveloped = yoga.getEnveloped({
            req: { actor, id: `ws-${id}` },
            reply: undefined,
            params: payload,
          } as never);
          let document: ReturnType<typeof enveloped.parse>;
          // The limits (graphql-armor) and syntax errors throw from parse/validate, as coded GraphQLErrors.
          try {
            document = enveloped.parse(payload.query);
            const errors = enveloped.validate(enveloped.schema, document);
            if (errors.length > 0) return errors;
          } catch (err) {
            if (err instanceof GraphQLError) return [err];
            throw err;
          }
          const contextValue = (await enveloped.contextFactory()) as unknown as GraphQLContext;
          return {
            schema: enveloped.schema,
            document,
            operationName: payload.operationName,
            variableValues: payload.variables,
            contextValue,
            rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
          } satisfies ExecutionArgs;
        },
        execute: (args) => (args.rootValue as { execute: (a: ExecutionArgs) => never }).execute(args),
        subscribe: (args) => (args.rootValue as { subscribe: (a: ExecutionArgs) => never }).subscribe(args),
      },
      wss,
      12_000,
    );
    return wss;
  };

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/graphql') {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    server ??= start();
    server.then(
      (wss) => wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request)),
      (err) => {
        ctx.log.error({ err }, 'graphql-ws could not start');
        socket.destroy();
      },
    );
  };
  http.server.on('upgrade', onUpgrade);
  http.addHook('preClose', async () => {
    http.server.off('upgrade', onUpgrade);
    if (!server) return;
    const wss = await server;
    for (const client of wss.clients) client.close(1001, 'Server shutting down');
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });
}
