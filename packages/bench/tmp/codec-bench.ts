// Encodes and decodes the same stored documents N times: Effect 4 Schema here; under Effect 3 also
// the hand-written compiled codecs (Codec.encoder / Codec.decoder) that Effect 4 replaced.
import { Common, Invoice } from "@recur/core"
import * as Core from "@recur/core"
import { DateTime, Schema } from "effect"
import { priceVersion } from "../../core/test/fixtures.js"

const invoice = new Invoice.Invoice({
  invoice_id: "inv_01", merchant_id: "mch_01", trade_id: "trd_01", subscription_id: "sub_01", price_id: "pri_01",
  customer_id: "cus_01", order_id: null, original_invoice_id: null, refund_order_id: null, amount: "30.00",
  currency: "USD", biz_status: "success", invoice_type: "renewal",
  paid_at: DateTime.unsafeMake ? (DateTime as any).unsafeMake(Date.UTC(2026, 10, 22, 10, 4, 5)) : (DateTime as any).makeUnsafe(Date.UTC(2026, 10, 22, 10, 4, 5)), cycle_index: 3,
  created_at: (DateTime as any).unsafeMake ? (DateTime as any).unsafeMake(Date.UTC(2026, 10, 22, 10, 4, 5)) : (DateTime as any).makeUnsafe(Date.UTC(2026, 10, 22, 10, 4, 5)), metadata: { plan: "pro" },
  Discounts: new Common.Discounts({ current_period: [] }), price_version_id: "prv_01", tax_amount: "0.00"
} as any)
const pv = priceVersion()
const N = Number(process.env.N ?? 200_000)
const time = (label: string, f: () => unknown) => {
  for (let i = 0; i < 20_000; i++) f()
  const t0 = performance.now()
  for (let i = 0; i < N; i++) f()
  const ms = performance.now() - t0
  console.log(`${label}: ${Math.round((N / ms) * 1000).toLocaleString("en-US")} ops/s`)
}
const codec = (Core as any).Codec
for (const [name, schema, value] of [["Invoice", Invoice.Invoice, invoice], ["PriceVersion", (pv as any).constructor, pv]] as const) {
  const json = JSON.parse(JSON.stringify(Schema.encodeSync(schema as any)(value)))
  const enc = Schema.encodeSync(schema as any), dec = Schema.decodeUnknownSync(schema as any)
  time(`${name} encode, Schema`, () => enc(value))
  time(`${name} decode, Schema`, () => dec(json))
  if (codec) {
    const cenc = codec.encoder(schema), cdec = codec.decoder(schema)
    time(`${name} encode, hand-written Codec`, () => cenc(value))
    time(`${name} decode, hand-written Codec`, () => cdec(json))
  }
}
