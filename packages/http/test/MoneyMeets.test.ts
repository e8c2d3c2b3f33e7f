/**
 * Issue 29, money where features meet: a discount's product scope through price changes, durable
 * redemptions counted by every limit, give-back from the paid invoices' own lines, nothing given
 * back beyond what was collected, and `taxable_amount` as the net on every line.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Merchants } from "@recur/core"
import type { TestClient } from "@recur/http"
import { backends, serve } from "./client.js"

const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; data?: { param?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}
const cents = (s: string) => BigInt(s.replace(".", ""))

for (const [name, storage] of backends()) {
  describe(`money where features meet (${name})`, { timeout: 180_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const data = (r: TestClient.Answer) => (r.body as any).data
    const fresh = async (proration_credit: "refund" | "credit_balance" = "refund") =>
      (
        await api.runtime.runPromise(
          Merchants.Merchants.use((m) =>
            m.create({
              name: "Acme",
              currency: "USD",
              frozen_time: Date.parse("2026-01-01T00:00:00Z"),
              proration_credit
            })
          )
        )
      ).api_key
    const ok = (r: TestClient.Answer) => {
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      return data(r)
    }
    const advance = (k: string, to: string) =>
      api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: to })
    const subscribe = async (k: string, priceId: string, extra: Record<string, unknown> = {}) => {
      const s = ok(
        await api.call("POST", "/api/v1/session", k, {
          payer_id: `p-${Math.random()}`,
          line_items: [{ price_id: priceId }],
          ...extra
        })
      )
      ok(
        await api.call(
          "POST",
          `/checkout/${s.session_id}/pay`,
          null,
          { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
          { accept: "application/json" }
        )
      )
      const session = ok(await api.call("GET", `/api/v1/session/${s.session_id}`, k)).session
      return {
        subscriptionId: session.subscription_id as string,
        customerId: session.customer_id as string,
        tradeId: session.trade_id as string
      }
    }
    const invoicesOf = async (k: string, subscriptionId: string) =>
      ok(await api.call("GET", "/api/v1/invoices?limit=100", k))
        .list.filter((i: any) => i.subscription_id === subscriptionId)
        .sort((a: any, b: any) => a.cycle_index - b.cycle_index || a.created_at.localeCompare(b.created_at))
    const subOf = async (k: string, id: string) =>
      ok(await api.call("GET", `/api/v1/subscription/${id}`, k)).subscription
    const tradesOf = async (k: string) => ok(await api.call("GET", "/api/v1/trades?limit=100", k)).list
    const discount = async (k: string, body: Record<string, unknown>) =>
      ok(await api.call("POST", "/api/v1/discounts", k, { name: "D", discount_type: "percentage", ...body })).discount
    const price = async (k: string, productId: string, amount: string, label = "Plan") =>
      ok(
        await api.call("POST", "/api/v1/prices", k, {
          name: label,
          product_id: productId,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: amount }
        })
      ).price_id as string

    describe("item 1: a product-limited discount does not follow a switch to another product", () => {
      /** Product A at 30.00 (and 60.00), product B at 60.00; 50 % forever limited to A, redeemed on A. */
      const setup = async () => {
        const k = await fresh()
        const a = await api.priceOf(k, {}, { product: "A", price: "A monthly" })
        const a60 = await price(k, a.productId, "60.00", "A big")
        const b = await api.priceOf(
          k,
          { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } },
          { product: "B", price: "B monthly" }
        )
        const d = await discount(k, {
          code: "HALFA",
          percent_off: 50,
          duration: "forever",
          product_ids: [a.productId]
        })
        const sub = await subscribe(k, a.priceId, { discount_code: "HALFA" })
        // outside its scope at checkout, as before
        expect(
          refusal(
            await api.call("POST", "/api/v1/session", k, {
              payer_id: "x",
              line_items: [{ price_id: b.priceId }],
              discount_code: "HALFA"
            })
          )
        ).toEqual([400, "InvalidParameter", "discount_code"])
        return { k, a, a60, b, d, sub }
      }

      it("immediate: the quote credits what was paid (15.00) and charges B undiscounted; renewals of B are full", async () => {
        const { k, b, d, sub } = await setup()
        await advance(k, "2026-01-16T00:00:00Z")
        const quote = ok(
          await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}/preview-change`, k, {
            price_id: b.priceId
          })
        )
        // 16 of 31 days left: credit 15.00 × 16/31 = 7.74 (the discounted price paid), charge 60.00 × 16/31 = 30.97
        expect([quote.credit, quote.charge, quote.net, quote.outcome]).toEqual(["7.74", "30.97", "23.23", "upgrade"])
        expect(quote.discounts_ending).toEqual([{ discount_id: d.discount_id, discount_code: "HALFA" }])
        ok(
          await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}`, k, {
            price_id: b.priceId,
            quote_id: quote.quote_id
          })
        )
        expect((await subOf(k, sub.subscriptionId)).price_id).toBe(b.priceId)
        await advance(k, "2026-03-01T00:00:00Z")
        const amounts = (await invoicesOf(k, sub.subscriptionId)).map((i: any) => [i.invoice_type, i.amount])
        expect(amounts).toEqual([
          ["initial", "15.00"],
          ["upgrade", "23.23"],
          ["renewal", "60.00"],
          ["renewal", "60.00"]
        ])
        // it left the subscription, and cannot be put back on B
        const back = await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}/discount`, k, {
          discount_id: d.discount_id
        })
        expect(refusal(back)).toEqual([400, "InvalidParameter", "discount_id"])
        expect((back.body as any).message).toContain("does not apply to this product")
      })

      it("a switch within the discount's products keeps it", async () => {
        const { k, a60, sub } = await setup()
        await advance(k, "2026-01-16T00:00:00Z")
        const quote = ok(
          await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}/preview-change`, k, { price_id: a60 })
        )
        expect([quote.credit, quote.charge, quote.discounts_ending]).toEqual(["7.74", "15.48", []])
        ok(await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}`, k, { price_id: a60 }))
        await advance(k, "2026-02-01T00:00:00Z")
        expect((await invoicesOf(k, sub.subscriptionId)).map((i: any) => i.amount)).toEqual(["15.00", "7.74", "30.00"])
      })

      it("at the end of the period: the quote names the discount ending, and B renews at its full price", async () => {
        const { k, b, d, sub } = await setup()
        const body = { price_id: b.priceId, effective_type: "end_of_period" }
        const quote = ok(await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}/preview-change`, k, body))
        expect([quote.outcome, quote.discounts_ending]).toEqual([
          "scheduled",
          [{ discount_id: d.discount_id, discount_code: "HALFA" }]
        ])
        ok(await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}`, k, body))
        await advance(k, "2026-02-01T00:00:00Z")
        expect((await invoicesOf(k, sub.subscriptionId)).map((i: any) => i.amount)).toEqual(["15.00", "60.00"])
        expect((await subOf(k, sub.subscriptionId)).price_id).toBe(b.priceId)
      })
    })

    it("item 1 in the portal: the switch page says the discount ends, and the switch bills B in full", async () => {
      const k = await fresh()
      const a = await api.priceOf(k, {}, { product: "A", price: "A monthly" })
      const b = await api.priceOf(
        k,
        { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } },
        { product: "B", price: "B monthly" }
      )
      await discount(k, { code: "HALFA", percent_off: 50, duration: "forever", product_ids: [a.productId] })
      const sub = await subscribe(k, a.priceId, { discount_code: "HALFA" })
      ok(await api.call("POST", "/api/v1/portal_settings", k, { switch_prices: [a.priceId, b.priceId] }))
      await advance(k, "2026-01-16T00:00:00Z")
      const link = ok(await api.call("POST", "/api/v1/customer-portal/auth", k, { customer_id: sub.customerId }))
      const base = new URL(link.portal_session.url).pathname
      const page = await api.handler(
        new Request(`http://localhost${base}/subscription/${sub.subscriptionId}/switch?price_id=${b.priceId}`)
      )
      const html = await page.text()
      expect(page.status, html).toBe(200)
      expect(html).toContain("Discount HALFA does not apply to this plan: it ends with this switch")
      // credit 7.74 (what was paid), charge 30.97 (B without the discount)
      expect(/id="due-now">\$([0-9.]+)</.exec(html)?.[1]).toBe("23.23")
      const quoteId = /name="quote_id" value="([^"]+)"/.exec(html)?.[1]
      const done = await api.handler(
        new Request(`http://localhost${base}/subscription/${sub.subscriptionId}/switch`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ price_id: b.priceId, quote_id: quoteId! }).toString()
        })
      )
      expect(done.status).toBe(303)
      await advance(k, "2026-02-01T00:00:00Z")
      expect((await invoicesOf(k, sub.subscriptionId)).map((i: any) => i.amount)).toEqual(["15.00", "23.23", "60.00"])
    })

    describe("item 2: redemptions are durable records every limit counts", () => {
      it("per customer 1: apply, bill, remove, apply again is refused; times_redeemed stays 1", async () => {
        const k = await fresh()
        const { priceId } = await api.priceOf(k)
        const d = await discount(k, {
          code: "ONCEPER",
          percent_off: 10,
          duration: "forever",
          max_redemptions_per_customer: 1
        })
        const sub = await subscribe(k, priceId)
        const path = `/api/v1/subscription/${sub.subscriptionId}/discount`
        ok(await api.call("POST", path, k, { discount_code: "ONCEPER" }))
        await advance(k, "2026-02-01T00:00:00Z")
        ok(await api.call("POST", `${path}/remove`, k, { discount_id: d.discount_id }))
        const again = await api.call("POST", path, k, { discount_code: "ONCEPER" })
        expect(refusal(again)).toEqual([400, "InvalidParameter", "discount_code"])
        expect((again.body as any).message).toContain("already redeemed")
        const after = ok(await api.call("GET", `/api/v1/discount/${d.discount_id}`, k)).discount
        expect(after.times_redeemed).toBe(1)
        expect((await invoicesOf(k, sub.subscriptionId)).map((i: any) => i.amount)).toEqual(["30.00", "27.00"])
      })

      it("max_redemptions 1: a removed redemption still counts for another customer", async () => {
        const k = await fresh()
        const { priceId } = await api.priceOf(k)
        const d = await discount(k, { code: "ONLYONE", percent_off: 10, max_redemptions: 1 })
        const first = await subscribe(k, priceId)
        const second = await subscribe(k, priceId)
        ok(
          await api.call("POST", `/api/v1/subscription/${first.subscriptionId}/discount`, k, {
            discount_code: "ONLYONE"
          })
        )
        ok(
          await api.call("POST", `/api/v1/subscription/${first.subscriptionId}/discount/remove`, k, {
            discount_id: d.discount_id
          })
        )
        const other = await api.call("POST", `/api/v1/subscription/${second.subscriptionId}/discount`, k, {
          discount_code: "ONLYONE"
        })
        expect(refusal(other)).toEqual([400, "InvalidParameter", "discount_code"])
        expect((other.body as any).message).toContain("fully redeemed")
        // a checkout with it is refused as well
        expect(
          refusal(
            await api.call("POST", "/api/v1/session", k, {
              payer_id: "late",
              line_items: [{ price_id: priceId }],
              discount_code: "ONLYONE"
            })
          )
        ).toEqual([400, "InvalidParameter", "discount_code"])
      })

      it("a checkout redemption is counted for its customer: the same customer cannot apply it to another subscription", async () => {
        const k = await fresh()
        const { priceId } = await api.priceOf(k)
        await discount(k, { code: "WELCOME", percent_off: 10, max_redemptions_per_customer: 1 })
        const first = await subscribe(k, priceId, { discount_code: "WELCOME" })
        const second = await subscribe(k, priceId, { customer_id: first.customerId })
        const r = await api.call("POST", `/api/v1/subscription/${second.subscriptionId}/discount`, k, {
          discount_code: "WELCOME"
        })
        expect(refusal(r)).toEqual([400, "InvalidParameter", "discount_code"])
      })
    })

    describe("item 3: what a change gives back comes from the paid invoices, not today's rates", () => {
      it("paid 60.00 without tax; a 20 % rate added later; a downgrade gives back 15.49 with tax 0.00", async () => {
        const k = await fresh()
        const big = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } })
        const small = await api.priceOf(k)
        const sub = await subscribe(k, big.priceId, { billing_address: { country_code: "FR" } })
        ok(await api.call("POST", "/api/v1/tax_rates", k, { name: "TVA", percentage: "20", country: "FR" }))
        await advance(k, "2026-01-16T00:00:00Z")
        const quote = ok(
          await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}/preview-change`, k, {
            price_id: small.priceId
          })
        )
        // credit 60.00 × 16/31 = 30.97, charge 30.00 × 16/31 = 15.48: 15.49 back, no tax was paid
        expect([quote.net, quote.tax, quote.total, quote.outcome]).toEqual(["-15.49", "0.00", "-15.49", "refund"])
        ok(await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}`, k, { price_id: small.priceId }))
        const refunds = (await invoicesOf(k, sub.subscriptionId)).filter((i: any) => i.invoice_type === "refund")
        expect(refunds.map((i: any) => [i.amount, i.tax_amount])).toEqual([["15.49", "0.00"]])
        const trade = (await tradesOf(k)).find((t: any) => t.trade_id === sub.tradeId)
        expect(trade.total_refunded_amount).toBe("15.49")
      })

      it("paid 72.00 with 20 % tax; the rate is archived; a downgrade still gives back the tax paid, in proportion", async () => {
        const k = await fresh()
        const rate = ok(
          await api.call("POST", "/api/v1/tax_rates", k, { name: "TVA", percentage: "20", country: "FR" })
        )
        const big = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } })
        const small = await api.priceOf(k)
        const sub = await subscribe(k, big.priceId, { billing_address: { country_code: "FR" } })
        ok(await api.call("POST", `/api/v1/tax_rate/${rate.tax_rate.tax_rate_id}/archive`, k))
        await advance(k, "2026-01-16T00:00:00Z")
        const quote = ok(
          await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}/preview-change`, k, {
            price_id: small.priceId
          })
        )
        // 15.49 of net, × 72/60 = 18.588 → 18.59 back, of which tax 12.00 × 18.59/72 = 3.098 → 3.10
        expect([quote.net, quote.tax, quote.total]).toEqual(["-15.49", "-3.10", "-18.59"])
        ok(await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}`, k, { price_id: small.priceId }))
        const refunds = (await invoicesOf(k, sub.subscriptionId)).filter((i: any) => i.invoice_type === "refund")
        expect(refunds.map((i: any) => [i.amount, i.tax_amount])).toEqual([["18.59", "3.10"]])
      })
    })

    describe("item 3 in an upgrade: its credit gives back the tax the old plan's invoice collected", () => {
      it("30.00 paid without tax, a 20 % rate added: the upgrade's credit carries no tax; its charge is taxed", async () => {
        const k = await fresh()
        const big = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } })
        const small = await api.priceOf(k)
        const sub = await subscribe(k, small.priceId, { billing_address: { country_code: "FR" } })
        ok(await api.call("POST", "/api/v1/tax_rates", k, { name: "TVA", percentage: "20", country: "FR" }))
        await advance(k, "2026-01-16T00:00:00Z")
        const quote = ok(
          await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}/preview-change`, k, {
            price_id: big.priceId
          })
        )
        // credit 30.00 × 16/31 = 15.48 (no tax was paid on it); charge 60.00 × 16/31 = 30.97 + 6.19 tax
        expect([quote.credit, quote.charge, quote.tax, quote.total]).toEqual(["15.48", "30.97", "6.19", "21.68"])
        ok(
          await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}`, k, {
            price_id: big.priceId,
            quote_id: quote.quote_id
          })
        )
        const up = (await invoicesOf(k, sub.subscriptionId)).find((i: any) => i.invoice_type === "upgrade")
        expect([up.amount, up.tax_amount]).toEqual(["21.68", "6.19"])
      })

      it("36.00 paid with 20 % tax, the rate archived: the upgrade's credit gives the 3.10 tax back", async () => {
        const k = await fresh()
        const rate = ok(
          await api.call("POST", "/api/v1/tax_rates", k, { name: "TVA", percentage: "20", country: "FR" })
        )
        const big = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } })
        const small = await api.priceOf(k)
        const sub = await subscribe(k, small.priceId, { billing_address: { country_code: "FR" } })
        ok(await api.call("POST", `/api/v1/tax_rate/${rate.tax_rate.tax_rate_id}/archive`, k))
        await advance(k, "2026-01-16T00:00:00Z")
        const quote = ok(
          await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}/preview-change`, k, {
            price_id: big.priceId
          })
        )
        // the credit 15.48 gives back 15.48 × 36/30 = 18.58, of which 6.00 × 18.58/36 = 3.10 tax;
        // the charge 30.97 is untaxed now: 30.97 − 18.58 = 12.39
        expect([quote.credit, quote.charge, quote.tax, quote.total]).toEqual(["15.48", "30.97", "-3.10", "12.39"])
        ok(
          await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}`, k, {
            price_id: big.priceId,
            quote_id: quote.quote_id
          })
        )
        const up = (await invoicesOf(k, sub.subscriptionId)).find((i: any) => i.invoice_type === "upgrade")
        expect([up.amount, up.tax_amount]).toEqual(["12.39", "-3.10"])
        // refunded in full, the upgrade gives back its own tax (none: its charge was untaxed) ...
        ok(await api.call("POST", "/api/v1/refund", k, { trade_id: up.trade_id }))
        // ... and the first invoice only what its credit did not move: 36.00 − 18.58 = 17.42, with
        // the 6.00 − 3.10 = 2.90 of tax not given back yet
        ok(await api.call("POST", "/api/v1/refund", k, { trade_id: sub.tradeId }))
        const docs = await invoicesOf(k, sub.subscriptionId)
        const notes = docs.filter((i: any) => i.invoice_type === "refund")
        const rows = notes.map((i: any) => [i.original_invoice_id === up.invoice_id, i.amount, i.tax_amount])
        expect(rows.sort()).toEqual([
          [false, "17.42", "2.90"],
          [true, "12.39", "0.00"]
        ])
        // tax given back (3.10 by the upgrade's credit, 2.90 by the refunds) is the 6.00 collected
        const taxBack = notes.reduce((a: bigint, i: any) => a + cents(i.tax_amount), 0n) - cents(up.tax_amount)
        expect(taxBack).toBe(600n)
      })

      it("36.00 paid with 20 % tax, the rate archived, an upgrade to 35.00: the credit exceeds the charge and goes to the balance", async () => {
        const k = await fresh()
        const rate = ok(
          await api.call("POST", "/api/v1/tax_rates", k, { name: "TVA", percentage: "20", country: "FR" })
        )
        const big = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "35.00" } })
        const small = await api.priceOf(k)
        const sub = await subscribe(k, small.priceId, { billing_address: { country_code: "FR" } })
        ok(await api.call("POST", `/api/v1/tax_rate/${rate.tax_rate.tax_rate_id}/archive`, k))
        await advance(k, "2026-01-16T00:00:00Z")
        const quote = ok(
          await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}/preview-change`, k, {
            price_id: big.priceId
          })
        )
        // credit 15.48 gives back 18.58 (3.10 tax); the charge 35.00 × 16/31 = 18.06 is untaxed now
        expect([quote.net, quote.tax, quote.total, quote.outcome]).toEqual(["2.58", "-3.10", "-0.52", "credit_balance"])
        ok(
          await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}`, k, {
            price_id: big.priceId,
            quote_id: quote.quote_id
          })
        )
        const up = (await invoicesOf(k, sub.subscriptionId)).find((i: any) => i.invoice_type === "upgrade")
        expect([up.amount, up.tax_amount, up.paid_at !== null, up.trade_id]).toEqual(["0.00", "-3.10", true, null])
        // its page and PDF render the negative tax line
        for (const url of [up.hosted_invoice_url, up.invoice_pdf]) {
          const r = await api.handler(new Request(`http://localhost${new URL(url).pathname}`))
          expect([url, r.status]).toEqual([url, 200])
        }
        const page = await (
          await api.handler(new Request(`http://localhost${new URL(up.hosted_invoice_url).pathname}`))
        ).text()
        // and add up: 18.06 − 15.48 + 0.52 credited to the balance − 3.10 tax = 0.00
        expect([page.includes("-$3.10"), page.includes("Credited to your balance"), page.includes("$0.52")]).toEqual([
          true,
          true,
          true
        ])
        expect((await subOf(k, sub.subscriptionId)).credit_balance).toBe("0.52")
        // the first payment can give back only what neither the credit nor the balance took
        ok(await api.call("POST", "/api/v1/refund", k, { trade_id: sub.tradeId }))
        const note = (await invoicesOf(k, sub.subscriptionId)).find((i: any) => i.invoice_type === "refund")
        expect([note.amount, note.tax_amount]).toEqual(["17.42", "2.90"])
      })
    })

    describe("item 4: refunded + credited never exceed what was collected", () => {
      it("paid 60.00, refunded 60.00, downgraded the next day: nothing more comes back", async () => {
        for (const mode of ["refund", "credit_balance"] as const) {
          const k = await fresh(mode)
          const big = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } })
          const small = await api.priceOf(k)
          const sub = await subscribe(k, big.priceId)
          ok(await api.call("POST", "/api/v1/refund", k, { trade_id: sub.tradeId }))
          await advance(k, "2026-01-02T00:00:00Z")
          const quote = ok(
            await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}/preview-change`, k, {
              price_id: small.priceId
            })
          )
          expect([mode, quote.credit]).toEqual([mode, "0.00"])
          ok(await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}`, k, { price_id: small.priceId }))
          const s = await subOf(k, sub.subscriptionId)
          const trades = await tradesOf(k)
          const refunded = trades.reduce((a: bigint, t: any) => a + cents(t.total_refunded_amount), 0n)
          const collected = trades
            .filter((t: any) => t.trade_status === "succeeded")
            .reduce((a: bigint, t: any) => a + cents(t.amount), 0n)
          expect([mode, s.credit_balance]).toEqual([mode, "0.00"])
          expect(refunded + cents(s.credit_balance)).toBeLessThanOrEqual(collected)
        }
      })

      it("credited to the balance first, a refund of the trade can only take what was not given back", async () => {
        const k = await fresh("credit_balance")
        const big = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } })
        const small = await api.priceOf(k)
        const sub = await subscribe(k, big.priceId)
        await advance(k, "2026-01-16T00:00:00Z")
        ok(await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}`, k, { price_id: small.priceId }))
        expect((await subOf(k, sub.subscriptionId)).credit_balance).toBe("15.49")
        const all = await api.call("POST", "/api/v1/refund", k, { trade_id: sub.tradeId, amount: "60.00" })
        expect(refusal(all)).toEqual([400, "InvalidParameter", "amount"])
        expect((all.body as any).message).toContain("44.51")
        ok(await api.call("POST", "/api/v1/refund", k, { trade_id: sub.tradeId }))
        const trade = (await tradesOf(k)).find((t: any) => t.trade_id === sub.tradeId)
        expect(trade.total_refunded_amount).toBe("44.51")
      })
    })

    describe("a give-back over several paid invoices: preview = commit, tax back ≤ tax collected", () => {
      /** 30.00 paid untaxed; a 20 % rate added; an upgrade to 60.00 at mid-cycle, taxed and paid. */
      const upgraded = async (mode: "refund" | "credit_balance") => {
        const k = await fresh(mode)
        const big = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } })
        const small = await api.priceOf(k)
        const sub = await subscribe(k, small.priceId, { billing_address: { country_code: "FR" } })
        ok(await api.call("POST", "/api/v1/tax_rates", k, { name: "TVA", percentage: "20", country: "FR" }))
        await advance(k, "2026-01-16T00:00:00Z")
        ok(await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}`, k, { price_id: big.priceId }))
        const upgradeInvoice = (await invoicesOf(k, sub.subscriptionId)).find((i: any) => i.invoice_type === "upgrade")
        // its credit carried no tax (none was paid), its charge 30.97 the 20 %: 30.97 − 15.48 + 6.19
        expect([upgradeInvoice.amount, upgradeInvoice.tax_amount, upgradeInvoice.paid_at !== null]).toEqual([
          "21.68",
          "6.19",
          true
        ])
        await advance(k, "2026-01-24T00:00:00Z")
        return { k, big, small, sub, upgradeTrade: upgradeInvoice.trade_id as string }
      }
      const taxOf = (docs: ReadonlyArray<any>, refund: boolean) =>
        docs.filter((i) => (i.invoice_type === "refund") === refund).reduce((a, i) => a + cents(i.tax_amount), 0n)

      it("a downgrade refunded from the upgrade's and the cycle's payments: the credit notes state the quote's tax and total", async () => {
        const { k, small, sub } = await upgraded("refund")
        const quote = ok(
          await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}/preview-change`, k, {
            price_id: small.priceId
          })
        )
        expect(quote.outcome).toBe("refund")
        ok(
          await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}`, k, {
            price_id: small.priceId,
            quote_id: quote.quote_id
          })
        )
        const docs = await invoicesOf(k, sub.subscriptionId)
        const notes = docs.filter((i: any) => i.invoice_type === "refund")
        expect(notes.reduce((a: bigint, i: any) => a + cents(i.amount), 0n)).toBe(-cents(quote.total))
        expect(taxOf(docs, true)).toBe(-cents(quote.tax))
        expect(taxOf(docs, true)).toBeLessThanOrEqual(taxOf(docs, false))
      })

      it("the upgrade refunded in full, then a downgrade: tax given back never exceeds the tax collected", async () => {
        for (const mode of ["refund", "credit_balance"] as const) {
          const { k, small, sub, upgradeTrade } = await upgraded(mode)
          ok(await api.call("POST", "/api/v1/refund", k, { trade_id: upgradeTrade }))
          const quote = ok(
            await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}/preview-change`, k, {
              price_id: small.priceId
            })
          )
          const before = await invoicesOf(k, sub.subscriptionId)
          ok(
            await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}`, k, {
              price_id: small.priceId,
              quote_id: quote.quote_id
            })
          )
          const docs = await invoicesOf(k, sub.subscriptionId)
          // the change gives back what it quoted — refunded, or to the balance where the upgrade's
          // trade holds nothing more — and the tax given back in all never exceeds the tax collected
          const balance = cents((await subOf(k, sub.subscriptionId)).credit_balance)
          const refunded = (d: ReadonlyArray<any>) =>
            d.filter((i) => i.invoice_type === "refund").reduce((a: bigint, i) => a + cents(i.amount), 0n)
          expect([mode, refunded(docs) - refunded(before) + balance]).toEqual([mode, -cents(quote.total)])
          const back = taxOf(before, true) - cents(quote.tax)
          expect([mode, back <= taxOf(docs, false)]).toEqual([mode, true])
        }
      })
    })

    it("refunds of two trades of one subscription at once both succeed (the subscription's check is retried, not a 409)", async () => {
      const k = await fresh()
      const big = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } })
      const small = await api.priceOf(k)
      const sub = await subscribe(k, small.priceId)
      await advance(k, "2026-01-16T00:00:00Z")
      ok(await api.call("POST", `/api/v1/subscription/${sub.subscriptionId}`, k, { price_id: big.priceId }))
      const up = (await invoicesOf(k, sub.subscriptionId)).find((i: any) => i.invoice_type === "upgrade")
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all(
          [sub.tradeId, up.trade_id].map((trade_id) =>
            api.call("POST", "/api/v1/refund", k, { trade_id, amount: "1.00" })
          )
        )
        expect(answers.map((r) => r.status)).toEqual([200, 200])
      }
      const trades = await tradesOf(k)
      expect(
        [sub.tradeId, up.trade_id].map((id) => trades.find((t: any) => t.trade_id === id).total_refunded_amount)
      ).toEqual(["3.00", "3.00"])
    })

    describe("item 9: taxable_amount is the net on every line", () => {
      it("19 % inclusive: the invoice's line is taxable 100.00 of 119.00; a credit note of 29.75 is 25.00 + 4.75", async () => {
        const k = await fresh()
        ok(
          await api.call("POST", "/api/v1/tax_rates", k, {
            name: "VAT",
            percentage: "19",
            country: "DE",
            inclusive: true
          })
        )
        const { priceId } = await api.priceOf(k, {
          price_plan: { billing_cycle_unit: "month", base_price_val: "119.00" }
        })
        const sub = await subscribe(k, priceId, { billing_address: { country_code: "DE" } })
        ok(await api.call("POST", "/api/v1/refund", k, { trade_id: sub.tradeId, amount: "29.75" }))
        const docs = await invoicesOf(k, sub.subscriptionId)
        const invoice = docs.find((i: any) => i.invoice_type === "initial")
        const note = docs.find((i: any) => i.invoice_type === "refund")
        expect(invoice.tax_lines.map((t: any) => [t.inclusive, t.taxable_amount, t.amount])).toEqual([
          [true, "100.00", "19.00"]
        ])
        expect(note.invoice_type).toBe("refund")
        expect(note.tax_lines.map((t: any) => [t.taxable_amount, t.amount])).toEqual([["25.00", "4.75"]])
      })

      it("20 % exclusive: 45.00 after a discount is the net; its full credit note states 45.00 + 9.00", async () => {
        const k = await fresh()
        ok(await api.call("POST", "/api/v1/tax_rates", k, { name: "VAT", percentage: "20", country: "GB" }))
        await discount(k, { code: "TEN", percent_off: 10 })
        const { priceId } = await api.priceOf(k, {
          price_plan: { billing_cycle_unit: "month", base_price_val: "50.00" }
        })
        const sub = await subscribe(k, priceId, { billing_address: { country_code: "GB" }, discount_code: "TEN" })
        ok(await api.call("POST", "/api/v1/refund", k, { trade_id: sub.tradeId }))
        const docs = await invoicesOf(k, sub.subscriptionId)
        const invoice = docs.find((i: any) => i.invoice_type === "initial")
        const note = docs.find((i: any) => i.invoice_type === "refund")
        expect(invoice.tax_lines.map((t: any) => [t.taxable_amount, t.amount])).toEqual([["45.00", "9.00"]])
        expect([note.amount, ...note.tax_lines.map((t: any) => [t.taxable_amount, t.amount])]).toEqual([
          "54.00",
          ["45.00", "9.00"]
        ])
      })
    })
  })
}
