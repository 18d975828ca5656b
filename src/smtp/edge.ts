// The SMTP edge (issue 26): what keeps one client from holding every slot of an SMTP listener, as Postfix (anvil,
// smtpd_client_connection_count_limit, smtpd_junk_command_limit, smtpd_hard_error_limit, smtpd_min_data_rate) and
// Haraka (limit plugin: concurrency, rate_conn, errors, unrecognized commands) keep it. A listener applies it with
// `edge.serverOptions()` in its SMTPServer options and `edge.attach(server)` once the server exists.
import type { Socket } from 'node:net';
import type { SMTPServer, SMTPServerAddress, SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import type { Config } from '../config.js';

/** The edge's limits (from {@link Config}: SMTP_*; docs/email.md "The SMTP edge"). Times in ms, rates per window. */
export interface SmtpEdgeLimits {
  /** Connections the listener holds at once, from every address (smtp-server `maxClients`). */
  maxClients: number;
  /** Connections one client address holds at once; more are answered `421 4.7.0` at connect. */
  maxConnectionsPerAddress: number;
  /** Idle time while the server awaits a command or data (RFC 5321 4.5.3.2.7: at least 5 minutes). */
  idleTimeoutMs: number;
  /** Longest session, from connect; then `421 4.7.0` at the next point no message is in flight. */
  sessionMaxMs: number;
  /** Commands one session may send in all. */
  maxCommands: number;
  /** NOOP, RSET, VRFY, EXPN and HELP one session may send (Postfix smtpd_junk_command_limit). */
  maxJunkCommands: number;
  /** 4xx/5xx replies one session may cause before it is closed (Postfix smtpd_hard_error_limit). */
  maxErrors: number;
  /** Slowest accepted DATA transfer, in bytes per second, averaged from the start of DATA (smtpd_min_data_rate). */
  minDataRate: number;
  /** How long DATA may run before its rate is first checked. */
  dataRateGraceMs: number;
  /**
   * Messages whose DATA the listener reads and stores at once; the DATA of further sessions waits unread (the bytes
   * stay in the kernel's socket buffers and the sender's, TCP backpressure) until one of them is answered.
   */
  maxConcurrentData: number;
  /** Messages (MAIL FROM) one client address may start per window; more get `451 4.7.1`. */
  messagesPerAddress: number;
  /** Messages (MAIL FROM) one sender domain may start per window, over every address; more get `451 4.7.1`. */
  messagesPerSenderDomain: number;
  /** The window of the two message rates. */
  messageRateWindowMs: number;
}

/** The edge limits configured by the SMTP_* variables (src/config.ts). */
export function edgeLimitsFromConfig(config: Config): SmtpEdgeLimits {
  return {
    maxClients: config.SMTP_MAX_CLIENTS,
    maxConnectionsPerAddress: config.SMTP_MAX_CONNECTIONS_PER_ADDRESS,
    idleTimeoutMs: config.SMTP_IDLE_TIMEOUT_MS,
    sessionMaxMs: config.SMTP_SESSION_MAX_MS,
    maxCommands: config.SMTP_MAX_COMMANDS,
    maxJunkCommands: config.SMTP_MAX_JUNK_COMMANDS,
    maxErrors: config.SMTP_MAX_ERRORS,
    minDataRate: config.SMTP_MIN_DATA_RATE,
    dataRateGraceMs: config.SMTP_DATA_RATE_GRACE_MS,
    maxConcurrentData: config.SMTP_MAX_CONCURRENT_DATA,
    messagesPerAddress: config.SMTP_MESSAGES_PER_ADDRESS,
    messagesPerSenderDomain: config.SMTP_MESSAGES_PER_SENDER_DOMAIN,
    messageRateWindowMs: config.SMTP_MESSAGE_RATE_WINDOW_MS,
  };
}

/** The parts of smtp-server's connection (dist/esm/smtp-connection.js, 3.21) the edge hooks into. */
interface Connection {
  session: SMTPServerSession;
  _socket: Socket;
  _dataStream: unknown;
  _handlerPending?: boolean;
  _closing: boolean;
  _closed: boolean;
  send(code: number, data?: string | string[], context?: unknown): void;
  _onCommand(command: Buffer, callback?: () => void): void;
}
/** The parts of SMTPServer the edge wraps: `connect` (each accepted socket) and the handler methods. */
interface ServerInternals {
  connections: Set<Connection>;
  connect(socket: Socket, options?: unknown): void;
  onMailFrom(address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error | null) => void): void;
  onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null) => void): void;
}

