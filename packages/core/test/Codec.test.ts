import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, FastCheck as fc, Schema } from "effect"
import { Codec, Entities, Invoice, Subscription, Trade } from "../src/index.js"

const entities = [
  Entities.merchant, Entities.apiKey, Entities.customer, Entities.category, Entities.product, Entities.price, Entities.priceVersion,
  Entities.checkoutSession, Entities.subscription, Entities.trade, Entities.invoice, Entities.refund, Entities.usageRecord,
  Entities.webhookEndpoint, Entities.webhookEvent, Entities.webhookDelivery
]
const payloads: ReadonlyArray<readonly [string, Schema.Schema<any, any>]> = [
  ["Trade", Trade.Trade], ["Invoice", Invoice.Invoice], ["Subscription", Subscription.Subscription],
  ...entities.map((e) => [e.name, e.schema as Schema.Schema<any, any>] as const)
]

/** What a call does: its value, or the message of what it threw. */
const outcome = (f: () => unknown) => {
  try {
    return { ok: f() }
  } catch (e) {
    return { threw: String(e) }
  }
}

/** A value with one of its keys (or a new one, when it has none) set to anything. */
const oneFieldReplaced = <T extends object>(arb: fc.Arbitrary<T>, set: (value: T, field: Record<string, unknown>) => unknown) =>
  fc.tuple(arb, fc.string(), fc.anything()).map(([a, k, v]) => {
    const keys = Object.keys(a)
    const key = keys.length > 0 ? keys[k.length % keys.length]! : k
    return set(a, { [key]: v })
  })

describe("Codec.encoder", () => {
  for (const [name, schema] of payloads) {
    it(`${name}: equals Schema.encodeSync on every valid value`, () => {
      const fast = Codec.encoder(schema)
      const slow = Schema.encodeSync(schema)
      fc.assert(fc.property(Arbitrary.make(schema), (a) => {
        expect(fast(a)).toStrictEqual(slow(a))
      }), { numRuns: 60 })
    })

    it(`${name}: the compiled path covers every valid value (no fallback)`, () => {
      const compiled = Codec.compiledOnly(schema)
      fc.assert(fc.property(Arbitrary.make(schema), (a) => {
        expect(compiled(a)).toStrictEqual(Schema.encodeSync(schema)(a))
      }), { numRuns: 30 })
    })

    it(`${name}: throws the same error as Schema.encodeSync on broken values`, () => {
      const fast = Codec.encoder(schema)
      const slow = Schema.encodeSync(schema)
      // a valid value with one field replaced by anything, or anything at all
      const broken = fc.oneof(
        oneFieldReplaced(Arbitrary.make(schema), (a, field) => ({ ...a, ...field })),
        // the same, keeping the class (so only the field is wrong)
        oneFieldReplaced(Arbitrary.make(schema), (a, field) => Object.assign(Object.create(Object.getPrototypeOf(a)), a, field)),
        fc.anything()
      )
      fc.assert(fc.property(broken, (u) => {
        expect(outcome(() => fast(u))).toStrictEqual(outcome(() => slow(u)))
      }), { numRuns: 60 })
    })
  }
})

describe("Codec.decoder", () => {
  // what storage reads back: the encoded value as JSON
  const stored = (schema: Schema.Schema<any, any>) => Arbitrary.make(schema).map((a) => JSON.parse(JSON.stringify(Schema.encodeSync(schema)(a))))

  for (const [name, schema] of payloads) {
    it(`${name}: equals Schema.decodeUnknownSync on every stored value`, () => {
      const fast = Codec.decoder(schema)
      const slow = Schema.decodeUnknownSync(schema)
      // (a generated NaN or Infinity is stored as null and fails both ways: outcomes are compared)
      fc.assert(fc.property(stored(schema), (i) => {
        expect(outcome(() => fast(i))).toStrictEqual(outcome(() => slow(i)))
      }), { numRuns: 60 })
    })

    it(`${name}: the compiled path covers every stored value (no fallback)`, () => {
      const compiled = Codec.compiledDecodeOnly(schema)
      const valid = stored(schema).filter((i) => Schema.decodeUnknownEither(schema)(i)._tag === "Right")
      fc.assert(fc.property(valid, (i) => {
        expect(compiled(i)).toStrictEqual(Schema.decodeUnknownSync(schema)(i))
      }), { numRuns: 30 })
    })

    it(`${name}: throws the same error as Schema.decodeUnknownSync on broken input`, () => {
      const fast = Codec.decoder(schema)
      const slow = Schema.decodeUnknownSync(schema)
      const broken = fc.oneof(
        oneFieldReplaced(stored(schema), (i, field) => ({ ...i, ...field })),
        // one field dropped
        fc.tuple(stored(schema), fc.nat()).map(([i, n]) => {
          const keys = Object.keys(i)
          if (keys.length === 0) return i
          const { [keys[n % keys.length]!]: _, ...rest } = i
          return rest
        }),
        fc.anything()
      )
      fc.assert(fc.property(broken, (u) => {
        expect(outcome(() => fast(u))).toStrictEqual(outcome(() => slow(u)))
      }), { numRuns: 60 })
    })
  }
})
