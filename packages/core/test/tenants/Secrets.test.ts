import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import fc from "fast-check"
import { Secrets } from "../../src/index.js"

const webCryptoHex = async (text: string) =>
  [...new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("")

describe("Secrets", () => {
  it.effect("sha256Hex: the FIPS 180-2 vectors", () =>
    Effect.gen(function* () {
      expect(yield* Secrets.sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
      expect(yield* Secrets.sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
      expect(Secrets.sha256HexSync("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe(
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
      )
    })
  )

  it("sha256Hex equals Web Crypto's digest for any Unicode text (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "binary", maxLength: 300 }), async (text) => {
        expect(Secrets.sha256HexSync(text)).toBe(await webCryptoHex(text))
      }),
      { numRuns: 300 }
    )
  })

  it.effect("encrypts and decrypts under the master key; another key cannot read it", () =>
    Effect.gen(function* () {
      const a = yield* Secrets.make(Redacted.make("11".repeat(32)))
      const b = yield* Secrets.make(Redacted.make("22".repeat(32)))
      const sealed = yield* a.encrypt("whsec_example")
      expect(sealed.startsWith("v1.")).toBe(true)
      expect(sealed).not.toContain("whsec_example")
      expect(yield* a.decrypt(sealed)).toBe("whsec_example")
      const other = yield* Effect.exit(b.decrypt(sealed))
      expect(other._tag).toBe("Failure")
    })
  )
})