/** One session's budget. */
interface SessionState {
  conn: Connection;
  commands: number;
  junk: number;
  errors: number;
  sessionTimer?: NodeJS.Timeout;
  dataTimer?: NodeJS.Timeout;
}

const JUNK_COMMANDS = new Set(['NOOP', 'RSET', 'VRFY', 'EXPN', 'HELP']);

/** An SMTP reply as an error smtp-server sends to the client. */
function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

/** `::ffff:127.0.0.1` and `127.0.0.1` are one client. */
function clientAddress(socket: Socket): string {
  const address = socket.remoteAddress ?? '';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/** Fixed-window counters per key (message rates), pruned as they expire. */
class WindowCounter {
  readonly #counts = new Map<string, { count: number; start: number }>();
  constructor(
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}
  /** Counts one for `key`. @returns the count in the current window and the ms until it ends. */
  hit(key: string): { count: number; resetMs: number } {
    const now = this.now();
    if (this.#counts.size > 10_000) {
      for (const [k, v] of this.#counts) if (now - v.start >= this.windowMs) this.#counts.delete(k);
    }
    let entry = this.#counts.get(key);
    if (!entry || now - entry.start >= this.windowMs) {
      entry = { count: 0, start: now };
      this.#counts.set(key, entry);
    }
    entry.count++;
    return { count: entry.count, resetMs: entry.start + this.windowMs - now };
  }
}

/**
 * At most `size` holders at once; the others wait in arrival order. The bound on inbound memory (issue 26 item 3):
 * each message being stored holds a few chunks (its blob chunk of 256 KiB, the parser's and the sender
 * authentication's buffers), so the listener holds about `size` times that whatever the number of connections.
 */
class Slots {
  #free: number;
  readonly #waiting: (() => void)[] = [];
  constructor(size: number) {
    this.#free = size;
  }
  /** Holders waiting for a slot. */
  get waiting(): number {
    return this.#waiting.length;
  }
  /** Calls `run` with a slot, now or once one is released; `run` gets the (idempotent) release. */
  acquire(run: (release: () => void) => void): boolean {
    const grant = () => {
      let held = true;
      run(() => {
        if (!held) return;
        held = false;
        const next = this.#waiting.shift();
        if (next) next();
        else this.#free++;
      });
    };
    if (this.#free > 0) {
      this.#free--;
      grant();
      return true;
    }
    this.#waiting.push(grant);
    return false;
  }
}

/**
 * Replies written in one tick leave in one socket write (issue 24): the socket is corked before a reply and
 * uncorked on the next tick, so a PIPELINING client's (RFC 2920) RCPT reply and the `354` to its DATA, which
 * smtp-server writes one after the other, cost one system call instead of two (4 writes per message → 3). Nothing
 * waits longer than the current tick, and the order of the bytes is unchanged. Not for `220` (the greeting and the
 * STARTTLS go-ahead, after which the socket is handed to TLS) nor a socket that is already corked (its uncork is
 * scheduled); `end()` uncorks by itself (a `421` closes the connection).
 */
function coalesceReplies(socket: Socket | undefined, code: number): void {
  if (code === 220 || !socket || socket.destroyed || socket.writableCorked > 0) return;
  socket.cork();
  process.nextTick(uncork, socket);
}

function uncork(socket: Socket): void {
  socket.uncork();
}

/**
 * The SMTP edge of one listener. Per client address (the TCP peer): at most `maxConnectionsPerAddress` connections,
 * counted as sockets are accepted, before smtp-server counts them against `maxClients`, so one address refused
 * does not take the slots of others. Per session: a time limit, command, junk-command and error budgets, and a
 * minimum data rate in DATA. Excess is answered `421 4.7.0 …` and the connection closed (RFC 5321 3.8, 4.2.5).
 * Per window: messages started (MAIL FROM) per client address and per sender domain (`451 4.7.1 …; retry in N s`:
 * a temporary refusal, so a legitimate sender's queue retries). Counts are per instance. At most
 * `maxConcurrentData` messages are read and stored at once: the DATA of others waits unread (TCP backpressure; the
 * data rate is measured from when its reading starts, and the idle timeout does not count the wait).
 */
export class SmtpEdge {
  readonly #connections = new Map<string, number>();
  readonly #sessions = new Map<string, SessionState>();
  readonly #byAddress: WindowCounter;
  readonly #byDomain: WindowCounter;
  /** Figures for tests and logs: connections refused at connect, sessions closed by a budget, messages deferred. */
  readonly stats = { refusedConnections: 0, closedSessions: 0, deferredMessages: 0, dataWaits: 0 };
  readonly #dataSlots: Slots;

  constructor(
    readonly limits: SmtpEdgeLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.#byAddress = new WindowCounter(limits.messageRateWindowMs, now);
    this.#byDomain = new WindowCounter(limits.messageRateWindowMs, now);
    this.#dataSlots = new Slots(limits.maxConcurrentData);
  }

  /** Sessions whose DATA waits for a slot (see `maxConcurrentData`). */
  get dataWaiting(): number {
    return this.#dataSlots.waiting;
  }

  /**
   * SMTPServer options the edge sets: `maxClients`; `socketTimeout`, the idle timeout (RFC 5321 4.5.3.2.7: the
   * server waits at least 5 minutes for a command; smtp-server does not count it while a handler is pending, so
   * the 10-minute wait for the reply to the final "." of 4.5.3.2.6 is never cut short); `closeTimeout`, how long
   * `close()` waits for sessions to end.
   */
  serverOptions(): { maxClients: number; socketTimeout: number; closeTimeout: number } {
    return {
      maxClients: this.limits.maxClients,
      socketTimeout: this.limits.idleTimeoutMs,
      closeTimeout: Math.min(30_000, this.limits.idleTimeoutMs),
    };
  }

  /** How many connections `address` holds now. */
  connectionsFrom(address: string): number {
    return this.#connections.get(address) ?? 0;
  }

  /** Applies the edge to `server` (call once, before it listens). */
  attach(server: SMTPServer): void {
    const internals = server as unknown as ServerInternals;
    const connect = internals.connect.bind(server);
    const refuse = (socket: Socket, reply: string) => {
      this.stats.refusedConnections++;
      // Before smtp-server sees it: no greeting, no slot of maxClients, no 100 ms early-talker wait.
      socket.on('error', () => {});
      socket.end(`421 4.7.0 ${reply}\r\n`);
      setTimeout(() => socket.destroy(), 5_000).unref();
    };
    internals.connect = (socket, options) => {
      const address = clientAddress(socket);
      const held = this.connectionsFrom(address);
      if (held >= this.limits.maxConnectionsPerAddress) {
        refuse(socket, `${address}: too many connections from your address (${held}), try again later`);
        return;
      }
      // The global cap, answered here too so every excess carries 4.7.0 (smtp-server's own reply has no
      // enhanced code: "421 <host> Too many connected clients").
      if (internals.connections.size >= this.limits.maxClients) {
        refuse(socket, `too many connected clients (${internals.connections.size}), try again later`);
        return;
      }
      this.#connections.set(address, held + 1);
      socket.once('close', () => {
        const left = this.connectionsFrom(address) - 1;
        if (left > 0) this.#connections.set(address, left);
        else this.#connections.delete(address);
      });
      const before = new Set(internals.connections);
      connect(socket, options);
      for (const conn of internals.connections) if (!before.has(conn)) this.#track(conn, socket);
    };

    const onMailFrom = internals.onMailFrom.bind(server);
    internals.onMailFrom = (address, session, callback) => {
      const refusal = this.#messageRate(session.remoteAddress, address.address);
      if (refusal) {
        this.stats.deferredMessages++;
        callback(refusal);
        return;
      }
      onMailFrom(address, session, callback);
    };

    const onData = internals.onData.bind(server);
    internals.onData = (stream, session, callback) => {
      const conn = this.#sessions.get(session.id)?.conn;
      let waiting = true;
      const now = this.#dataSlots.acquire((release) => {
        waiting = false;
        if (conn) conn._handlerPending = false;
        // The connection closed while it waited (smtp-server destroyed its DATA stream): nothing to read or answer.
        if (stream.destroyed) return release();
        this.#watchDataRate(stream, session);
        onData(stream, session, (err) => {
          release();
          callback(err);
        });
      });
      if (!now) {
        this.stats.dataWaits++;
        // While it waits the server owes the client (not the other way round): smtp-server's idle timeout re-arms
        // instead of closing, as while any handler is pending. Set after smtp-server's DATA handler returns (it
        // clears the flag once it has called onData).
        setImmediate(() => {
          if (waiting && conn) conn._handlerPending = true;
        });
      }
    };
  }

  #track(conn: Connection, socket: Socket): void {
    const state: SessionState = { conn, commands: 0, junk: 0, errors: 0 };
    const id = conn.session.id;
    this.#sessions.set(id, state);
    socket.once('close', () => {
      clearTimeout(state.sessionTimer);
      clearInterval(state.dataTimer);
      this.#sessions.delete(id);
    });
    const expire = () => {
      // Never in the middle of a message: a message being received or stored finishes first (then this fires again).
      if (conn._dataStream || conn._handlerPending) {
        state.sessionTimer = setTimeout(expire, 1_000).unref();
        return;
      }
      this.#close(state, 'session time limit reached');
    };
    state.sessionTimer = setTimeout(expire, this.limits.sessionMaxMs).unref();

    const onCommand = conn._onCommand.bind(conn);
    conn._onCommand = (command, callback) => {
      const name = (command ?? '').toString().split(' ', 1)[0]?.toUpperCase() ?? '';
      state.commands++;
      if (JUNK_COMMANDS.has(name)) state.junk++;
      if (state.commands > this.limits.maxCommands) return this.#close(state, 'too many commands in this session');
      if (state.junk > this.limits.maxJunkCommands) return this.#close(state, 'too many NOOP/RSET/VRFY commands');
      return onCommand(command, callback);
    };
    const send = conn.send.bind(conn);
    conn.send = (code, data, context) => {
      coalesceReplies(conn._socket, code);
      send(code, data, context);
      if (code >= 400 && code !== 421 && ++state.errors >= this.limits.maxErrors) {
        this.#close(state, 'too many errors in this session');
      }
    };
  }

  #close(state: SessionState, why: string): void {
    if (state.conn._closing || state.conn._closed) return;
    this.stats.closedSessions++;
    // smtp-server closes the connection after any 421.
    state.conn.send(421, `4.7.0 ${why}, closing connection`, false);
  }

  #watchDataRate(stream: SMTPServerDataStream, session: SMTPServerSession): void {
    const state = this.#sessions.get(session.id);
    if (!state || this.limits.minDataRate <= 0) return;
    const started = this.now();
    let bytes = 0;
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    const stop = () => {
      clearInterval(state.dataTimer);
      state.dataTimer = undefined;
    };
    stream.once('end', stop);
    stream.once('close', stop);
    const every = Math.max(100, Math.min(1_000, this.limits.dataRateGraceMs));
    state.dataTimer = setInterval(() => {
      const elapsed = this.now() - started;
      if (elapsed < this.limits.dataRateGraceMs) return;
      if ((bytes * 1000) / elapsed >= this.limits.minDataRate) return;
      stop();
      this.#close(state, `data rate below ${this.limits.minDataRate} bytes/s`);
    }, every).unref();
  }

  #messageRate(remoteAddress: string, mailFrom: string): Error | undefined {
    const address = remoteAddress.startsWith('::ffff:') ? remoteAddress.slice(7) : remoteAddress;
    const perAddress = this.#byAddress.hit(address);
    if (perAddress.count > this.limits.messagesPerAddress) {
      const retry = Math.ceil(perAddress.resetMs / 1000);
      return smtpError(451, `4.7.1 Too many messages from ${address}; try again in ${retry} s`);
    }
    const domain = mailFrom.includes('@') ? mailFrom.slice(mailFrom.lastIndexOf('@') + 1).toLowerCase() : '';
    if (!domain) return undefined; // the null reverse-path (bounces) has no domain to count
    const perDomain = this.#byDomain.hit(domain);
    if (perDomain.count > this.limits.messagesPerSenderDomain) {
      const retry = Math.ceil(perDomain.resetMs / 1000);
      return smtpError(451, `4.7.1 Too many messages from senders at ${domain}; try again in ${retry} s`);
    }
    return undefined;
  }
}
