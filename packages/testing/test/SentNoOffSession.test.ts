/**
 * A payment a payer makes on an invoice's page that the processor cannot take is never made again
 * off-session with a card on file: a sent one-off invoice, a sent renewal and a written-off
 * renewal stay payable on their page, their trade not charged (docs/decisions.md, "Issue 34 —
 * payments in flight on invoices that change").
 */
import { expect, layer } from "@effect/vitest"
import {
  Billing,
  Entities,
  Invoice,
  InvoiceActions,
  InvoiceItems,
  InvoicePayments,
  OneOffInvoices,
  Reconciliation,
  SentInvoices,
  Store
} from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Effect, Option, Result } from "effect"
import { MemoryStorage } from "../src/index.js"
import {
  advance,
  card,
  invoicesOf,
  merchantAt,
  monthly,
  productOf,
  subscribeTo,
  taxedEngine
} from "../src/ScenarioKit.js"

/** Pays the invoice on its page with a card while the processor is unavailable, then lets the worker run. */
const payWhileUnavailable = (merchantId: string, invoiceId: string, until: string) =>
  Effect.gen(function* () {
    const controls = yield* SandboxGateway.SandboxControls
    yield* controls.unavailableNext(1)
    const paid = yield* InvoicePayments.InvoicePayments.use((p) =>
      p.payInvoice(merchantId, invoiceId, card("4000000000009995"))
    )
    expect(paid.status).toBe("unavailable")
    yield* advance(merchantId, until)
    const invoice = yield* Billing.Billing.use((b) => b.getInvoice(merchantId, invoiceId))
    const trade = yield* Billing.Billing.use((b) => b.getTrade(merchantId, invoice.trade_id!))
    return { invoice, trade }
  })

/** A subscription under `send_invoice` whose first renewal is sent (open, not charged). */
const sentRenewal = Effect.gen(function* () {
  const merchantId = yield* merchantAt("2026-01-01T00:00:00Z")
  const priceId = yield* monthly(merchantId, yield* productOf(merchantId), "30.00")
  const { subscriptionId } = yield* subscribeTo(merchantId, priceId, {}, "4242424242424242")
  yield* SentInvoices.SentInvoices.use((s) =>
    s.setCollection(merchantId, subscriptionId, { collection_method: "send_invoice", days_until_due: 30 })
  )
  yield* advance(merchantId, "2026-02-01T00:00:10Z")
  const renewal = (yield* invoicesOf(merchantId, subscriptionId)).find((i) => i.invoice_type === "renewal")!
  expect([renewal.biz_status, renewal.collection_method]).toEqual(["open", "send_invoice"])
  return { merchantId, renewal }
})

layer(taxedEngine(MemoryStorage.layer), { timeout: "120 seconds" })("page payments never retried off-session", (it) => {
  it.effect(
    "a sent one-off invoice is never charged off-session to the card on file",
    () =>
      Effect.gen(function* () {
        const merchantId = yield* merchantAt("2026-01-01T00:00:00Z")
        const priceId = yield* monthly(merchantId, yield* productOf(merchantId), "30.00")
        const { customerId } = yield* subscribeTo(merchantId, priceId, {}, "4242424242424242")
        yield* InvoiceItems.InvoiceItems.use((s) =>
          s.create(merchantId, { customer_id: customerId, currency: "USD", unit_amount: "12.00" })
        )
        const sent = yield* OneOffInvoices.OneOffInvoices.use((s) =>
          s.create(merchantId, {
            customer_id: customerId,
            collection_method: "send_invoice",
            days_until_due: 30
          } as any)
        )
        expect([sent.biz_status, sent.collection_method]).toEqual(["open", "send_invoice"])
        const { invoice, trade } = yield* payWhileUnavailable(merchantId, sent.invoice_id, "2026-01-01T00:10:00Z")
        // the typed card was never charged, nor the card on file; the invoice is payable on its page
        expect(trade.trade_status).toBe("requires_payment_method")
        expect(invoice.biz_status).toBe("pending")
        const again = yield* InvoicePayments.InvoicePayments.use((p) =>
          p.payInvoice(merchantId, sent.invoice_id, card("4242424242424242"))
        )
        expect(again.status).toBe("succeeded")
      }),
    { timeout: 120_000 }
  )

  it.effect(
    "a sent renewal paid on its page while the processor is unavailable stays open, the card on file untouched",
    () =>
      Effect.gen(function* () {
        const { merchantId, renewal } = yield* sentRenewal
        const { invoice, trade } = yield* payWhileUnavailable(merchantId, renewal.invoice_id, "2026-02-01T01:00:00Z")
        expect(trade.trade_status).toBe("requires_payment_method")
        expect(invoice.biz_status).toBe("open")
      }),
    { timeout: 120_000 }
  )

  it.effect(
    "a written-off renewal paid on its page while the processor is unavailable stays uncollectible, not charged",
    () =>
      Effect.gen(function* () {
        const { merchantId, renewal } = yield* sentRenewal
        yield* InvoiceActions.InvoiceActions.use((a) => a.markUncollectible(merchantId, renewal.invoice_id))
        const { invoice, trade } = yield* payWhileUnavailable(merchantId, renewal.invoice_id, "2026-02-01T01:00:00Z")
        expect(trade.trade_status).toBe("requires_payment_method")
        expect(invoice.biz_status).toBe("uncollectible")
      }),
    { timeout: 120_000 }
  )

  it.effect(
    "a page payment confirmed after its invoice was voided (a race past the refusal): recorded on the trade, no crash",
    () =>
      Effect.gen(function* () {
        const { merchantId, renewal } = yield* sentRenewal
        const waiting = yield* InvoicePayments.InvoicePayments.use((p) =>
          p.payInvoice(merchantId, renewal.invoice_id, card("4000000000003220"))
        )
        expect(waiting.status).toBe("requires_action")
        const tradeId = waiting.trade.trade_id
        // the void refuses while the charge is in flight
        const refused = yield* Effect.exit(
          InvoiceActions.InvoiceActions.use((a) => a.voidInvoice(merchantId, renewal.invoice_id))
        )
        expect(refused._tag).toBe("Failure")
        // a void that slipped past the check (written directly, as a concurrent transaction could)
        const storage = yield* Store.Storage
        const invoices = storage.repository(Entities.invoice)
        const iv = Option.getOrThrow(yield* invoices.get(merchantId, renewal.invoice_id))
        const voided = Result.getOrThrow(Invoice.move(iv.value, "void", { dunning: null })).value
        yield* Effect.orDie(invoices.update(voided, iv.version))
        const controls = yield* SandboxGateway.SandboxControls
        expect(yield* controls.completeChallenge(tradeId, true)).toBe(true)
        yield* Reconciliation.Reconciliation.use((r) => r.reconcileTrade(merchantId, tradeId))
        const trade = yield* Billing.Billing.use((b) => b.getTrade(merchantId, tradeId))
        const invoice = yield* Billing.Billing.use((b) => b.getInvoice(merchantId, renewal.invoice_id))
        // the money taken is on the trade (for the operator to refund); the void invoice is left void
        expect([trade.trade_status, invoice.biz_status]).toEqual(["succeeded", "void"])
      }),
    { timeout: 120_000 }
  )
})
