import dns2 from 'dns2';

const { Packet } = dns2;
/** RFC 1035 4.1.1 response codes (dns2's typings omit Packet.RCODE). */
const RCODE = { SERVFAIL: 2, NXDOMAIN: 3 } as const;

/** Records of one name in a {@link TestZone}. TXT values longer than 255 bytes are split into character strings. */
export interface TestRecords {
  A?: string[];
  AAAA?: string[];
  MX?: { exchange: string; priority: number }[];
  TXT?: string[];
  PTR?: string[];
  CNAME?: string[];
  /** Answer nothing at all for this name (the client times out). */
  hang?: boolean;
  /** Answer SERVFAIL for this name. */
  servfail?: boolean;
}

/** Names (lower-case, no trailing dot) to their records; a name absent from the zone answers NXDOMAIN. */
export type TestZone = Record<string, TestRecords>;

/** A real DNS server on loopback (UDP + TCP, the `dns2` package) answering from a zone the test can change. */
export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for DNS_SERVERS. */
  address: string;
  port: number;
  /** The live zone: tests may add, change or delete names while the server runs. */
  zone: TestZone;
  /** Questions received, as `TYPE name`, in order. */
  queries: string[];
  close(): Promise<void>;
}

const TYPE_NAMES = new Map<number, keyof TestRecords>(
  (['A', 'AAAA', 'MX', 'TXT', 'PTR', 'CNAME'] as const).map((t) => [Packet.TYPE[t] as number, t]),
);

function splitTxt(value: string): string[] {
  const buf = Buffer.from(value, 'utf8');
  const parts: string[] = [];
  for (let i = 0; i < buf.length; i += 255) parts.push(buf.subarray(i, i + 255).toString('utf8'));
  return parts.length > 0 ? parts : [''];
}

/** Starts a DNS server on 127.0.0.1 (an ephemeral port, the same for UDP and TCP) answering from `zone`. */
export async function startDnsServer(zone: TestZone = {}, attempt = 0): Promise<TestDnsServer> {
  const queries: string[] = [];
  const server = dns2.createServer({
    udp: true,
    tcp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const question = request.questions[0];
      if (!question) return;
      const name = question.name.toLowerCase().replace(/\.$/, '');
      const type = TYPE_NAMES.get(question.type);
      queries.push(`${type ?? question.type} ${name}`);
      const records = zone[name];
      if (records?.hang) return;
      if (!records) {
        response.header.rcode = RCODE.NXDOMAIN;
        send(response);
        return;
      }
      if (records.servfail) {
        response.header.rcode = RCODE.SERVFAIL;
        send(response);
        return;
      }
      const base = { name: question.name, class: Packet.CLASS.IN, ttl: 300 };
      // dns2's typings want Resource instances; its encoder takes plain records.
      const answers = response.answers as unknown as object[];
      switch (type) {
        case 'A':
        case 'AAAA':
          for (const address of records[type] ?? []) answers.push({ ...base, type: Packet.TYPE[type], address });
          break;
        case 'MX':
          for (const mx of records.MX ?? []) answers.push({ ...base, type: Packet.TYPE.MX, ...mx });
          break;
        case 'TXT':
          for (const txt of records.TXT ?? []) answers.push({ ...base, type: Packet.TYPE.TXT, data: splitTxt(txt) });
          break;
        case 'PTR':
        case 'CNAME':
          for (const domain of records[type] ?? []) answers.push({ ...base, type: Packet.TYPE[type], domain });
          break;
      }
      send(response);
    },
  });
  server.on('requestError', () => {});
  // dns2 re-emits its sockets' errors on the server object; with no listener there, that re-emit throws inside the
  // socket's own 'error' dispatch before the handlers below run, so an EADDRINUSE on the TCP port surfaced as an
  // uncaught exception and hung the start instead of taking another port. The handlers below decide.
  server.on('error', () => {});
  // One port for both transports: c-ares retries a truncated UDP answer over TCP on the same port.
  const { udp, tcp } = (
    server as unknown as { servers: { udp: import('node:dgram').Socket; tcp: import('node:net').Server } }
  ).servers;
  const port = await new Promise<number>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(0, '127.0.0.1', () => {
      udp.off('error', reject);
      resolve(udp.address().port);
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(port, '127.0.0.1', () => {
        tcp.off('error', reject);
        resolve();
      });
    });
    return {
      address: `127.0.0.1:${port}`,
      port,
      zone,
      queries,
      close: () => server.close() as Promise<void>,
    };
  } catch (err) {
    // The TCP port was taken: take another UDP port (a socket binds once, so make a fresh server).
    udp.close();
    if (attempt >= 5) throw err;
    return startDnsServer(zone, attempt + 1);
  }
}
