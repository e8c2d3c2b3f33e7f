/**
 * The rules of invoice documents, told through the engine's services on a frozen sandbox clock:
 * numbers taken at issue from gapless per-merchant series (credit notes apart, a new prefix its
 * own series, concurrent checkouts 1..n), a document that keeps what it stated at issue whatever
 * the catalog, the tax rates or the discounts do after, and links signed per invoice. Every
 * amount is exact, in minor units. Run against any storage adapter.
 *
 * @since 0.1.0
 */
import { expect, layer } from "@effect/vitest"
import {
  Billing,
  Catalog,
  type Invoice,
  Merchants,
  Refunds,
  SessionPayments,
  type Store,
  Subscriptions,
  TaxRates
} from "@recur/core"
import { Effect, type Layer, Option } from "effect"
import {
  invoicesOf,
  discountsByRequest,
  address,
  advance,
  minor,
  subscribeTo,
  taxedEngine,
  shopAt
} from "./ScenarioKit.js"

const START = "2026-01-01T00:00:00Z"

/** Every invoice of the merchant, oldest first. */
const allInvoices = (merchantId: string) =>
  Effect.map(
    Billing.Billing.use((b) => b.listInvoices(merchantId, { limit: 100 })),
    (p) => [...p.list].reverse()
  )

const numbers = (list: ReadonlyArray<Invoice.Invoice>) =>
  list
    .map((i) => i.number)
    .filter((n): n is string => n !== null)
    .sort()

/** What an issued invoice states: its number, amounts, lines, discounts and tax lines. */
const stated = (i: Invoice.Invoice) => ({
  number: i.number,
  amount: minor(i.amount),
  subtotal: minor(i.subtotal ?? "0"),
  tax: minor(i.tax_amount),
  lines: i.lines.map((l) => [l.kind, l.description, minor(l.amount)]),
  discounts: i.Discounts.current_period.map((d) => [d.discount_code, minor(d.discount_amount)]),
  tax_lines: i.tax_lines.map((t) => [t.name, t.percentage, minor(t.taxable_amount), minor(t.amount)])
})

/** The signature at the end of an invoice's hosted link. */
const tokenOf = (i: Invoice.Invoice) => i.hosted_invoice_url!.split("/").at(-1)!

/**
 * Registers the suite.
 *
 * @since 0.1.0
 */
