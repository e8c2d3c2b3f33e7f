/**
 * Secrets at rest: SHA-256 lookup hashes (`@noble/hashes`) and AES-256-GCM encryption under a
 * master key on the Web Crypto API (standard in Node, browsers and workers; no Node import).
 *
 * @since 0.1.0
 */
import { hmac } from "@noble/hashes/hmac.js"
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"
import { Clock, Context, Effect, Layer, Redacted } from "effect"

/**
 * Hashing and encryption of secrets (API keys, webhook endpoint secrets), under a key ring: the
 * current master key, which encrypts and signs, and the previous ones (after a rotation), which
 * still decrypt and, until their `until` instant, verify links signed before.
 *
 * @example
 * const secrets = yield* Secrets
 * const stored = yield* secrets.encrypt("sk_test_…") // "v2.<kid>.<iv>.<ciphertext>" in base64url
 * @since 0.1.0
 */
export class Secrets extends Context.Service<
  Secrets,
  {
    /** Lowercase hex SHA-256. */
    readonly hash: (text: string) => Effect.Effect<string>
    readonly encrypt: (plaintext: string) => Effect.Effect<string>
    /** Decrypts under the ring's key the ciphertext names (`v2`), or any ring key (`v1`, written before key ids). */
    readonly decrypt: (ciphertext: string) => Effect.Effect<string>
    /**
     * An unguessable, stable signature of `text` (HMAC-SHA-256 under a key derived from the current
     * master key), base64url: what signed links carry.
     */
    readonly sign: (text: string) => Effect.Effect<string>
    /**
     * Whether `signature` is `text`'s signature under the current key, or under a previous key
     * whose `until` instant (Effect's `Clock`) has not passed: links issued before a rotation keep
     * opening for its grace period.
     */
    readonly verify: (text: string, signature: string) => Effect.Effect<boolean>
    /** The current key's id: what `v2` ciphertexts name (a fingerprint of a derived key, never the key). */
    readonly keyId: string
    /**
     * The ciphertext under the current key: unchanged when it already is, else decrypted and
     * encrypted again (what a master key rotation does to every stored secret).
     */
    readonly reseal: (ciphertext: string) => Effect.Effect<string>
  }
>()("@recur/core/Secrets") {}

const b64url = (bytes: Uint8Array): string => {
  let s = ""
  for (const b of bytes) s += String.fromCharCode(b)
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
}
const fromB64url = (s: string): Uint8Array => {
  const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"))
  return Uint8Array.from(bin, (c) => c.charCodeAt(0))
}

/**
 * Lowercase hex SHA-256 of a string (UTF-8), computed synchronously by `@noble/hashes` (audited,
 * pure JavaScript, the same on every runtime). Web Crypto's `digest` is asynchronous: for the
 * short strings hashed here (an API key per request, a request body) its promise and thread-pool
 * hop cost more than the hash itself (6 % of a REST read's CPU).
 *
 * @since 0.1.0
 */
export const sha256Hex = (text: string): Effect.Effect<string> => Effect.sync(() => sha256HexSync(text))

/**
 * {@link sha256Hex} as a plain function.
 *
 * @since 0.1.0
 */
export const sha256HexSync = (text: string): string => bytesToHex(sha256(utf8ToBytes(text)))

/**
 * HMAC-SHA256 of a UTF-8 message under a key (UTF-8 text, or raw bytes).
 *
 * @since 0.1.0
 */
export const hmacSha256 = (key: string | Uint8Array, message: string): Effect.Effect<Uint8Array> =>
  Effect.promise(async () => {
    const raw = typeof key === "string" ? new TextEncoder().encode(key) : key
    const k = await globalThis.crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
    return new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", k, new TextEncoder().encode(message)))
  })

/**
 * Lowercase hex of bytes.
 *
 * @since 0.1.0
 */
export const toHex = (bytes: Uint8Array): string => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")

/**
 * Standard base64 (with padding) of bytes, and back.
 *
 * @since 0.1.0
 */
export const toBase64 = (bytes: Uint8Array): string => {
  let s = ""
  for (const b of bytes) s += String.fromCharCode(b)
  return btoa(s)
}

/** @since 0.1.0 */
export const fromBase64 = (text: string): Uint8Array => Uint8Array.from(atob(text), (c) => c.charCodeAt(0))

/**
 * A Standard Webhooks secret: `whsec_` + base64 of 32 random bytes.
 *
 * @since 0.1.0
 */
export const webhookSecret = (): string => `whsec_${toBase64(globalThis.crypto.getRandomValues(new Uint8Array(32)))}`

/**
 * Compares two strings in time independent of where they differ.
 *
 * @since 0.1.0
 */
export const constantTimeEqual = (a: string, b: string): boolean => {
  const x = new TextEncoder().encode(a)
  const y = new TextEncoder().encode(b)
  let diff = x.length ^ y.length
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    diff |= (x[i % (x.length || 1)] ?? 0) ^ (y[i % (y.length || 1)] ?? 0)
  return diff === 0
}

/**
 * Random bytes as base62-ish text (letters and digits), for keys and secrets.
 *
 * @since 0.1.0
 */
export const randomToken = (bytes = 24): string => {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
  const raw = globalThis.crypto.getRandomValues(new Uint8Array(bytes * 2))
  let out = ""
  for (const b of raw) {
    if (b < 248) out += alphabet[b % 62]
    if (out.length >= Math.ceil(bytes * 1.34)) break
  }
  return out
}

/**
 * A master key kept after a rotation: it still decrypts what was encrypted under it, and verifies
 * links signed under it until `until` (Unix ms; none: as long as it is in the ring).
 *
 * @since 0.1.0
 */
export interface PreviousKey {
  readonly key: Redacted.Redacted<string>
  readonly until?: number | undefined
}

