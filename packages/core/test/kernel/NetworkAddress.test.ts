import { describe, expect, it } from "@effect/vitest"
import { NetworkAddress } from "@recur/core"
import fc from "fast-check"
import { prop } from "../prop.js"

const refused = [
  // IPv4 special-purpose ranges
  "0.0.0.0",
  "10.0.0.1",
  "100.64.0.1",
  "127.0.0.1",
  "127.255.255.254",
  "169.254.169.254",
  "172.16.0.1",
  "192.0.0.8",
  "192.0.2.1",
  "192.168.1.1",
  "198.18.0.1",
  "198.51.100.7",
  "203.0.113.9",
  "224.0.0.1",
  "240.0.0.1",
  "255.255.255.255",
  // IPv6 special-purpose ranges
  "::",
  "::1",
  "fe80::1",
  "fc00::1",
  "fd12:3456::1",
  "ff02::1",
  "2001:db8::1",
  // IPv4 carried in IPv6: mapped (every spelling), compatible, NAT64, 6to4
  "::ffff:127.0.0.1",
  "::ffff:7f00:1",
  "0:0:0:0:0:ffff:127.0.0.1",
  "0000:0000:0000:0000:0000:ffff:7f00:0001",
  "::ffff:a9fe:a9fe",
  "::127.0.0.1",
  "64:ff9b::7f00:1",
  "64:ff9b::a9fe:a9fe",
  "64:ff9b::10.0.0.1",
  "2002:7f00:1::",
  "2002:a00:1::1",
  // refused outright: Teredo, local-use NAT64, IPv4-translated
  "2001:0:4136:e378:8000:63bf:3fff:fdd2",
  "64:ff9b:1::a00:1",
  "::ffff:0:7f00:1"
]

const allowed = [
  "93.184.216.34",
  "8.8.8.8",
  "2606:4700::1111",
  "::ffff:93.184.216.34",
  "64:ff9b::808:808",
  "2002:5db8:d822::1"
]

describe("NetworkAddress", () => {
  it("refuses every special-purpose address, in every spelling, and allows public ones", () => {
    for (const a of refused) expect(NetworkAddress.specialPurpose(a), a).toBeDefined()
    for (const a of allowed) expect(NetworkAddress.specialPurpose(a), a).toBeUndefined()
    expect(NetworkAddress.specialPurpose("::ffff:7f00:1")).toBe("loopback (127.0.0.1)")
    expect(NetworkAddress.specialPurpose("not-an-ip")).toBe("not an IP address")
  })

  it("judges URL hosts: IP literals (as the URL parser reads them) and localhost names", () => {
    for (const url of [
      "http://[::ffff:127.0.0.1]:8080/",
      "http://[::ffff:7f00:1]/",
      "http://[0:0:0:0:0:ffff:127.0.0.1]/",
      "http://169.254.169.254/latest/meta-data",
      "http://10.0.0.1/",
      "http://0x7f.1/",
      "http://2130706433/",
      "http://0177.0.0.1/",
      "http://localhost:3000/",
      "http://api.localhost/",
      "https://[64:ff9b::7f00:1]/"
    ])
      expect(NetworkAddress.refusedHost(url), url).toBeDefined()
    for (const url of ["https://example.com/hooks", "https://93.184.216.34/x", "https://[2606:4700::1111]/"])
      expect(NetworkAddress.refusedHost(url), url).toBeUndefined()
  })

  prop(
    "an IPv4 address carried in IPv6 (mapped, NAT64, 6to4) is judged as the IPv4 address",
    [fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255))],
    ([[a, b, c, d]]) => {
      const v4 = `${a}.${b}.${c}.${d}`
      const hex = (x: number, y: number) => ((x << 8) | y).toString(16)
      const publicV4 = NetworkAddress.specialPurpose(v4) === undefined
      for (const v6 of [
        `::ffff:${v4}`,
        `::ffff:${hex(a, b)}:${hex(c, d)}`,
        `64:ff9b::${v4}`,
        `2002:${hex(a, b)}:${hex(c, d)}::1`
      ])
        expect(NetworkAddress.specialPurpose(v6) === undefined, v6).toBe(publicV4)
    },
    { numRuns: 500 }
  )
})
