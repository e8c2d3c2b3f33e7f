/**
 * Which network addresses a webhook may be sent to: one classifier for every special-purpose
 * IPv4 and IPv6 range (loopback, private, link-local, shared, multicast, documentation,
 * benchmarking, reserved, unspecified, broadcast), including the IPv6 forms that carry an IPv4
 * address (IPv4-mapped `::ffff:a.b.c.d` in any spelling, NAT64 `64:ff9b::/96`, 6to4
 * `2002::/16`), which are judged by the address they carry. Teredo, the local-use NAT64 prefix
 * and IPv4-translated addresses are refused outright. Parsing is `ipaddr.js`'s; no DNS here.
 *
 * Used when an endpoint is created or updated (its URL's host) and by the HTTP transport on the
 * exact address each connection is made to.
 *
 * @since 0.1.0
 */
import ipaddr from "ipaddr.js"

/**
 * Why an address is not public, or `undefined` when it is.
 *
 * @example
 * specialPurpose("93.184.216.34") // undefined
 * specialPurpose("::ffff:7f00:1") // "loopback (127.0.0.1)"
 * specialPurpose("64:ff9b::a9fe:a9fe") // "linkLocal (169.254.169.254)"
 * @since 0.1.0
 */
export const specialPurpose = (address: string): string | undefined => {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, "").replace(/%.*$/, ""))
  } catch {
    return "not an IP address"
  }
  if (parsed.kind() === "ipv4") {
    const range = parsed.range()
    return range === "unicast" ? undefined : range
  }
  const v6 = parsed as ipaddr.IPv6
  const embedded = carriedIPv4(v6)
  if (embedded !== undefined) {
    const inner = specialPurpose(embedded)
    return inner === undefined ? undefined : `${inner} (${embedded})`
  }
  const range = v6.range()
  return range === "unicast" ? undefined : range
}

/** The IPv4 address an IPv6 address carries where the range is a translation of IPv4. */
const carriedIPv4 = (v6: ipaddr.IPv6): string | undefined => {
  const p = v6.parts
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`
  // ::ffff:a.b.c.d (mapped) and the deprecated ::a.b.c.d (compatible), except :: and ::1
  if (p.slice(0, 5).every((x) => x === 0) && (p[5] === 0xffff || (p[5] === 0 && (p[6]! !== 0 || p[7]! > 1))))
    return v4(p[6]!, p[7]!)
  // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052)
  if (p[0] === 0x64 && p[1] === 0xff9b && p.slice(2, 6).every((x) => x === 0)) return v4(p[6]!, p[7]!)
  // 6to4 2002:AABB:CCDD::/48 (RFC 3056)
  if (p[0] === 0x2002) return v4(p[1]!, p[2]!)
  return undefined
}

/**
 * Whether a URL's host may receive webhooks without the private-network allowance: an IP
 * literal must be public; `localhost` and `*.localhost` never are. Other names are checked
 * when resolved, connection by connection. Returns why not, or `undefined`.
 *
 * @since 0.1.0
 */
export const refusedHost = (url: string): string | undefined => {
  let host: string
  try {
    host = new URL(url).hostname.toLowerCase()
  } catch {
    return "not a URL"
  }
  const bare = host.replace(/^\[|\]$/g, "")
  if (ipaddr.isValid(bare)) {
    const why = specialPurpose(bare)
    return why === undefined ? undefined : `${bare} is a special-purpose address (${why})`
  }
  if (host === "localhost" || host.endsWith(".localhost") || host === "localhost.") return `${host} names this machine`
  return undefined
}