const keyBytesOf = (masterKey: Redacted.Redacted<string>) => {
  const raw = Redacted.value(masterKey).trim()
  return /^[0-9a-fA-F]{64}$/.test(raw)
    ? Uint8Array.from(raw.match(/../g)!.map((h) => parseInt(h, 16)))
    : fromB64url(raw)
}

/**
 * The id of a master key: 8 base64url characters of an HMAC of a fixed label under it — names the
 * key in `v2` ciphertexts and the operator's messages without revealing it.
 *
 * @since 0.1.0
 */
export const keyIdOf = (masterKey: Redacted.Redacted<string>): string =>
  b64url(hmac(sha256, keyBytesOf(masterKey), utf8ToBytes("recur/key-id/v1"))).slice(0, 8)

interface RingKey {
  readonly id: string
  readonly aes: Awaited<ReturnType<typeof globalThis.crypto.subtle.importKey>>
  readonly link: Uint8Array
  /** Signatures verify until this instant (Unix ms); the current key's always. */
  readonly until: number
}

const ringKey = (masterKey: Redacted.Redacted<string>, until: number) =>
  Effect.gen(function* () {
    const keyBytes = keyBytesOf(masterKey)
    if (keyBytes.length !== 32)
      return yield* Effect.die("RECUR_MASTER_KEY must be 32 bytes (64 hex characters or base64)")
    const aes = yield* Effect.promise(() =>
      globalThis.crypto.subtle.importKey("raw", keyBytes, "AES-GCM", false, ["encrypt", "decrypt"])
    )
    // the link-signing key is derived from the master key, never the master key itself; signing
    // is synchronous (noble's HMAC): a renewal batch signs one link per invoice
    const link = hmac(sha256, keyBytes, utf8ToBytes("recur/signed-links/v1"))
    return { id: keyIdOf(masterKey), aes, link, until } satisfies RingKey
  })

const open = async (key: RingKey, iv: string, ct: string, aad?: Uint8Array) =>
  new TextDecoder().decode(
    await globalThis.crypto.subtle.decrypt(
      aad ? { name: "AES-GCM", iv: fromB64url(iv), additionalData: aad } : { name: "AES-GCM", iv: fromB64url(iv) },
      key.aes,
      fromB64url(ct)
    )
  )

/**
 * The secrets service keyed by a 32-byte master key, given as 64 hex characters or base64, and the
 * keys it replaced (newest first).
 *
 * @since 0.1.0
 */
export const make = (masterKey: Redacted.Redacted<string>, previous: ReadonlyArray<PreviousKey> = []) =>
  Effect.gen(function* () {
    const current = yield* ringKey(masterKey, Number.POSITIVE_INFINITY)
    const older: Array<RingKey> = []
    for (const p of previous) {
      const k = yield* ringKey(p.key, p.until ?? Number.POSITIVE_INFINITY)
      if (k.id !== current.id && !older.some((o) => o.id === k.id)) older.push(k)
    }
    const ring = [current, ...older]
    const signWith = (key: RingKey, text: string) => b64url(hmac(sha256, key.link, utf8ToBytes(text)))
    const encrypt = (plaintext: string) =>
      Effect.promise(async () => {
        const iv = globalThis.crypto.getRandomValues(new Uint8Array(12))
        const ct = new Uint8Array(
          await globalThis.crypto.subtle.encrypt(
            { name: "AES-GCM", iv, additionalData: utf8ToBytes(`v2.${current.id}`) },
            current.aes,
            new TextEncoder().encode(plaintext)
          )
        )
        return `v2.${current.id}.${b64url(iv)}.${b64url(ct)}`
      })
    const decrypt = (ciphertext: string) =>
      Effect.promise(async () => {
        const parts = ciphertext.split(".")
        if (parts[0] === "v2" && parts.length === 4) {
          const key = ring.find((k) => k.id === parts[1])
          if (key === undefined) throw new Error(`ciphertext under an unknown master key (id ${parts[1]})`)
          return open(key, parts[2]!, parts[3]!, utf8ToBytes(`v2.${key.id}`))
        }
        if (parts[0] !== "v1" || parts.length !== 3 || !parts[1] || !parts[2])
          throw new Error("unknown ciphertext format")
        // written before ciphertexts named their key: GCM's tag refuses every key but its own
        for (const key of ring) {
          try {
            return await open(key, parts[1], parts[2])
          } catch {
            // not this key
          }
        }
        throw new Error("no master key of the ring decrypts this ciphertext")
      })
    return Secrets.of({
      hash: sha256Hex,
      sign: (text) => Effect.sync(() => signWith(current, text)),
      verify: (text, signature) =>
        Effect.map(Clock.currentTimeMillis, (now) =>
          // every acceptable key is tried, so the time taken does not tell which one matched
          ring.reduce((ok, key) => (key.until > now && timingSafeEqual(signWith(key, text), signature)) || ok, false)
        ),
      keyId: current.id,
      encrypt,
      decrypt,
      reseal: (ciphertext) =>
        ciphertext.startsWith(`v2.${current.id}.`)
          ? Effect.succeed(ciphertext)
          : Effect.flatMap(decrypt(ciphertext), encrypt)
    })
  })

/**
 * The secrets layer for a master key (and the keys it replaced, newest first).
 *
 * @since 0.1.0
 */
export const layer = (
  masterKey: Redacted.Redacted<string>,
  previous: ReadonlyArray<PreviousKey> = []
): Layer.Layer<Secrets> => Layer.effect(Secrets, make(masterKey, previous))

// ------------------------------------------------------------------ comparing signatures

/** Whether two signatures are equal, in a time that does not depend on where they differ. */
export const timingSafeEqual = (a: string, b: string) => {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}
