/**
 * One-off charges told through the engine's services on a frozen sandbox clock (issue 34, item 3):
 * a customer's invoice items billed on a one-off invoice charged to the card on file, each item
 * once under concurrent calls; an item pending on a subscription billed by its renewal and shown
 * by its upcoming invoice; a declined card on file failing the invoice without dunning. Run
 * against any storage adapter (memory, PGlite, PostgreSQL).
 *
 * @since 0.1.0
 */
import { expect, layer } from "@effect/vitest"
import { Billing, InvoiceItems, OneOffInvoices, Renewals, type Store } from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Effect, Exit, type Layer, Option } from "effect"
import {
  advance,
  eventsOf,
  invoicesOf,
  merchantAt,
  minor,
  monthly,
  productOf,
  subscribeTo,
  taxedEngine
} from "./ScenarioKit.js"

const START = "2026-01-01T00:00:00Z"

/** A merchant frozen on Jan 1, 2026 and a customer subscribed monthly at 30.00 with `number`. */
const subscribed = (number = "4242424242424242") =>
  Effect.gen(function* () {
    const merchantId = yield* merchantAt(START)
    const priceId = yield* monthly(merchantId, yield* productOf(merchantId), "30.00")
    const { customerId, subscriptionId } = yield* subscribeTo(merchantId, priceId, {}, number)
    return { merchantId, customerId, subscriptionId }
  })

const item = (merchantId: string, command: InvoiceItems.CreateInvoiceItem) =>
  InvoiceItems.InvoiceItems.use((s) => s.create(merchantId, command))

const invoice = (merchantId: string, customerId: string) =>
  OneOffInvoices.OneOffInvoices.use((s) => s.create(merchantId, { customer_id: customerId }))

/**
 * Registers the suite.
 *
 * @since 0.1.0
 */
export const suite = <E>(name: string, storage: Layer.Layer<Store.Storage, E>) =>
  layer(taxedEngine(storage), { timeout: "120 seconds" })(`One-off scenarios: ${name}`, (it) => {
    it.effect(
      "items → one one-off invoice charged to the card on file; four concurrent calls bill each item once",
      () =>
        Effect.gen(function* () {
          const { merchantId, customerId } = yield* subscribed()
          for (const unit_amount of ["1.00", "2.00", "3.50"])
            yield* item(merchantId, { customer_id: customerId, currency: "USD", unit_amount, quantity: 2 })
          const exits = yield* Effect.all(
            Array.from({ length: 4 }, () => Effect.exit(invoice(merchantId, customerId))),
            { concurrency: "unbounded" }
          )
          const made = exits.filter(Exit.isSuccess).map((e) => e.value)
          expect(made.length).toBe(1)
          const one = made[0]!
          expect([one.invoice_type, one.biz_status, minor(one.amount), one.lines.length]).toEqual([
            "one_off",
            "success",
            1300n,
            3
          ])
          expect(yield* eventsOf(merchantId, one.invoice_id)).toContain("v2.invoice.paid")
          const left = yield* InvoiceItems.InvoiceItems.use((s) =>
            s.list(merchantId, { customer_id: customerId, pending: true })
          )
          expect(left.list).toEqual([])
        })
    )

    it.effect("an item on a subscription: on its upcoming invoice, then on its renewal, billed once", () =>
      Effect.gen(function* () {
        const { merchantId, customerId, subscriptionId } = yield* subscribed()
        const on = yield* item(merchantId, {
          customer_id: customerId,
          subscription_id: subscriptionId,
          unit_amount: "4.00",
          quantity: 3
        })
        const upcoming = Option.getOrThrow(yield* Renewals.Renewals.use((r) => r.upcoming(merchantId, subscriptionId)))
        expect(upcoming.lines.map((l) => [l.kind, minor(l.amount)])).toEqual([
          ["subscription", 3000n],
          ["invoice_item", 1200n]
        ])
        yield* advance(merchantId, "2026-02-01T12:00:00Z")
        const renewal = (yield* invoicesOf(merchantId, subscriptionId)).find((i) => i.cycle_index === 1)!
        expect([minor(renewal.amount), renewal.biz_status]).toEqual([4200n, "success"])
        expect(upcoming.lines.map((l) => [l.kind, l.amount])).toEqual(renewal.lines.map((l) => [l.kind, l.amount]))
        const billed = yield* InvoiceItems.InvoiceItems.use((s) => s.get(merchantId, on.invoice_item_id))
        expect([billed.status, billed.invoice_id]).toEqual(["invoiced", renewal.invoice_id])
        yield* advance(merchantId, "2026-03-01T12:00:00Z")
        const third = (yield* invoicesOf(merchantId, subscriptionId)).find((i) => i.cycle_index === 2)!
        expect(minor(third.amount)).toBe(3000n)
      })
    )

    it.effect("a declined card on file: the one-off invoice fails, the subscription is not dunned", () =>
      Effect.gen(function* () {
        const { merchantId, customerId, subscriptionId } = yield* subscribed("4000000000000341")
        yield* item(merchantId, { customer_id: customerId, currency: "USD", unit_amount: "9.00" })
        const failed = yield* invoice(merchantId, customerId)
        expect(failed.biz_status).toBe("failed")
        expect(yield* eventsOf(merchantId, failed.invoice_id)).toContain("v2.invoice.payment_failed")
        const sub = yield* Billing.Billing.use((b) => b.getSubscription(merchantId, subscriptionId))
        expect(sub.status).toBe("active")
      })
    )

    it.effect("the processor unavailable: the invoice waits, the worker charges the card on file later, once", () =>
      Effect.gen(function* () {
        const { merchantId, customerId } = yield* subscribed()
        yield* item(merchantId, { customer_id: customerId, currency: "USD", unit_amount: "12.00" })
        const controls = yield* SandboxGateway.SandboxControls
        yield* controls.unavailableNext(1)
        const waiting = yield* invoice(merchantId, customerId)
        expect(waiting.biz_status).toBe("pending")
        yield* advance(merchantId, "2026-01-01T00:10:00Z")
        const paid = yield* Billing.Billing.use((b) => b.getInvoice(merchantId, waiting.invoice_id))
        expect(paid.biz_status).toBe("success")
        expect((yield* Billing.Billing.use((b) => b.getTrade(merchantId, waiting.trade_id!))).trade_status).toBe(
          "succeeded"
        )
        expect((yield* eventsOf(merchantId, waiting.invoice_id)).filter((t) => t === "v2.invoice.paid")).toEqual([
          "v2.invoice.paid"
        ])
      })
    )
  })
