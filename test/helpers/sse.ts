import { EventSource } from 'eventsource';

/** One SSE message as a client sees it. */
export interface SseMessage {
  type: string;
  id: string;
  data: any;
}

/**
 * A real `eventsource` client (it reconnects with `Last-Event-ID` as browsers do) that records every message of
 * `types`, every request's `Last-Event-ID`, and can cut the current connection (`cut`) and hold reconnects
 * (`hold`/`release`) so a test controls when the client is away.
 */
export interface SseClient {
  messages: SseMessage[];
  /** `Last-Event-ID` header of each connection attempt (null when absent), in order. */
  requests: (string | null)[];
  /** HTTP status of each response. */
  statuses: number[];
  /**
   * Resolves when `predicate` holds over the received messages (checked on every message). Rejects, with the
   * statuses and `Last-Event-ID`s seen, once the client has given up for good (a non-200 answer or a wrong content
   * type: EventSource does not reconnect after those), instead of waiting for the test's timeout.
   */
  waitFor(predicate: (messages: SseMessage[]) => boolean): Promise<void>;
  /** Resolves once the current connection is open; rejects as {@link waitFor} does once the client gave up. */
  opened(): Promise<void>;
  /** Ends the current connection as a network drop would; the client reconnects (unless held). */
  cut(): void;
  /** Holds the next reconnect until `release()`. */
  hold(): void;
  release(): void;
  close(): void;
}

/** Opens an EventSource on `url` listening for `types` (plus `stream.truncated`), with optional request headers. */
export function openSse(url: string, types: string[], headers: Record<string, string> = {}): SseClient {
  const messages: SseMessage[] = [];
  const requests: (string | null)[] = [];
  const statuses: number[] = [];
  const waiters: { predicate: (m: SseMessage[]) => boolean; resolve: () => void; reject: (e: Error) => void }[] = [];
  let gate: Promise<void> | undefined;
  let releaseGate: (() => void) | undefined;
  let cutCurrent: (() => void) | undefined;
  let openWaiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  let isOpen = false;
  let closedByTest = false;
  let gaveUp: Error | undefined;

  const check = () => {
    for (const w of [...waiters]) {
      if (w.predicate(messages)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };

  const es = new EventSource(url, {
    fetch: async (input, init) => {
      if (gate) await gate;
      const given = new Headers(init?.headers as HeadersInit);
      requests.push(given.get('last-event-id'));
      for (const [k, v] of Object.entries(headers)) given.set(k, v);
      const res = await fetch(input, { ...init, headers: given });
      statuses.push(res.status);
      if (!res.body) return res;
      const reader = res.body.getReader();
      let controller!: ReadableStreamDefaultController<Uint8Array>;
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          controller = c;
        },
        async pull(c) {
          try {
            const { done, value } = await reader.read();
            if (done) c.close();
            else c.enqueue(value);
          } catch {
            try {
              c.close();
            } catch {}
          }
        },
        cancel() {
          void reader.cancel();
        },
      });
      cutCurrent = () => {
        try {
          controller.close();
        } catch {}
        void reader.cancel().catch(() => {});
      };
      return new Response(body, { status: res.status, headers: res.headers });
    },
  });
  es.addEventListener('open', () => {
    isOpen = true;
    for (const w of openWaiters) w.resolve();
    openWaiters = [];
  });
  es.addEventListener('error', (e: Event) => {
    isOpen = false;
    if (es.readyState !== EventSource.CLOSED || closedByTest) return;
    gaveUp = new Error(
      `EventSource gave up (${(e as Event & { message?: string }).message ?? 'closed'}): statuses ${JSON.stringify(statuses)}, ` +
        `Last-Event-IDs ${JSON.stringify(requests)}, ${messages.length} messages received`,
    );
    for (const w of waiters.splice(0)) w.reject(gaveUp);
    for (const w of openWaiters.splice(0)) w.reject(gaveUp);
  });
  for (const type of [...types, 'stream.truncated']) {
    es.addEventListener(type, (e: MessageEvent) => {
      messages.push({ type: e.type, id: e.lastEventId, data: JSON.parse(e.data) });
      check();
    });
  }
  return {
    messages,
    requests,
    statuses,
    waitFor(predicate) {
      if (predicate(messages)) return Promise.resolve();
      if (gaveUp) return Promise.reject(gaveUp);
      return new Promise((resolve, reject) => waiters.push({ predicate, resolve, reject }));
    },
    opened() {
      if (isOpen) return Promise.resolve();
      if (gaveUp) return Promise.reject(gaveUp);
      return new Promise((resolve, reject) => openWaiters.push({ resolve, reject }));
    },
    cut() {
      isOpen = false;
      cutCurrent?.();
    },
    hold() {
      gate = new Promise((resolve) => {
        releaseGate = resolve;
      });
    },
    release() {
      gate = undefined;
      releaseGate?.();
    },
    close() {
      closedByTest = true;
      es.close();
    },
  };
}

/** A raw SSE response read as text, for exact-format, header and heartbeat checks. */
export interface RawSse {
  status: number;
  headers: Headers;
  /** Everything received so far. */
  text(): string;
  /**
   * Resolves when the received text matches `pattern`; rejects, with the text received, when the response ends
   * without a match (a stream the server ended fails the test at once instead of at the test's timeout).
   */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
  /** Resolves when the server ends the response. */
  ended: Promise<void>;
  close(): void;
}

/** The error of a {@link RawSse.waitFor} whose response ended (or was closed) without matching. */
function endedWithout(pattern: RegExp, text: string): Error {
  return new Error(`the response ended without matching ${pattern}; received: ${JSON.stringify(text.slice(-2000))}`);
}

/** GETs `url` and reads the body as it arrives. A non-200 answer is read whole (JSON error body in `text()`). */
export async function rawSse(url: string, headers: Record<string, string> = {}): Promise<RawSse> {
  const abort = new AbortController();
  const res = await fetch(url, { headers, signal: abort.signal });
  let text = '';
  const waiters: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void; reject: (err: Error) => void }[] = [];
  let over = false;
  const ended = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true });
        for (const w of [...waiters]) {
          const m = text.match(w.pattern);
          if (m) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(m);
          }
        }
      }
    } catch {}
    over = true;
    for (const w of waiters.splice(0)) w.reject(endedWithout(w.pattern, text));
  })();
  return {
    status: res.status,
    headers: res.headers,
    text: () => text,
    waitFor(pattern) {
      const m = text.match(pattern);
      if (m) return Promise.resolve(m);
      if (over) return Promise.reject(endedWithout(pattern, text));
      return new Promise((resolve, reject) => waiters.push({ pattern, resolve, reject }));
    },
    ended,
    close: () => abort.abort(),
  };
}
