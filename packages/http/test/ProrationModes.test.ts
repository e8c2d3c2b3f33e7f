/**
 * Issue 33 (2): the proration mode chosen per change over REST — `create_prorations` (pending
 * lines billed once by the next cycle's invoice), `always_invoice` (the alias of `immediate`:
 * charged or credited now) and `none` — each previewed by a quote and committed exactly as quoted.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"
import { changeHelpers, refusal } from "./fixtures/changes.js"

for (const [name, storage] of backends()) {
  describe(`proration modes (${name})`, { timeout: 180_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const { data, ok, fresh, advance, price, subscribe, invoicesOf, subOf, upcoming, preview, commit } =
      changeHelpers(api)
    const lines = (doc: any) => doc.lines.map((l: any) => [l.kind, l.amount])
    /** A 30.00, a 60.00 and a 10.00 monthly plan of one product, and a subscription on `start`. */
    const setup = async (start: "p30" | "p60", credit: "refund" | "credit_balance" = "refund") => {
      const k = await fresh(credit)
      const p30 = await api.priceOf(k, {}, { product: "Team", price: "Team 30" })
      const p60 = await price(k, p30.productId, "60.00", "Team 60")
      const p10 = await price(k, p30.productId, "10.00", "Team 10")
      const sub = await subscribe(k, start === "p30" ? p30.priceId : p60)
      return { k, p30: p30.priceId, p60, p10, sub: sub.id, tradeId: sub.tradeId }
    }

    it("create_prorations: nothing now, the quoted lines on the upcoming invoice, billed once by the renewal", async () => {
      const { k, p60, sub } = await setup("p30")
      // Jan 16 00:00: 16 of 31 days left — credit 30.00 × 16/31 = 15.48, charge 60.00 × 16/31 = 30.97
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const body = { price_id: p60, proration: "create_prorations" }
      const quote = ok(await preview(k, sub, body))
      expect(quote).toMatchObject({
        proration: "create_prorations",
        outcome: "pending_prorations",
        credit: "15.48",
        charge: "30.97",
        net: "15.49",
        tax: "0.00",
        total: "0.00",
        billed_at: "2026-02-01T00:00:00Z",
        effective_at: "2026-01-16T00:00:00Z"
      })
      expect(quote.lines.map((l: any) => l.amount)).toEqual(["-15.48", "30.97"])
      ok(await commit(k, sub, { ...body, quote_id: quote.quote_id }))
      // the same quote again: the subscription moved on, stale
      expect(refusal(await commit(k, sub, { ...body, quote_id: quote.quote_id }))[0]).toBe(409)
      // nothing was invoiced or charged now
      expect((await invoicesOf(k, sub)).map((i: any) => [i.invoice_type, i.amount])).toEqual([["initial", "30.00"]])
      expect((await subOf(k, sub)).price_id).toBe(p60)
      // the upcoming invoice shows exactly the quoted lines, after the new plan's full cycle
      const next = await upcoming(k, sub)
      expect(lines(next)).toEqual([
        ["subscription", "60.00"],
        ["proration_credit", "-15.48"],
        ["proration_charge", "30.97"]
      ])
      expect(next.amount).toBe("75.49")
      // each line says the time it is for: the plan the new period, the proration lines the rest of January
      const spans = (i: any) => i.lines.map((l: any) => [l.kind, l.period_start, l.period_end])
      const expectedSpans = [
        ["subscription", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"],
        ["proration_credit", "2026-01-16T00:00:00Z", "2026-02-01T00:00:00Z"],
        ["proration_charge", "2026-01-16T00:00:00Z", "2026-02-01T00:00:00Z"]
      ]
      expect(spans(next)).toEqual(expectedSpans)
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      const renewal = (await invoicesOf(k, sub)).find((i: any) => i.invoice_type === "renewal")
      expect(lines(renewal)).toEqual(lines(next))
      expect(spans(renewal)).toEqual(expectedSpans)
      expect(renewal.amount).toBe("75.49")
      // removed once billed: the next upcoming invoice is the plan alone
      expect(lines(await upcoming(k, sub))).toEqual([["subscription", "60.00"]])
      ok(await advance(k, "2026-03-01T00:00:00Z"))
      const renewals = (await invoicesOf(k, sub)).filter((i: any) => i.invoice_type === "renewal")
      expect(renewals.map((i: any) => i.amount)).toEqual(["75.49", "60.00"])
    })

    it("create_prorations and an end-of-period cancel never meet: the charges the next invoice would bill are not given away", async () => {
      const { k, p60, p10, sub } = await setup("p30")
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      ok(await commit(k, sub, { price_id: p60, proration: "create_prorations" }))
      // pending charges (net +15.49): an end-of-period cancel would end the subscription without billing them
      const refused = await api.call("POST", `/api/v1/subscription/${sub}/cancel`, k, { cancel_type: "end_of_period" })
      expect([refused.status, (refused.body as any).code]).toEqual([409, "state_conflict"])
      expect((await subOf(k, sub)).cancel_at_period_end).toBe(false)
      // once the renewal billed them, it may cancel at the period's end
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      ok(await api.call("POST", `/api/v1/subscription/${sub}/cancel`, k, { cancel_type: "end_of_period" }))
      // and while it cancels at the period's end, create_prorations is refused (nothing would bill the lines)
      expect(refusal(await preview(k, sub, { price_id: p10, proration: "create_prorations" }))).toEqual([
        400,
        "InvalidParameter",
        "proration"
      ])
      // nor does it switch interval: the new period would run past its cancel
      const { priceId: yearly } = await api.priceOf(
        k,
        { price_plan: { billing_cycle_unit: "year", base_price_val: "600.00" } },
        { product: "Team", price: "Team yearly" }
      )
      expect(refusal(await preview(k, sub, { price_id: yearly }))).toEqual([400, "InvalidParameter", "price_id"])
    })

    it("create_prorations: a credit larger than the next invoice carries the rest to the balance, never more than was paid", async () => {
      const { k, p10, sub, tradeId } = await setup("p60")
      // Jan 2: 30 of 31 days left — credit 60.00 × 30/31 = 58.06, charge 10.00 × 30/31 = 9.68
      ok(await advance(k, "2026-01-02T00:00:00Z"))
      const body = { price_id: p10, proration: "create_prorations" }
      const quote = ok(await preview(k, sub, body))
      expect([quote.credit, quote.charge, quote.net, quote.total]).toEqual(["58.06", "9.68", "-48.38", "0.00"])
      ok(await commit(k, sub, { ...body, quote_id: quote.quote_id }))
      // the credit was taken from the cycle's payment: only 1.94 of the 60.00 can still be refunded
      const refused = await api.call("POST", "/api/v1/refund", k, { trade_id: tradeId, amount: "60.00" })
      expect(refusal(refused)).toEqual([400, "InvalidParameter", "amount"])
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      const renewal = (await invoicesOf(k, sub)).find((i: any) => i.invoice_type === "renewal")
      expect(lines(renewal)).toEqual([
        ["subscription", "10.00"],
        ["proration_credit", "-58.06"],
        ["proration_charge", "9.68"],
        // the document states the rest it credits to the balance, and adds up to 0.00
        ["refund", "38.38"]
      ])
      expect([renewal.subtotal, renewal.amount]).toEqual(["0.00", "0.00"])
      // 10.00 − 58.06 + 9.68 = −38.38: the rest is the customer's credit
      expect((await subOf(k, sub)).credit_balance).toBe("38.38")
      // and pays March's 10.00
      ok(await advance(k, "2026-03-01T00:00:00Z"))
      const march = (await invoicesOf(k, sub)).filter((i: any) => i.invoice_type === "renewal")[1]
      expect(march.amount).toBe("0.00")
      expect((await subOf(k, sub)).credit_balance).toBe("28.38")
    })

    it("create_prorations twice in a cycle: the second credits what the first's pending charge bought", async () => {
      const { k, p60, p10, sub } = await setup("p30")
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      for (const price_id of [p60, p10]) {
        const body = { price_id, proration: "create_prorations" }
        const q = ok(await preview(k, sub, body))
        ok(await commit(k, sub, { ...body, quote_id: q.quote_id }))
      }
      // −15.48 + 30.97, then 60.00's unused −30.97 (cancelling the pending charge) + 10.00 × 16/31 = 5.16
      const next = await upcoming(k, sub)
      expect(lines(next)).toEqual([
        ["subscription", "10.00"],
        ["proration_credit", "-15.48"],
        ["proration_charge", "30.97"],
        ["proration_credit", "-30.97"],
        ["proration_charge", "5.16"],
        ["refund", "0.32"]
      ])
      expect(next.amount).toBe("0.00")
      // 10.00 − 10.32 = −0.32 to the balance: the cycle cost 30.00 × 15/31 + 10.00 × 16/31
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      expect((await subOf(k, sub)).credit_balance).toBe("0.32")
    })

    it("always_invoice is immediate's alias: the same quote, charged now; refused while pending lines wait", async () => {
      const { k, p60, p10, sub } = await setup("p30")
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const alias = ok(await preview(k, sub, { price_id: p60, proration: "immediate" }))
      const q = ok(await preview(k, sub, { price_id: p60, proration: "always_invoice" }))
      expect([q.quote_id, q.outcome, q.total, q.proration]).toEqual([
        alias.quote_id,
        "upgrade",
        "15.49",
        "always_invoice"
      ])
      ok(await commit(k, sub, { price_id: p60, proration: "always_invoice", quote_id: q.quote_id }))
      expect((await invoicesOf(k, sub)).map((i: any) => [i.invoice_type, i.amount])).toEqual([
        ["initial", "30.00"],
        ["upgrade", "15.49"]
      ])
      // a pending line makes a later invoiced change of the cycle refused, naming proration
      const pend = ok(await preview(k, sub, { price_id: p10, proration: "create_prorations" }))
      ok(await commit(k, sub, { price_id: p10, proration: "create_prorations", quote_id: pend.quote_id }))
      expect(refusal(await preview(k, sub, { price_id: p60, proration: "always_invoice" }))).toEqual([
        400,
        "InvalidParameter",
        "proration"
      ])
      // none is accepted and moves nothing
      const none = ok(await preview(k, sub, { price_id: p60, proration: "none" }))
      expect([none.outcome, none.total]).toEqual(["none", "0.00"])
      expect(refusal(await preview(k, sub, { price_id: p60, proration: "later" }))).toEqual([
        400,
        "InvalidParameter",
        "proration"
      ])
    })

    it("create_prorations with a 50 % discount: the lines are priced after it, the invoice's discount takes only its own line; the change's webhook", async () => {
      const k = await fresh()
      const p30 = await api.priceOf(k, {}, { product: "Team", price: "Team 30" })
      const p60 = await price(k, p30.productId, "60.00", "Team 60")
      ok(
        await api.call("POST", "/api/v1/discounts", k, {
          name: "Half",
          code: "HALF",
          discount_type: "percentage",
          percent_off: 50,
          duration: "forever"
        })
      )
      const s = ok(
        await api.call("POST", "/api/v1/session", k, {
          payer_id: "p-half",
          line_items: [{ price_id: p30.priceId }],
          discount_code: "HALF"
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
      // paid 15.00 a month: credit 15.00 × 16/31 = 7.74; the new plan costs 30.00 after the discount: 15.48
      const body = { price_id: p60, proration: "create_prorations" }
      const q = ok(await preview(k, sub, body))
      expect([q.credit, q.charge]).toEqual(["7.74", "15.48"])
      ok(await commit(k, sub, { ...body, quote_id: q.quote_id }))
      const events = (
        data(await api.call("GET", `/api/v2/webhook/events?business_ids=${sub}&limit=100`, k)).list as Array<any>
      ).map((e) => e.event_type)
      expect(events).toContain("v2.subscription.price_changed")
      // 60.00 − 30.00 (50 % of the plan line only) − 7.74 + 15.48 = 37.74
      const next = await upcoming(k, sub)
      expect([next.subtotal, next.discount_amount, next.amount]).toEqual(["67.74", "30.00", "37.74"])
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      const renewal = (await invoicesOf(k, sub)).find((i: any) => i.invoice_type === "renewal")
      expect(renewal.amount).toBe("37.74")
    })

    it("create_prorations under a 10 % exclusive tax: the credit is given back with the tax it collected, the lines taxed on the next invoice", async () => {
      const k = await fresh()
      ok(await api.call("POST", "/api/v1/tax_rates", k, { name: "Tax", percentage: "10", country: "DE" }))
      const p30 = await api.priceOf(k, {}, { product: "Team", price: "Team 30" })
      const p60 = await price(k, p30.productId, "60.00", "Team 60")
      const s = ok(
        await api.call("POST", "/api/v1/session", k, {
          payer_id: "p-tax",
          line_items: [{ price_id: p30.priceId }],
          billing_address: { country_code: "DE" }
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
      const sub = session.subscription_id as string
      expect((await invoicesOf(k, sub))[0].amount).toBe("33.00")
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const body = { price_id: p60, proration: "create_prorations" }
      const q = ok(await preview(k, sub, body))
      expect([q.credit, q.charge, q.tax, q.total]).toEqual(["15.48", "30.97", "0.00", "0.00"])
      ok(await commit(k, sub, { ...body, quote_id: q.quote_id }))
      // 15.48 grossed up by the tax collected (33/30) = 17.03 is given back now: 15.97 still refundable
      const refused = await api.call("POST", "/api/v1/refund", k, { trade_id: session.trade_id, amount: "15.98" })
      expect(refusal(refused)).toEqual([400, "InvalidParameter", "amount"])
      // 60.00 − 15.48 + 30.97 = 75.49, + 10 % = 7.55
      const next = await upcoming(k, sub)
      expect([next.subtotal, next.tax_amount, next.amount]).toEqual(["75.49", "7.55", "83.04"])
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      expect((await invoicesOf(k, sub)).find((i: any) => i.invoice_type === "renewal").amount).toBe("83.04")
    })

    /** A subscription to `priceId` of a customer in DE, where `k`'s merchant has a 10 % exclusive tax. */
    const taxedSubscription = async (k: string, priceId: string) => {
      const s = ok(
        await api.call("POST", "/api/v1/session", k, {
          payer_id: `p-tax-${Math.random()}`,
          line_items: [{ price_id: priceId }],
          billing_address: { country_code: "DE" }
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
      return { sub: session.subscription_id as string, tradeId: session.trade_id as string }
    }

    it("create_prorations under a 10 % tax: a credit larger than the next invoice goes to the balance with the tax it was paid with, as always_invoice's would", async () => {
      const k = await fresh()
      ok(await api.call("POST", "/api/v1/tax_rates", k, { name: "Tax", percentage: "10", country: "DE" }))
      const p60 = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } })
      const p10 = await price(k, p60.productId, "10.00", "Team 10")
      const { sub, tradeId } = await taxedSubscription(k, p60.priceId)
      expect((await invoicesOf(k, sub))[0].amount).toBe("66.00")
      // Jan 2: credit 60.00 × 30/31 = 58.06, charge 10.00 × 30/31 = 9.68
      ok(await advance(k, "2026-01-02T00:00:00Z"))
      const body = { price_id: p10, proration: "create_prorations" }
      const q = ok(await preview(k, sub, body))
      expect([q.credit, q.charge, q.net]).toEqual(["58.06", "9.68", "-48.38"])
      ok(await commit(k, sub, { ...body, quote_id: q.quote_id }))
      // 58.06 × 66/60 = 63.87 was given back from the payment now: 2.13 is still refundable
      const refused = await api.call("POST", "/api/v1/refund", k, { trade_id: tradeId, amount: "2.14" })
      expect(refusal(refused)).toEqual([400, "InvalidParameter", "amount"])
      // the upcoming invoice says it: 10.00 − 58.06 + 9.68 = −38.38, with the 10 % tax paid on it back
      const next = await upcoming(k, sub)
      expect(lines(next)).toEqual([
        ["subscription", "10.00"],
        ["proration_credit", "-58.06"],
        ["proration_charge", "9.68"],
        ["refund", "42.22"]
      ])
      expect([next.subtotal, next.tax_amount, next.amount]).toEqual(["3.84", "-3.84", "0.00"])
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      const renewal = (await invoicesOf(k, sub)).find((i: any) => i.invoice_type === "renewal")
      expect(lines(renewal)).toEqual(lines(next))
      expect([renewal.subtotal, renewal.tax_amount, renewal.amount]).toEqual(["3.84", "-3.84", "0.00"])
      expect(renewal.tax_lines.map((t: any) => [t.taxable_amount, t.amount])).toEqual([["-38.38", "-3.84"]])
      // 38.38 + 3.84: what always_invoice gives (48.38 × 1.1 = 53.22 to the balance, less March's 11.00)
      expect((await subOf(k, sub)).credit_balance).toBe("42.22")
      ok(await advance(k, "2026-03-01T00:00:00Z"))
      expect((await subOf(k, sub)).credit_balance).toBe("31.22")
      // the same change under always_invoice, for comparison
      const k2 = await fresh("credit_balance")
      ok(await api.call("POST", "/api/v1/tax_rates", k2, { name: "Tax", percentage: "10", country: "DE" }))
      const q60 = await api.priceOf(k2, { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } })
      const q10 = await price(k2, q60.productId, "10.00", "Team 10")
      const other = await taxedSubscription(k2, q60.priceId)
      ok(await advance(k2, "2026-01-02T00:00:00Z"))
      const now = ok(await preview(k2, other.sub, { price_id: q10, proration: "always_invoice" }))
      ok(await commit(k2, other.sub, { price_id: q10, proration: "always_invoice", quote_id: now.quote_id }))
      expect((await subOf(k2, other.sub)).credit_balance).toBe("53.22")
      ok(await advance(k2, "2026-03-01T00:00:00Z"))
      expect((await subOf(k2, other.sub)).credit_balance).toBe("31.22")
    })

    it("a cancel now before the next invoice bills the pending lines on a final invoice: a net credit goes to the balance, stated", async () => {
      const { k, p10, sub } = await setup("p60")
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const body = { price_id: p10, proration: "create_prorations" }
      const q = ok(await preview(k, sub, body))
      // credit 60.00 × 16/31 = 30.97, charge 10.00 × 16/31 = 5.16
      expect([q.credit, q.charge]).toEqual(["30.97", "5.16"])
      ok(await commit(k, sub, { ...body, quote_id: q.quote_id }))
      ok(await api.call("POST", `/api/v1/subscription/${sub}/cancel`, k, { cancel_type: "immediate" }))
      const s = await subOf(k, sub)
      expect([s.status, s.credit_balance]).toEqual(["canceled", "25.81"])
      const final = (await invoicesOf(k, sub)).at(-1)
      expect([final.invoice_type, final.amount, final.biz_status]).toEqual(["upgrade", "0.00", "success"])
      expect(lines(final)).toEqual([
        ["proration_credit", "-30.97"],
        ["proration_charge", "5.16"],
        ["refund", "25.81"]
      ])
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      expect((await invoicesOf(k, sub)).map((i: any) => i.invoice_type)).toEqual(["initial", "upgrade"])
    })

    it("a net pending credit under a 10 % tax: to the balance with its tax, whether the subscription is canceled now or at its period's end", async () => {
      for (const when of ["immediate", "end_of_period"] as const) {
        const k = await fresh()
        ok(await api.call("POST", "/api/v1/tax_rates", k, { name: "Tax", percentage: "10", country: "DE" }))
        const p60 = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } })
        const p10 = await price(k, p60.productId, "10.00", "Team 10")
        const { sub } = await taxedSubscription(k, p60.priceId)
        ok(await advance(k, "2026-01-16T00:00:00Z"))
        const body = { price_id: p10, proration: "create_prorations" }
        const q = ok(await preview(k, sub, body))
        // credit 30.97 (given back as 34.07 with 3.10 tax), charge 5.16: net −25.81, with 2.58 of that tax
        expect([q.credit, q.charge, q.net]).toEqual(["30.97", "5.16", "-25.81"])
        ok(await commit(k, sub, { ...body, quote_id: q.quote_id }))
        ok(await api.call("POST", `/api/v1/subscription/${sub}/cancel`, k, { cancel_type: when }))
        ok(await advance(k, "2026-02-01T00:00:00Z"))
        const s = await subOf(k, sub)
        expect([when, s.status, s.credit_balance]).toEqual([when, "canceled", "28.39"])
      }
    })

    it("create_prorations upgrade then cancel now: the time served on the upgraded plan is billed and charged on a final invoice, with its tax", async () => {
      const k = await fresh()
      ok(await api.call("POST", "/api/v1/tax_rates", k, { name: "Tax", percentage: "10", country: "DE" }))
      const p30 = await api.priceOf(k, {}, { product: "Team", price: "Team 30" })
      const p60 = await price(k, p30.productId, "60.00", "Team 60")
      const { sub, tradeId } = await taxedSubscription(k, p30.priceId)
      ok(await advance(k, "2026-01-16T00:00:00Z"))
      const body = { price_id: p60, proration: "create_prorations" }
      const q = ok(await preview(k, sub, body))
      expect([q.credit, q.charge, q.net]).toEqual(["15.48", "30.97", "15.49"])
      ok(await commit(k, sub, { ...body, quote_id: q.quote_id }))
      ok(await advance(k, "2026-01-20T00:00:00Z"))
      // what the next invoice would have billed for January: 15.49 + 10 % = 17.04, charged now
      ok(await api.call("POST", `/api/v1/subscription/${sub}/cancel`, k, { cancel_type: "immediate" }))
      const s = await subOf(k, sub)
      expect([s.status, s.credit_balance]).toEqual(["canceled", "0.00"])
      const invoices = await invoicesOf(k, sub)
      expect(invoices.map((i: any) => [i.invoice_type, i.amount, i.biz_status])).toEqual([
        ["initial", "33.00", "success"],
        ["upgrade", "17.04", "success"]
      ])
      const final = invoices[1]
      expect(lines(final)).toEqual([
        ["proration_credit", "-15.48"],
        ["proration_charge", "30.97"]
      ])
      expect([final.subtotal, final.tax_amount, final.credit_applied]).toEqual(["15.49", "1.55", "0.00"])
      const trades = ok(await api.call("GET", "/api/v1/trades?limit=100", k)).list
      expect(
        trades.some((t: any) => t.order_type === "upgrade" && t.amount === "17.04" && t.trade_status === "succeeded")
      ).toBe(true)
      // never more back than collected: of the first payment 17.03 was given back by the change's credit
      const refused = await api.call("POST", "/api/v1/refund", k, { trade_id: tradeId, amount: "15.98" })
      expect(refusal(refused)).toEqual([400, "InvalidParameter", "amount"])
      // nothing more is billed
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      expect(await invoicesOf(k, sub)).toHaveLength(2)
    })
  })
}
