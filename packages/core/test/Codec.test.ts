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
        fc.tuple(Arbitrary.make(schema), fc.string(), fc.anything()).map(([a, k, v]) => {
          const keys = Object.keys(a)
          const key = keys.length > 0 ? keys[k.length % keys.length]! : k
          return { ...a, [key]: v }
        }),
        // the same, keeping the class (so only the field is wrong)
        fc.tuple(Arbitrary.make(schema), fc.string(), fc.anything()).map(([a, k, v]) => {
          const keys = Object.keys(a)
          const key = keys.length > 0 ? keys[k.length % keys.length]! : k
          return Object.assign(Object.create(Object.getPrototypeOf(a)), a, { [key]: v })
        }),
        fc.anything()
      )
      fc.assert(fc.property(broken, (u) => {
        expect(outcome(() => fast(u))).toStrictEqual(outcome(() => slow(u)))
      }), { numRuns: 60 })
    })
  }
})
