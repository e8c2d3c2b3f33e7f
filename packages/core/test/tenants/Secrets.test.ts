import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { TestClock } from "effect/testing"
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
      expect(sealed.startsWith(`v2.${a.keyId}.`)).toBe(true)
      expect(sealed).not.toContain("whsec_example")
      expect(yield* a.decrypt(sealed)).toBe("whsec_example")
      const other = yield* Effect.exit(b.decrypt(sealed))
      expect(other._tag).toBe("Failure")
    })
  )

  const oldKey = Redacted.make("11".repeat(32))
  const newKey = Redacted.make("22".repeat(32))
  /** A ciphertext as written before key ids (`v1.<iv>.<ct>`, no additional data). */
  const v1Under = (hex: string, plaintext: string) =>
    Effect.promise(async () => {
      const raw = Uint8Array.from(hex.match(/../g)!.map((h) => parseInt(h, 16)))
      const key = await globalThis.crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt"])
      const iv = globalThis.crypto.getRandomValues(new Uint8Array(12))
      const ct = new Uint8Array(
        await globalThis.crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, new TextEncoder().encode(plaintext))
      )
      const b64 = (b: Uint8Array) =>
        btoa(String.fromCharCode(...b))
          .replace(/\+/g, "-")
          .replace(/\//g, "_")
          .replace(/=+$/, "")
      return `v1.${b64(iv)}.${b64(ct)}`
    })

  it.effect(
    "a key ring: v2 ciphertexts name their key, v1 ones are tried under each key, reseal moves them to the current key",
    () =>
      Effect.gen(function* () {
        const before = yield* Secrets.make(oldKey)
        const after = yield* Secrets.make(newKey, [{ key: oldKey, until: 1_000 }])
        expect(after.keyId).toBe(Secrets.keyIdOf(newKey))
        expect(after.keyId).not.toBe(before.keyId)
        const old2 = yield* before.encrypt("sk_live_a")
        const old1 = yield* v1Under("11".repeat(32), "whsec_b")
        expect(yield* before.decrypt(old1)).toBe("whsec_b")
        // the previous key still decrypts, whatever its `until` (that bounds links only)
        expect(yield* after.decrypt(old2)).toBe("sk_live_a")
        expect(yield* after.decrypt(old1)).toBe("whsec_b")
        const resealed = yield* after.reseal(old2)
        expect(resealed.startsWith(`v2.${after.keyId}.`)).toBe(true)
        expect(yield* after.reseal(resealed)).toBe(resealed)
        expect(yield* after.decrypt(yield* after.reseal(old1))).toBe("whsec_b")
        // the old key alone cannot read what the new one wrote
        expect((yield* Effect.exit(before.decrypt(resealed)))._tag).toBe("Failure")
        // a ciphertext relabelled with another key's id is refused
        const [, , iv, ct] = old2.split(".")
        expect((yield* Effect.exit(after.decrypt(`v2.${after.keyId}.${iv}.${ct}`)))._tag).toBe("Failure")
        expect((yield* Effect.exit(after.decrypt("v3.x.y")))._tag).toBe("Failure")
      })
  )

  it.effect("verify: the current key's signatures always, a previous key's until its instant (TestClock)", () =>
    Effect.gen(function* () {
      const before = yield* Secrets.make(oldKey)
      const after = yield* Secrets.make(newKey, [{ key: oldKey, until: 7 * 86_400_000 }])
      const text = "invoice:m_1:inv_1"
      const oldSig = yield* before.sign(text)
      const newSig = yield* after.sign(text)
      expect(newSig).not.toBe(oldSig)
      expect(yield* after.verify(text, newSig)).toBe(true)
      expect(yield* after.verify(text, oldSig)).toBe(true)
      expect(yield* after.verify("invoice:m_1:inv_2", oldSig)).toBe(false)
      expect(yield* after.verify(text, "")).toBe(false)
      yield* TestClock.adjust("7 days")
      expect(yield* after.verify(text, oldSig)).toBe(false)
      expect(yield* after.verify(text, newSig)).toBe(true)
      // a previous key without an instant verifies as long as it is in the ring (an interrupted rotation's next key)
      const pending = yield* Secrets.make(oldKey, [{ key: newKey }])
      expect(yield* pending.verify(text, newSig)).toBe(true)
      expect(yield* pending.sign(text)).toBe(oldSig)
    })
  )
})
