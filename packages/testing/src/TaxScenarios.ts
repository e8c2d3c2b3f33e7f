/**
 * The rules of taxes, told through the engine's services on a frozen sandbox clock: an inclusive
 * rate carved out of the price against an exclusive one added to it, a region's rate before its
 * country's, tax on the discounted amount, one rounding per tax line (half away from zero) on
 * what the invoice bills, refunds and downgrades giving back the tax in proportion, and each
 * renewal taxed at its own customer's address. Every amount is exact, in minor units. Run
 * against any storage adapter.
 *
 * @since 0.1.0
 */
import { expect, layer } from "@effect/vitest"
import {
  Billing,
  Customer,
  Customers,
  type Invoice,
  PriceChanges,
  Refunds,
  type Store,
  Subscriptions,
  TaxRates
} from "@recur/core"
import { DateTime, Effect, type Layer } from "effect"
import { invoicesOf } from "./ScenarioKit.js"
import {
  address,
  advance,
  checkout,
  merchantAt,
  minor,
  monthly,
  productOf,
  subscribeTo,
  taxedEngine,
  discountsByRequest
} from "./ScenarioKit.js"

const START = "2026-01-01T00:00:00Z"

/** A merchant frozen on Jan 1, 2026 with one product. */
const shop = Effect.gen(function* () {
  const merchantId = yield* merchantAt(START)
  return { merchantId, productId: yield* productOf(merchantId) }
})

const rate = (merchantId: string, input: TaxRates.TaxRateCommand) =>
  TaxRates.TaxRates.use((t) => t.create(merchantId, input))

/** An invoice's amounts in minor units: total, subtotal, tax. */
const totals = (i: Invoice.Invoice) => [minor(i.amount), minor(i.subtotal ?? "0"), minor(i.tax_amount)]

/** An invoice's tax lines: name, inclusive, taxable amount and tax in minor units. */
const taxLines = (i: Invoice.Invoice) =>
  i.tax_lines.map((t) => [t.name, t.inclusive, minor(t.taxable_amount), minor(t.amount)])

const day = (t: DateTime.DateTime | null) => (t === null ? null : DateTime.formatIso(t).slice(0, 10))

/**
 * Registers the suite.
 *
 * @since 0.1.0
 */
