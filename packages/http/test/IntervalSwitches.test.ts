/**
 * Issue 33 (3): interval switches over REST — monthly → yearly and yearly → monthly through a
 * quote: the unused time credited to the balance, a new period from the change (new anchor), the
 * new period's invoice charged at once with the credit applied, exactly as quoted.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"
import { changeHelpers, refusal } from "./fixtures/changes.js"

for (const [name, storage] of backends()) {
  describe(`interval switches (${name})`, { timeout: 180_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const { ok, fresh, advance, price, subscribe, invoicesOf, subOf, upcoming, preview, commit } = changeHelpers(api)
    const setup = async (start: "monthly" | "yearly", credit: "refund" | "credit_balance" = "refund") => {
      const k = await fresh(credit)
      const monthly = await api.priceOf(k, {}, { product: "Team", price: "Team monthly" })
      const yearly = await price(k, monthly.productId, "300.00", "Team yearly", "year")
      const sub = await subscribe(k, start === "monthly" ? monthly.priceId : yearly)
      return { k, monthly: monthly.priceId, yearly, productId: monthly.productId, sub: sub.id }
    }
    const period = (s: any) => [s.billing_cycle_unit, s.current_period_start, s.current_period_end]

    it("month → year: 15.48 of January credited, the year from Jan 16 charged now at 284.52, as quoted", async () => {
      const { k, yearly, sub } = await setup("monthly")
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const body = { price_id: yearly }
      const quote = ok(await preview(k, sub, body))
      expect(quote).toMatchObject({
        outcome: "interval_switch",
        credit: "15.48",
        charge: "300.00",
        net: "284.52",
        tax: "0.00",
        total: "284.52",
        effective_at: "2026-01-16T00:00:00Z",
        billed_at: "2026-01-16T00:00:00Z"
      })
      expect(quote.lines.map((l: any) => l.amount)).toEqual(["-15.48", "300.00"])
      ok(await commit(k, sub, { ...body, quote_id: quote.quote_id }))
      const invoices = await invoicesOf(k, sub)
      expect(invoices.map((i: any) => [i.invoice_type, i.cycle_index, i.amount])).toEqual([
        ["initial", 0, "30.00"],
        ["renewal", 1, quote.total]
      ])
      const s = await subOf(k, sub)
      expect([s.price_id, s.credit_balance, s.cycle_index, s.status]).toEqual([yearly, "0.00", 1, "active"])
      expect(period(s)).toEqual(["year", "2026-01-16T00:00:00Z", "2027-01-16T00:00:00Z"])
      // the charge was made
      const trades = ok(await api.call("GET", "/api/v1/trades?limit=100", k)).list
      expect(
        trades.some((t: any) => t.order_type === "renewal" && t.amount === "284.52" && t.trade_status === "succeeded")
      ).toBe(true)
      // the next invoice is a year later, the yearly price in full; nothing is billed on Feb 1
      const next = await upcoming(k, sub)
      expect([next.invoice_date, next.amount]).toEqual(["2027-01-16T00:00:00Z", "300.00"])
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      expect(await invoicesOf(k, sub)).toHaveLength(2)
      // the same quote again is stale
      expect((await commit(k, sub, { ...body, quote_id: quote.quote_id })).status).toBe(409)
    })

    it("year → month under credit_balance: 226.03 of the year credited, April paid from it, the rest stays as credit", async () => {
      const { k, monthly, sub } = await setup("yearly", "credit_balance")
      // Apr 1 → Jan 1 2027: 275 of 365 days unused — 300.00 × 275/365 = 226.03
      ok(await advance(k, "2026-04-01T00:00:00Z"))
      const body = { price_id: monthly, proration: "always_invoice" }
      const quote = ok(await preview(k, sub, body))
      expect([quote.outcome, quote.credit, quote.charge, quote.total]).toEqual([
        "interval_switch",
        "226.03",
        "30.00",
        "0.00"
      ])
      ok(await commit(k, sub, { ...body, quote_id: quote.quote_id }))
      let s = await subOf(k, sub)
      expect(period(s)).toEqual(["month", "2026-04-01T00:00:00Z", "2026-05-01T00:00:00Z"])
      expect(s.credit_balance).toBe("196.03")
      // the switch's invoice states the credit it applied: 30.00 − 30.00 = 0.00
      expect(
        (await invoicesOf(k, sub)).map((i: any) => [i.invoice_type, i.subtotal, i.credit_applied, i.amount])
      ).toEqual([
        ["initial", "300.00", "0.00", "300.00"],
        ["renewal", "30.00", "30.00", "0.00"]
      ])
      ok(await advance(k, "2026-05-01T00:00:00Z"))
      s = await subOf(k, sub)
      expect([s.credit_balance, s.current_period_end]).toEqual(["166.03", "2026-06-01T00:00:00Z"])
    })

    it("year → month under proration_credit refund: the credit April's invoice does not take is refunded to the card, as quoted; under credit_balance it stays", async () => {
      for (const mode of ["refund", "credit_balance"] as const) {
        const k = await fresh(mode)
        const monthly = await api.priceOf(k, {}, { product: "Team", price: "Team monthly" })
        const yearly = await price(k, monthly.productId, "300.00", "Team yearly", "year")
        const { id: sub, tradeId } = await subscribe(k, yearly)
        ok(await advance(k, "2026-04-01T00:00:00Z"))
        const body = { price_id: monthly.priceId }
        const quote = ok(await preview(k, sub, body))
        // 226.03 credited; April's 30.00 paid from it; 196.03 refunded (total −196.03) or kept (total 0.00)
        expect([quote.outcome, quote.credit, quote.charge, quote.net, quote.total]).toEqual([
          "interval_switch",
          "226.03",
          "30.00",
          "-196.03",
          mode === "refund" ? "-196.03" : "0.00"
        ])
        ok(await commit(k, sub, { ...body, quote_id: quote.quote_id }))
        const s = await subOf(k, sub)
        expect([mode, s.credit_balance]).toEqual([mode, mode === "refund" ? "0.00" : "196.03"])
        const trade = ok(await api.call("GET", `/api/v1/trade/${tradeId}`, k))
        expect([mode, (trade.trade ?? trade).total_refunded_amount]).toEqual([
          mode,
          mode === "refund" ? "196.03" : "0.00"
        ])
        // never more back than collected: 300.00 paid, 226.03 given back, 73.97 still refundable
        const refused = await api.call("POST", "/api/v1/refund", k, { trade_id: tradeId, amount: "73.98" })
        expect(refusal(refused)).toEqual([400, "InvalidParameter", "amount"])
        // April's invoice states the credit it applied
        const april = (await invoicesOf(k, sub)).find((i: any) => i.invoice_type === "renewal")
        expect([april.subtotal, april.credit_applied, april.amount]).toEqual(["30.00", "30.00", "0.00"])
      }
      // a balance the customer already had stays on the balance: a merchant switching policy between
      // preview and commit makes the quote stale
      const k = await fresh("credit_balance")
      const monthly = await api.priceOf(k, {}, { product: "Team", price: "Team monthly" })
      const yearly = await price(k, monthly.productId, "300.00", "Team yearly", "year")
      const { id: sub } = await subscribe(k, yearly)
      ok(await advance(k, "2026-04-01T00:00:00Z"))
      const quote = ok(await preview(k, sub, { price_id: monthly.priceId }))
      ok(await api.call("POST", "/api/v1/billing_settings", k, { proration_credit: "refund" }))
      expect((await commit(k, sub, { price_id: monthly.priceId, quote_id: quote.quote_id })).status).toBe(409)
    })

    it("proration none: nothing credited, the new period charged in full", async () => {
      const { k, yearly, sub } = await setup("monthly")
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const body = { price_id: yearly, proration: "none" }
      const quote = ok(await preview(k, sub, body))
      expect([quote.credit, quote.total]).toEqual(["0.00", "300.00"])
      ok(await commit(k, sub, { ...body, quote_id: quote.quote_id }))
      expect((await invoicesOf(k, sub)).map((i: any) => i.amount)).toEqual(["30.00", "300.00"])
    })

    it("in a trial: nothing credited, the interval switches now and the trial's end bills the first yearly period", async () => {
      const k = await fresh()
      const trialing = await api.priceOf(
        k,
        { has_trial: true, trial_period: { trial_period_unit: "day", trial_period_count: 7 } },
        { product: "Team", price: "Team monthly" }
      )
      const yearly = await price(k, trialing.productId, "300.00", "Team yearly", "year")
      const { id: sub } = await subscribe(k, trialing.priceId)
      ok(await advance(k, "2026-01-03T00:00:00Z"))
      const quote = ok(await preview(k, sub, { price_id: yearly }))
      expect([quote.outcome, quote.credit, quote.charge, quote.total]).toEqual(["none", "0.00", "0.00", "0.00"])
      ok(await commit(k, sub, { price_id: yearly, quote_id: quote.quote_id }))
      const s = await subOf(k, sub)
      expect([s.status, s.price_id, s.billing_cycle_unit]).toEqual(["trial", yearly, "year"])
      ok(await advance(k, "2026-01-08T00:00:00Z"))
      const first = (await invoicesOf(k, sub)).find((i: any) => i.invoice_type === "renewal")
      expect([first.cycle_index, first.amount]).toEqual([1, "300.00"])
      expect(period(await subOf(k, sub))).toEqual(["year", "2026-01-08T00:00:00Z", "2027-01-08T00:00:00Z"])
    })

    it("a repeating discount counts cycles: 10 % for 3 cycles covers the switched yearly cycles 1 and 2, not 3", async () => {
      const k = await fresh()
      const monthly = await api.priceOf(k, {}, { product: "Team", price: "Team monthly" })
      const yearly = await price(k, monthly.productId, "300.00", "Team yearly", "year")
      ok(
        await api.call("POST", "/api/v1/discounts", k, {
          name: "Ten",
          code: "TEN3",
          discount_type: "percentage",
          percent_off: 10,
          duration: "repeating",
          duration_cycles: 3
        })
      )
      const s = ok(
        await api.call("POST", "/api/v1/session", k, {
          payer_id: "p-ten",
          line_items: [{ price_id: monthly.priceId }],
          discount_code: "TEN3"
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
      const sub = ok(await api.call("GET", `/api/v1/session/${s.session_id}`, k)).session.subscription_id as string
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      // paid 27.00: credit 27.00 × 16/31 = 13.94; the yearly cycle 1 at 270.00 (10 % off)
      const q = ok(await preview(k, sub, { price_id: yearly }))
      expect([q.credit, q.charge, q.total]).toEqual(["13.94", "270.00", "256.06"])
      ok(await commit(k, sub, { price_id: yearly, quote_id: q.quote_id }))
      ok(await advance(k, "2027-01-16T00:00:00Z"))
      ok(await advance(k, "2028-01-16T00:00:00Z"))
      expect((await invoicesOf(k, sub)).map((i: any) => [i.cycle_index, i.amount])).toEqual([
        [0, "27.00"],
        [1, "256.06"],
        [2, "270.00"],
        [3, "300.00"]
      ])
    })

    it("refused: at the period's end (400 price_id), another currency (400 price_id)", async () => {
      const { k, yearly, productId, sub } = await setup("monthly")
      const eur = await price(k, productId, "300.00", "Team yearly EUR", "year", "EUR")
      for (const body of [{ price_id: yearly, effective_type: "end_of_period" }, { price_id: eur }]) {
        expect(refusal(await preview(k, sub, body))).toEqual([400, "InvalidParameter", "price_id"])
        expect(refusal(await commit(k, sub, body))).toEqual([400, "InvalidParameter", "price_id"])
      }
      expect((await subOf(k, sub)).billing_cycle_unit).toBe("month")
    })
  })
}