export const suite = <E>(name: string, storage: Layer.Layer<Store.Storage, E>) =>
  layer(taxedEngine(storage), { timeout: "120 seconds" })(`Invoice document scenarios: ${name}`, (it) => {
    it.effect(
      "numbers are gapless per merchant and in the order issued; credit notes have their own series; a new prefix starts its own at 1",
      () =>
        Effect.gen(function* () {
          const _subs = yield* Subscriptions.Subscriptions
          const merchants = yield* Merchants.Merchants
          const { merchantId, priceId } = yield* shopAt(START)
          const { subscriptionId } = yield* subscribeTo(merchantId, priceId)
          yield* advance(merchantId, "2026-03-01T00:00:00Z")
          const issued = yield* invoicesOf(merchantId, subscriptionId)
          expect(issued.map((i) => [i.cycle_index, i.number])).toEqual([
            [0, "INV-000001"],
            [1, "INV-000002"],
            [2, "INV-000003"]
          ])
          const last = issued.at(-1)!
          yield* (yield* Refunds.Refunds).refund(merchantId, Refunds.refundOf(last.trade_id!, { amount: "10.00" }))
          yield* (yield* Refunds.Refunds).refund(merchantId, Refunds.refundOf(last.trade_id!, { amount: "5.00" }))
          const notes = (yield* invoicesOf(merchantId, subscriptionId)).filter((i) => i.invoice_type === "refund")
          expect(notes.map((i) => [i.number, minor(i.amount)])).toEqual([
            ["INV-CN-000001", 1000n],
            ["INV-CN-000002", 500n]
          ])
          const bad = yield* Effect.flip(merchants.setInvoicePrefix(merchantId, "in-v"))
          expect(bad).toMatchObject({ _tag: "InvalidParameter", param: "invoice_prefix" })
          yield* merchants.setInvoicePrefix(merchantId, "ACME2026")
          yield* advance(merchantId, "2026-04-01T00:00:00Z")
          expect(numbers(yield* allInvoices(merchantId))).toEqual([
            "ACME2026-000001",
            "INV-000001",
            "INV-000002",
            "INV-000003",
            "INV-CN-000001",
            "INV-CN-000002"
          ])
          // another merchant has its own series
          const other = yield* shopAt(START)
          yield* subscribeTo(other.merchantId, other.priceId)
          expect(numbers(yield* allInvoices(other.merchantId))).toEqual(["INV-000001"])
        })
    )

    it.effect("eight concurrent checkouts take the numbers 1 to 8 exactly: none skipped, none twice", () =>
      Effect.gen(function* () {
        const { merchantId, priceId } = yield* shopAt(START)
        yield* Effect.forEach(Array.from({ length: 8 }), () => subscribeTo(merchantId, priceId), {
          concurrency: "unbounded"
        })
        expect(numbers(yield* allInvoices(merchantId))).toEqual(
          Array.from({ length: 8 }, (_, i) => `INV-00000${i + 1}`)
        )
      })
    )

    it.effect("a declined checkout takes no number and has no link until it is paid; then it takes the next one", () =>
      Effect.gen(function* () {
        const _billing = yield* Billing.Billing
        const { merchantId, priceId } = yield* shopAt(START)
        const declined = yield* subscribeTo(merchantId, priceId, {}, "4000000000000002")
        expect(declined.result.status).not.toBe("succeeded")
        const drafts = yield* allInvoices(merchantId)
        expect(drafts.map((i) => [i.biz_status, i.number, i.hosted_invoice_url, i.invoice_pdf])).toEqual([
          ["pending", null, null, null]
        ])
        yield* subscribeTo(merchantId, priceId)
        const retried = yield* (yield* SessionPayments.SessionPayments).paySession(
          merchantId,
          declined.opened.session_id,
          {
            number: "4242424242424242",
            exp_month: 12,
            exp_year: 2099,
            cvc: "123"
          }
        )
        expect(retried.status).toBe("succeeded")
        const all = yield* allInvoices(merchantId)
        expect(all.map((i) => [i.biz_status, i.number])).toEqual([
          ["success", "INV-000002"],
          ["success", "INV-000001"]
        ])
      })
    )

    it.effect(
      "an issued document keeps what it stated — 50.00 less TEN 5.00 plus 20 % VAT 9.00 = 54.00 — after the price, the tax rate and the discount change; the next renewal bills what holds then",
      () =>
        Effect.gen(function* () {
          const billing = yield* Billing.Billing
          const catalog = yield* Catalog.Catalog
          const taxRates = yield* TaxRates.TaxRates
          const discounts = yield* discountsByRequest
          const { merchantId, productId, priceId } = yield* shopAt(START, "50.00")
          const vat = yield* taxRates.create(merchantId, { name: "VAT", percentage: "20", country: "GB" })
          const ten = yield* discounts.create(merchantId, {
            name: "Ten",
            code: "TEN",
            discount_type: "percentage",
            percent_off: 10,
            duration: "forever"
          })
          const { subscriptionId } = yield* subscribeTo(merchantId, priceId, {
            discount_code: "TEN",
            billing_address: address("GB")
          })
          const [issued] = yield* invoicesOf(merchantId, subscriptionId)
          const atIssue = {
            number: "INV-000001",
            amount: 5400n,
            subtotal: 5000n,
            tax: 900n,
            lines: [
              ["subscription", "Plan 50.00 × 1", 5000n],
              ["discount", "Discount TEN", -500n]
            ],
            discounts: [["TEN", 500n]],
            tax_lines: [["VAT", "20", 4500n, 900n]]
          }
          expect(stated(issued!)).toEqual(atIssue)
          // the catalog, the tax and the discount all change after issue
          yield* catalog.createVersion(merchantId, priceId, {
            name: "Plan renamed",
            product_id: productId,
            currency: "USD",
            billing_type: "recurring",
            price_type: "flat_price",
            price_plan: { billing_cycle_unit: "month", billing_cycle_count: 1, base_price_val: "80.00" }
          })
          yield* taxRates.archive(merchantId, vat.tax_rate_id)
          yield* taxRates.create(merchantId, { name: "VAT", percentage: "25", country: "GB" })
          yield* discounts.end(merchantId, ten.discount_id)
          // the API and the document behind its link state what they stated
          expect(stated(yield* billing.getInvoice(merchantId, issued!.invoice_id))).toEqual(atIssue)
          const doc = Option.getOrThrow(yield* billing.invoiceDocument(issued!.invoice_id, tokenOf(issued!)))
          expect(stated(doc.invoice)).toEqual(atIssue)
          // the renewal: the subscription's price version, its discount (ending stops new redemptions
          // only), the rate in force — 45.00 + 25 % = 56.25
          yield* advance(merchantId, "2026-02-01T00:00:00Z")
          const renewal = (yield* invoicesOf(merchantId, subscriptionId)).find((i) => i.cycle_index === 1)!
          expect([renewal.number, minor(renewal.amount), minor(renewal.tax_amount)]).toEqual([
            "INV-000002",
            5625n,
            1125n
          ])
          expect(stated(yield* billing.getInvoice(merchantId, issued!.invoice_id))).toEqual(atIssue)
        })
    )

    it.effect(
      "links are signed per invoice: the page and the PDF share one signature; a changed, truncated, borrowed or overlong one finds nothing",
      () =>
        Effect.gen(function* () {
          const billing = yield* Billing.Billing
          const { merchantId, priceId } = yield* shopAt(START)
          const a = yield* subscribeTo(merchantId, priceId)
          const b = yield* subscribeTo(merchantId, priceId)
          const [ia] = yield* invoicesOf(merchantId, a.subscriptionId)
          const [ib] = yield* invoicesOf(merchantId, b.subscriptionId)
          expect(ia!.hosted_invoice_url).toMatch(
            /^http:\/\/localhost:4000\/invoice\/inv_[0-9a-z]{26}\/[A-Za-z0-9_-]{43}$/
          )
          expect(ia!.hosted_invoice_url).toBe(`http://localhost:4000/invoice/${ia!.invoice_id}/${tokenOf(ia!)}`)
          expect(ia!.invoice_pdf).toBe(`${ia!.hosted_invoice_url}/pdf`)
          const found = yield* billing.invoiceDocument(ia!.invoice_id, tokenOf(ia!))
          expect(Option.map(found, (d) => [d.invoice.invoice_id, d.merchantName, d.payable])).toEqual(
            Option.some([ia!.invoice_id, "Acme", false])
          )
          const token = tokenOf(ia!)
          for (const [id, bad] of [
            [ia!.invoice_id, `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`],
            [ia!.invoice_id, token.slice(0, 20)],
            [ia!.invoice_id, tokenOf(ib!)],
            [ib!.invoice_id, token],
            [ia!.invoice_id, "x".repeat(5000)],
            ["inv_01jd0000000000000000000000", token],
            ["not-an-invoice", token]
          ] as const)
            expect([id, bad.slice(0, 12), Option.isNone(yield* billing.invoiceDocument(id, bad))]).toEqual([
              id,
              bad.slice(0, 12),
              true
            ])
        })
    )
  })