export const suite = <E>(name: string, storage: Layer.Layer<Store.Storage, E>) =>
  layer(taxedEngine(storage), { timeout: "120 seconds" })(`Tax scenarios: ${name}`, (it) => {
    it.effect(
      "inclusive: 19 % in 119.00 at a German address charges 119.00, of it 19.00 tax on 100.00 — the renewal the same over the next period",
      () =>
        Effect.gen(function* () {
          const { merchantId, productId } = yield* shop
          const vat = yield* rate(merchantId, { name: "VAT", percentage: "19", country: "de", inclusive: true })
          const priceId = yield* monthly(merchantId, productId, "119.00")
          const { opened, trade, subscriptionId } = yield* subscribeTo(merchantId, priceId, {
            billing_address: address("DE")
          })
          expect([minor(opened.amount!), minor(opened.tax_amount!)]).toEqual([11900n, 1900n])
          expect([minor(trade!.amount), minor(trade!.tax_amount)]).toEqual([11900n, 1900n])
          yield* advance(merchantId, "2026-02-01T00:00:00Z")
          const [first, renewal] = yield* invoicesOf(merchantId, subscriptionId)
          expect(totals(first!)).toEqual([11900n, 11900n, 1900n])
          expect(first!.tax_lines.map((t) => [t.tax_rate_id, t.percentage, t.country, t.region])).toEqual([
            [vat.tax_rate_id, "19", "DE", null]
          ])
          expect(taxLines(first!)).toEqual([["VAT", true, 10000n, 1900n]])
          expect(totals(renewal!)).toEqual([11900n, 11900n, 1900n])
          expect(renewal!.lines.map((l) => [minor(l.amount), day(l.period_start), day(l.period_end)])).toEqual([
            [11900n, "2026-02-01", "2026-03-01"]
          ])
        })
    )

    it.effect(
      "exclusive: added to the price — a region's rate before its country's (107.25 in California), the customer's address when the session has none (105.00 in New York), none without an address",
      () =>
        Effect.gen(function* () {
          const { merchantId, productId } = yield* shop
          yield* rate(merchantId, { name: "Federal", percentage: "5", country: "US" })
          yield* rate(merchantId, { name: "CA sales tax", percentage: "7.25", country: "US", region: "US-CA" })
          const priceId = yield* monthly(merchantId, productId, "100.00")
          const inCa = yield* subscribeTo(merchantId, priceId, { billing_address: address("US", "CA") })
          expect([minor(inCa.trade!.amount), minor(inCa.trade!.tax_amount)]).toEqual([10725n, 725n])
          const [caInvoice] = yield* invoicesOf(merchantId, inCa.subscriptionId)
          expect(taxLines(caInvoice!)).toEqual([["CA sales tax", false, 10000n, 725n]])
          const { id } = yield* Customers.Customers.use((c) =>
            c.create(merchantId, {
              payer_id: "ny-1",
              address: new Customer.Address({ line1: "1 Main St", city: "New York", province: "NY", country: "US" })
            })
          )
          const inNy = yield* subscribeTo(merchantId, priceId, { customer_id: id })
          const [nyInvoice] = yield* invoicesOf(merchantId, inNy.subscriptionId)
          expect(totals(nyInvoice!)).toEqual([10500n, 10000n, 500n])
          expect(taxLines(nyInvoice!)).toEqual([["Federal", false, 10000n, 500n]])
          const nowhere = yield* subscribeTo(merchantId, priceId)
          expect([minor(nowhere.trade!.amount), minor(nowhere.trade!.tax_amount)]).toEqual([10000n, 0n])
        })
    )

    it.effect(
      "tax rounds once per tax line, half away from zero: 7.25 % of 10.00 (0.725) is 0.73, 19 % of 10.01 (1.9019) is 1.90 — where a 10 % discount on the same cent rounds half to even",
      () =>
        Effect.gen(function* () {
          const { merchantId, productId } = yield* shop
          yield* rate(merchantId, { name: "CA sales tax", percentage: "7.25", country: "US", region: "CA" })
          yield* rate(merchantId, { name: "VAT", percentage: "19", country: "DE" })
          const once = yield* checkout(merchantId, {
            mode: "payment",
            amount: "10.00",
            currency: "USD",
            billing_address: address("US", "CA")
          })
          expect([
            minor(once.opened.amount!),
            minor(once.opened.tax_amount!),
            minor(once.trade!.amount),
            minor(once.trade!.tax_amount)
          ]).toEqual([1073n, 73n, 1073n, 73n])
          const odd = yield* subscribeTo(merchantId, yield* monthly(merchantId, productId, "10.01"), {
            billing_address: address("DE")
          })
          expect([minor(odd.trade!.amount), minor(odd.trade!.tax_amount)]).toEqual([1191n, 190n])
          // 5 % of 0.50 is 0.025: tax rounds it up to 0.03, a discount of 5 % rounds it to even, 0.02
          yield* rate(merchantId, { name: "GST", percentage: "5", country: "AU" })
          yield* Effect.flatMap(discountsByRequest, (d) =>
            d.create(merchantId, {
              name: "Five",
              code: "FIVEPCT",
              discount_type: "percentage",
              percent_off: 5,
              duration: "forever"
            })
          )
          const half = yield* monthly(merchantId, productId, "0.50")
          const taxed = yield* subscribeTo(merchantId, half, { billing_address: address("AU") })
          const [t] = yield* invoicesOf(merchantId, taxed.subscriptionId)
          expect(totals(t!)).toEqual([53n, 50n, 3n])
          const discounted = yield* subscribeTo(merchantId, half, { discount_code: "FIVEPCT" })
          const [d] = yield* invoicesOf(merchantId, discounted.subscriptionId)
          expect([minor(d!.amount), minor(d!.Discounts.current_period[0]!.discount_amount)]).toEqual([48n, 2n])
        })
    )

    it.effect(
      "tax is on the discounted amount: 10 % off 50.00 with 20 % VAT bills 45.00 + 9.00 = 54.00, the lines 50.00 and -5.00",
      () =>
        Effect.gen(function* () {
          const { merchantId, productId } = yield* shop
          yield* rate(merchantId, { name: "VAT", percentage: "20", country: "GB" })
          yield* Effect.flatMap(discountsByRequest, (d) =>
            d.create(merchantId, {
              name: "Ten",
              code: "TEN",
              discount_type: "percentage",
              percent_off: 10,
              duration: "forever"
            })
          )
          const priceId = yield* monthly(merchantId, productId, "50.00")
          const { opened, subscriptionId } = yield* subscribeTo(merchantId, priceId, {
            discount_code: "TEN",
            billing_address: address("GB")
          })
          expect([minor(opened.amount!), minor(opened.tax_amount!)]).toEqual([5400n, 900n])
          const [inv] = yield* invoicesOf(merchantId, subscriptionId)
          expect(totals(inv!)).toEqual([5400n, 5000n, 900n])
          expect(taxLines(inv!)).toEqual([["VAT", false, 4500n, 900n]])
          expect(inv!.lines.map((l) => [l.kind, minor(l.amount)])).toEqual([
            ["subscription", 5000n],
            ["discount", -500n]
          ])
        })
    )

    it.effect(
      "an upgrade taxes its charge at today's rate and its credit gives back the tax its invoice collected, each rounded on its own: 30.00 → 60.00 on Jan 16 at 20 % is 6.19 on 30.97 less 3.10 on 15.48 — 3.09, not 3.10 on the net 15.49",
      () =>
        Effect.gen(function* () {
          const _subs = yield* Subscriptions.Subscriptions
          const { merchantId, productId } = yield* shop
          yield* rate(merchantId, { name: "VAT", percentage: "20", country: "FR" })
          const priceId = yield* monthly(merchantId, productId, "30.00")
          const bigger = yield* monthly(merchantId, productId, "60.00")
          const { subscriptionId, trade } = yield* subscribeTo(merchantId, priceId, {
            billing_address: address("FR")
          })
          expect([minor(trade!.amount), minor(trade!.tax_amount)]).toEqual([3600n, 600n])
          yield* advance(merchantId, "2026-01-16T00:00:00Z")
          const quote = yield* (yield* PriceChanges.PriceChanges).changePrice(
            merchantId,
            PriceChanges.change(subscriptionId, { priceId: bigger })
          )
          expect([minor(quote.credit), minor(quote.charge), minor(quote.net)]).toEqual([1548n, 3097n, 1549n])
          const upgrade = (yield* invoicesOf(merchantId, subscriptionId)).find((i) => i.invoice_type === "upgrade")!
          expect(upgrade.lines.map((l) => minor(l.amount))).toEqual([-1548n, 3097n])
          // 30.97 × 20 % = 6.194: 6.19; the credit's share of the 6.00 collected, 6.00 × 15.48 / 30.00 = 3.096: 3.10
          expect(totals(upgrade)).toEqual([1858n, 1549n, 309n])
          expect(taxLines(upgrade)).toEqual([
            ["VAT", false, 3097n, 619n],
            ["VAT", false, -1548n, -310n]
          ])
          expect(upgrade.lines.map((l) => day(l.period_end))).toEqual(["2026-02-01", "2026-02-01"])
          yield* advance(merchantId, "2026-02-01T00:00:00Z")
          const renewal = (yield* invoicesOf(merchantId, subscriptionId)).find((i) => i.invoice_type === "renewal")!
          expect(totals(renewal)).toEqual([7200n, 6000n, 1200n])
        })
    )

    it.effect(
      "a downgrade gives back the unused net and the exclusive tax paid on it, at the rate paid: 60.00 → 30.00 on Jan 16 at 20 % refunds 15.49 + 3.10, though the rate is 10 % by then",
      () =>
        Effect.gen(function* () {
          const _subs = yield* Subscriptions.Subscriptions
          const { merchantId, productId } = yield* shop
          const vat = yield* rate(merchantId, { name: "VAT", percentage: "20", country: "FR" })
          const big = yield* monthly(merchantId, productId, "60.00")
          const small = yield* monthly(merchantId, productId, "30.00")
          const { subscriptionId, trade } = yield* subscribeTo(merchantId, big, { billing_address: address("FR") })
          expect([minor(trade!.amount), minor(trade!.tax_amount)]).toEqual([7200n, 1200n])
          yield* advance(merchantId, "2026-01-16T00:00:00Z")
          yield* TaxRates.TaxRates.use((t) => t.archive(merchantId, vat.tax_rate_id))
          yield* rate(merchantId, { name: "VAT", percentage: "10", country: "FR" })
          const quote = yield* (yield* PriceChanges.PriceChanges).changePrice(
            merchantId,
            PriceChanges.change(subscriptionId, { priceId: small })
          )
          expect([minor(quote.credit), minor(quote.charge), minor(quote.net), quote.outcome]).toEqual([
            3097n,
            1548n,
            -1549n,
            "refund"
          ])
          const refunds = (yield* invoicesOf(merchantId, subscriptionId)).filter((i) => i.invoice_type === "refund")
          // 12.00 collected × 15.49 / 60.00 = 3.098: 3.10
          expect(refunds.map((i) => [minor(i.amount), minor(i.tax_amount)])).toEqual([[1859n, 310n]])
          expect(refunds[0]!.tax_lines.map((t) => t.percentage)).toEqual(["20"])
          // the next renewal is taxed at the rate in force then
          yield* advance(merchantId, "2026-02-01T00:00:00Z")
          const renewal = (yield* invoicesOf(merchantId, subscriptionId)).find((i) => i.invoice_type === "renewal")!
          expect(totals(renewal)).toEqual([3300n, 3000n, 300n])
          expect(
            minor((yield* Billing.Billing.use((b) => b.getTrade(merchantId, trade!.trade_id))).total_refunded_amount)
          ).toBe(1859n)
        })
    )

    it.effect(
      "refunds carry the tax in proportion: three refunds of 3.97 of 11.91 (1.90 tax) carry 0.63, 0.64 and 0.63 — exactly the whole 1.90",
      () =>
        Effect.gen(function* () {
          const _subs = yield* Subscriptions.Subscriptions
          const { merchantId, productId } = yield* shop
          yield* rate(merchantId, { name: "VAT", percentage: "19", country: "DE" })
          const priceId = yield* monthly(merchantId, productId, "10.01")
          const { trade, subscriptionId } = yield* subscribeTo(merchantId, priceId, { billing_address: address("DE") })
          expect([minor(trade!.amount), minor(trade!.tax_amount)]).toEqual([1191n, 190n])
          for (let i = 0; i < 3; i++)
            yield* (yield* Refunds.Refunds).refund(merchantId, Refunds.refundOf(trade!.trade_id, { amount: "3.97" }))
          const refunds = (yield* invoicesOf(merchantId, subscriptionId)).filter((i) => i.invoice_type === "refund")
          // 1.90 × 3.97 / 11.91 = 0.6333…: 0.63; then 1.27 − 0.63 = 0.64; then 1.90 − 1.27 = 0.63
          expect(refunds.map((i) => [minor(i.amount), minor(i.tax_amount)])).toEqual([
            [397n, 63n],
            [397n, 64n],
            [397n, 63n]
          ])
          expect(refunds.reduce((a, i) => a + minor(i.tax_amount), 0n)).toBe(190n)
        })
    )

    it.effect(
      "renewals billed together are each taxed at their own customer's address: 15.97 inclusive in Germany, 7.25 in California, none elsewhere",
      () =>
        Effect.gen(function* () {
          const { merchantId, productId } = yield* shop
          yield* rate(merchantId, { name: "VAT", percentage: "19", country: "DE", inclusive: true })
          yield* rate(merchantId, { name: "CA", percentage: "7.25", country: "US", region: "CA" })
          const priceId = yield* monthly(merchantId, productId, "100.00")
          const subs: Array<string> = []
          for (const where of [address("DE"), address("US", "CA"), undefined, address("DE")])
            subs.push(
              (yield* subscribeTo(merchantId, priceId, where === undefined ? {} : { billing_address: where }))
                .subscriptionId
            )
          yield* advance(merchantId, "2026-02-01T00:00:00Z")
          const renewals = yield* Effect.forEach(subs, (s) =>
            Effect.map(invoicesOf(merchantId, s), (l) => l.find((i) => i.cycle_index === 1)!)
          )
          // 100.00 × 19 / 119 = 15.966…: 15.97
          expect(renewals.map((i) => [minor(i.amount), minor(i.tax_amount)])).toEqual([
            [10000n, 1597n],
            [10725n, 725n],
            [10000n, 0n],
            [10000n, 1597n]
          ])
        })
    )
  })
