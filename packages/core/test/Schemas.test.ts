import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Schema } from "effect"
import { Common, Invoice, Lifecycle } from "../src/index.js"
import { priceVersion } from "./fixtures.js"
import { Price } from "../src/index.js"

describe("Domain schemas", () => {
  it.effect("an invoice encodes to the seed's JSON, with its capital-D Discounts and RFC 3339 seconds", () =>
    Effect.gen(function* () {
      const invoice = new Invoice.Invoice({
        invoice_id: "inv_01",
        merchant_id: "mch_01",
        trade_id: "trd_01",
        subscription_id: "sub_01",
        price_id: "pri_01",
        customer_id: "cus_01",
        order_id: null,
        original_invoice_id: null,
        refund_order_id: null,
        amount: "30.00",
        currency: "USD",
        biz_status: "success",
        invoice_type: "renewal",
        paid_at: DateTime.makeUnsafe(Date.UTC(2026, 10, 22, 10, 4, 5, 789)),
        cycle_index: 3,
        created_at: DateTime.makeUnsafe(Date.UTC(2026, 10, 22, 10, 4, 5)),
        metadata: { plan: "pro" },
        Discounts: new Common.Discounts({ current_period: [] }),
        price_version_id: "prv_01",
        tax_amount: "0.00",
        subtotal: "30.00",
        lines: [],
        tax_lines: [],
        number: "INV-000001",
        hosted_invoice_url: null,
        invoice_pdf: null,
        customer_name: "Erika Mustermann",
        customer_email: null,
        customer_address: null,
        merchant_name: "Acme"
      })
      const json = yield* Schema.encodeEffect(Invoice.Invoice)(invoice)
      expect(json).toMatchObject({
        Discounts: { current_period: [] },
        paid_at: "2026-11-22T10:04:05Z",
        created_at: "2026-11-22T10:04:05Z",
        cycle_index: 3
      })
      expect(Object.keys(json).sort()).toEqual([
        "Discounts",
        "amount",
        "automatically_finalizes_at", // Recur's: when a draft is finalised by the worker (issue 34)
        "biz_status",
        "collection_method", // Recur's: charged automatically or sent (issue 34)
        "created_at",
        "credit_applied", // Recur's: the customer's balance it applied
        "currency",
        "customer_address", // Recur's: the parties as issued
        "customer_email",
        "customer_id",
        "customer_name",
        "cycle_index",
        "dispute_status", // Recur's: whether the charge that paid it is disputed
        "due_date", // Recur's: when a sent invoice is due
        "dunning", // Recur's: where dunning stands after its last declined renewal charge
        "hosted_invoice_url", // Recur's: the customer's page
        "invoice_id",
        "invoice_pdf", // Recur's: the PDF
        "invoice_type",
        "lines", // Recur's: the document's lines
        "merchant_id",
        "merchant_name",
        "metadata",
        "number", // Recur's: the merchant's sequential number
        "order_id",
        "original_invoice_id",
        "paid_at",
        "post_payment_credit_notes_amount",
        "pre_payment_credit_notes_amount",
        "price_id",
        "price_version_id",
        "refund_order_id",
        "subscription_id",
        "subtotal", // Recur's: before discounts
        "tax_amount",
        "tax_lines", // Recur's: each tax
        "trade_id"
      ])
      const back = yield* Schema.decodeUnknownEffect(Invoice.Invoice)(JSON.parse(JSON.stringify(json)))
      expect(back.amount).toBe("30.00")
    })
  )

  it.effect("a price version round-trips through JSON", () =>
    Effect.gen(function* () {
      const pv = priceVersion()
      const json = JSON.parse(JSON.stringify(yield* Schema.encodeEffect(Price.PriceVersion)(pv)))
      expect(json.price_plan.billing_cycle_count).toBe(1)
      expect(json.created_at).toBe("2026-11-22T10:04:05Z")
      const back = yield* Schema.decodeUnknownEffect(Price.PriceVersion)(json)
      expect(back.price_plan?.base_price_val).toBe("30.00")
      // Recur's (issue 35): the billable metric a usage price rates and its group, null without one
      expect([json.billable_metric_id, json.metric_group]).toEqual([null, null])
      // a version stored before them decodes with both null
      const { billable_metric_id: _m, metric_group: _g, ...older } = json
      const old = yield* Schema.decodeUnknownEffect(Price.PriceVersion)(older)
      expect([old.billable_metric_id, old.metric_group]).toEqual([null, null])
      const grouped = priceVersion({ billable_metric_id: "bm_01", metric_group: { region: "eu" } })
      const groupedJson = yield* Schema.encodeEffect(Price.PriceVersion)(grouped)
      expect([groupedJson.billable_metric_id, groupedJson.metric_group]).toEqual(["bm_01", { region: "eu" }])
    })
  )

  it.effect("timestamps reject non-RFC 3339 text and metadata enforces its limits", () =>
    Effect.gen(function* () {
      const ts = Schema.decodeUnknownResult(Common.Timestamp)
      expect(ts("2026-11-22T10:04:05+02:00")._tag).toBe("Success")
      expect(ts("2026-11-22")._tag).toBe("Failure")
      expect(ts("yesterday")._tag).toBe("Failure")
      const md = Schema.decodeUnknownResult(Common.Metadata)
      expect(md({ a: "b" })._tag).toBe("Success")
      expect(md({ ["k".repeat(41)]: "v" })._tag).toBe("Failure")
      expect(md({ k: "v".repeat(501) })._tag).toBe("Failure")
      expect(md(Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`k${i}`, "v".repeat(250)])))._tag).toBe(
        "Failure"
      )
      expect(md({ k: 1 })._tag).toBe("Failure")
    })
  )

  it("state literals come from the lifecycle tables", () => {
    expect(Lifecycle.SubscriptionStatus.literals).toContain("past_due")
    expect(Lifecycle.InvoiceStatus.literals).toEqual([
      "draft", // a renewal's invoice in the merchant's grace period
      "open",
      "pending",
      "retrying",
      "success",
      "failed",
      "refunded",
      "partially_refunded",
      "void", // Stripe's `void`: a checkout's first invoice never paid, or voided by the merchant
      "uncollectible" // Stripe's: written off by the merchant
    ])
  })
})
