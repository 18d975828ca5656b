import ipaddr from 'ipaddr.js';

/**
 * Cloud metadata and host-agent addresses that a public-looking range does not already exclude, plus a few that
 * are repeated for clarity (AWS/GCP/Azure/OpenStack 169.254.169.254, AWS ECS 169.254.170.2, Azure wire server
 * 168.63.129.16, Alibaba 100.100.100.200, AWS IPv6 fd00:ec2::254).
 */
const METADATA_ADDRESSES = ['169.254.169.254', '169.254.170.2', '168.63.129.16', '100.100.100.200', 'fd00:ec2::254'];

/** The IPv6 NAT64 prefixes (RFC 6052 64:ff9b::/96, RFC 8215 64:ff9b:1::/48): they reach IPv4 addresses. */
const NAT64: [ipaddr.IPv6, number][] = [ipaddr.parseCIDR('64:ff9b::/96'), ipaddr.parseCIDR('64:ff9b:1::/48')] as [
  ipaddr.IPv6,
  number,
][];

/**
 * The deprecated IPv4-compatible IPv6 range (RFC 4291 2.5.5.1, `::/96`, e.g. `::7f00:1` = `::127.0.0.1`): some
 * stacks still route it to the embedded IPv4 address, and ipaddr.js counts it as `unicast`. `::` and `::1` inside it
 * are refused earlier as unspecified and loopback.
 */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96') as [ipaddr.IPv6, number];

/**
 * Why the host of `url` may not receive webhook deliveries when it is a literal IP address (`http://10.0.0.1/`,
 * `http://[::1]/`, and the forms the WHATWG URL parser normalises to one, e.g. `http://0x7f.1/`), or undefined
 * for a name (names are judged when connecting, on every attempt, because DNS answers change).
 */
export function refusedLiteralHostReason(url: string): string | undefined {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return undefined;
  }
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return ipaddr.isValid(bare) ? refusedAddressReason(bare) : undefined;
}

/**
 * Why `address` may not receive webhook deliveries, or undefined when it may. Only globally routable unicast
 * addresses pass (ipaddr.js range `unicast`): loopback, private (RFC 1918), unique-local, link-local, CGNAT
 * 100.64/10, multicast, reserved/documentation, unspecified, NAT64, IPv4-compatible IPv6 (`::/96`), 6to4/Teredo and
 * cloud metadata addresses are refused. IPv4-mapped IPv6 (`::ffff:127.0.0.1`) is judged as the IPv4 address it maps.
 */
export function refusedAddressReason(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return `"${address}" is not an IP address`;
  const parsed = ipaddr.parse(address);
  const ip =
    parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress() ? ipaddr.process(address) : parsed;
  const normalized = ip.toNormalizedString();
  if (METADATA_ADDRESSES.some((m) => ipaddr.parse(m).toNormalizedString() === normalized)) {
    return `${address} is a cloud metadata address`;
  }
  if (ip.kind() === 'ipv6' && NAT64.some(([net, bits]) => (ip as ipaddr.IPv6).match(net, bits))) {
    return `${address} is a NAT64 address`;
  }
  const range = ip.range();
  if (range !== 'unicast') return `${address} is not a public address (${range})`;
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).match(...IPV4_COMPATIBLE)) {
    return `${address} is an IPv4-compatible IPv6 address`;
  }
  return undefined;
}
