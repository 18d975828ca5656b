import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import { authenticate, dkimSign } from 'mailauth';
import { describe, expect, it } from 'vitest';
import {
  type MessageParserLike,
  mailauthHeaderScanPatched,
  mailauthOriginalProcessChunk,
} from '../../src/domain/email/mailauth-header-scan.js';
import { dkimKey, SPF_LOOPBACK } from '../helpers/mail-auth.js';

// src/domain/email/mailauth-header-scan.ts replaces mailauth's per-byte header scan; these prove the replacement
// decides exactly as mailauth's own method, on its internal state and through authenticate().
const require = createRequire(import.meta.url);
const { MessageParser } = require('mailauth/lib/dkim/message-parser.js') as {
  MessageParser: { prototype: MessageParserLike };
};
const { parseHeaders } = require('mailauth/lib/tools.js') as { parseHeaders: (buf: Buffer) => unknown };

/** Runs mailauth's own method instead of the replacement while `fn` runs. */
async function withOriginal<T>(fn: () => Promise<T>): Promise<T> {
  const patched = MessageParser.prototype.processChunk;
  MessageParser.prototype.processChunk = mailauthOriginalProcessChunk!;
  try {
    return await fn();
  } finally {
    MessageParser.prototype.processChunk = patched;
  }
}

/** A fake parser with MessageParser's fields: records the parsed header and every body byte. */
function fakeParser() {
  const seen = { headers: [] as unknown[], body: [] as Buffer[] };
  const parser: MessageParserLike = {
    state: 'header',
    stateBytes: [],
    headers: false,
    headerChunks: [],
    async messageHeaders(h) {
      seen.headers.push(h);
    },
    async nextChunk(c) {
      seen.body.push(Buffer.from(c));
    },
    processChunk: MessageParser.prototype.processChunk,
  };
  return { parser, seen };
}

/** Deterministic pseudo-random numbers (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("mailauth's header scan (mailauth-header-scan.ts)", () => {
  it('is replaced for the installed mailauth', () => {
    expect(mailauthHeaderScanPatched).toBe(true);
    expect(mailauthOriginalProcessChunk).toBeTypeOf('function');
    expect(MessageParser.prototype.processChunk).not.toBe(mailauthOriginalProcessChunk);
  });

  it('splits header and body exactly as mailauth does, whatever the line ends and the chunk boundaries', async () => {
    const next = random(24);
    const pieces = ['a', 'X-H: v', ':', ' ', '\t', '\r', '\n', '\r\n', '\n\r', '\r\r\n'];
    for (let n = 0; n < 2_000; n++) {
      const message = Buffer.from(
        Array.from({ length: 1 + Math.floor(next() * 40) }, () => pieces[Math.floor(next() * pieces.length)]).join(''),
      );
      const chunks: Buffer[] = [];
      for (let at = 0; at < message.length; ) {
        const size = 1 + Math.floor(next() * 6);
        chunks.push(message.subarray(at, at + size));
        at += size;
      }
      const run = async (method: MessageParserLike['processChunk']) => {
        const { parser, seen } = fakeParser();
        for (const c of chunks) await method.call(parser, c);
        return {
          state: parser.state,
          header: Buffer.concat(parser.headerChunks).toString('latin1'),
          parsed: seen.headers,
          body: Buffer.concat(seen.body).toString('latin1'),
        };
      };
      const ours = await run(MessageParser.prototype.processChunk);
      const theirs = await run(mailauthOriginalProcessChunk!);
      expect(ours, JSON.stringify(message.toString('latin1'))).toEqual(theirs);
    }
    // The parse of the header is mailauth's own function on the same bytes.
    const { parser, seen } = fakeParser();
    await MessageParser.prototype.processChunk.call(parser, Buffer.from('From: a@b.example\r\n\r\nbody'));
    expect(seen.headers).toEqual([parseHeaders(Buffer.from('From: a@b.example\r\n\r\n'))]);
  });

  it('gives the same DKIM, SPF, DMARC and ARC results and Authentication-Results through authenticate()', async () => {
    const key = dkimKey();
    const zone: Record<string, string[][]> = {
      'TXT good.example': [[SPF_LOOPBACK]],
      'TXT _dmarc.good.example': [['v=DMARC1; p=reject']],
      'TXT sel._domainkey.good.example': [[key.record]],
    };
    const resolver = async (name: string, rrtype: string) => {
      const answer = zone[`${rrtype} ${name}`];
      if (answer) return answer;
      throw Object.assign(new Error(`no ${rrtype} for ${name}`), { code: 'ENOTFOUND' });
    };
    const plain =
      'From: Ann <ann@good.example>\r\nTo: bob@agents.example\r\nSubject: Order 881\r\n' +
      'Message-ID: <m1@good.example>\r\nDate: Fri, 27 Nov 2026 17:00:00 +0000\r\n\r\nWhen does order 881 ship?\r\n';
    // mailauth 4.13 signs from `signatureData`; its typings still name the older top-level fields. Signed an hour
    // ago: a signature of this very second reads `signatureTimeValid: false` until the clock moves on.
    const signed = await dkimSign(plain, {
      signTime: new Date(Date.now() - 3_600_000),
      signatureData: [{ signingDomain: 'good.example', selector: 'sel', privateKey: key.privateKey }],
    } as unknown as Parameters<typeof dkimSign>[1]);
    const messages = [
      signed.signatures + plain,
      plain,
      // Bare LF line ends, a header without a body, an empty header.
      (signed.signatures + plain).replace(/\r\n/g, '\n'),
      'From: ann@good.example\r\nSubject: no body',
      '\r\nbody only\r\n',
    ];
    const opts = { ip: '127.0.0.1', helo: 'mx.good.example', sender: 'ann@good.example', mta: 'mx.test', resolver };
    const check = async (input: () => Buffer | Readable) => {
      const r = await authenticate(input(), opts);
      return JSON.stringify({ dkim: r.dkim, spf: r.spf, dmarc: r.dmarc, arc: r.arc, headers: r.headers });
    };
    for (const m of messages) {
      const bytes = Buffer.from(m);
      const inputs = [
        () => bytes,
        // As SMTP DATA streams it: small chunks, boundaries anywhere.
        () =>
          Readable.from(
            Array.from({ length: Math.ceil(bytes.length / 7) }, (_, i) => bytes.subarray(i * 7, i * 7 + 7)),
          ),
        () => Readable.from(Array.from(bytes, (b) => Buffer.from([b]))),
      ];
      for (const input of inputs) {
        const ours = await check(input);
        expect(ours).toBe(await withOriginal(() => check(input)));
      }
    }
    // The signed message really was verified (not a vacuous comparison of two failures).
    const r = await authenticate(Buffer.from(signed.signatures + plain), opts);
    expect(r.dkim.results[0]?.status.result).toBe('pass');
    expect(r.dmarc ? r.dmarc.status.result : 'none').toBe('pass');
  });
});
