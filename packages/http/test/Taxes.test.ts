import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { TestClient } from "@recur/http"
import { backends, serve } from "./client.js"

const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; data?: { param?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}

for (const [name, storage] of backends()) {
  describe(`tax rates (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const fresh = async () => (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
    const rate = (k: string, body: Record<string, unknown>) => api.call("POST", "/api/v1/tax_rates", k, body)
    const rateOf = async (k: string, body: Record<string, unknown>) => {
      const r = await rate(k, body)
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      return (r.body as any).data.tax_rate
    }
    const pay = (sessionId: string) =>
      api.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
    const sessionOf = async (k: string, body: Record<string, unknown>) => {
      const s = await api.call("POST", "/api/v1/session", k, {
        ...("customer_id" in body ? {} : { payer_id: `p-${Math.random()}` }),
        ...body
      })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const id = (s.body as any).data.session_id as string
      return ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session
    }
    const paid = async (k: string, body: Record<string, unknown>) => {
      const s = await sessionOf(k, body)
      expect((await pay(s.session_id)).status).toBe(200)
      const after = ((await api.call("GET", `/api/v1/session/${s.session_id}`, k)).body as any).data.session
      const trade = ((await api.call("GET", `/api/v1/trade/${after.trade_id}`, k)).body as any).data.trade
      return { session: s, subscriptionId: after.subscription_id as string | null, trade }
    }
    const invoicesOf = async (k: string, subscriptionId: string) =>
      ((await api.call("GET", "/api/v1/invoices?limit=100", k)).body as any).data.list
        .filter((i: any) => i.subscription_id === subscriptionId)
        .sort((a: any, b: any) => a.cycle_index - b.cycle_index || a.created_at.localeCompare(b.created_at))
    const de = { country_code: "DE", city: "Berlin" }

    it("creates, normalises, lists, reads and archives rates; one active rate per country and region", async () => {
      const k = await fresh()
      const vat = await rateOf(k, {
        name: "VAT",
        percentage: "19",
        country: "de",
        inclusive: true,
        metadata: { a: "b" }
      })
      expect(vat).toMatchObject({
        name: "VAT",
        percentage: "19",
        country: "DE",
        region: null,
        inclusive: true,
        status: "active",
        metadata: { a: "b" },
        created_at: "2026-01-01T00:00:00Z",
        archived_at: null
      })
      expect(vat.tax_rate_id).toMatch(/^txr_/)
      const ca = await rateOf(k, { name: "Sales tax", percentage: "7.2500", country: "US", region: "US-CA" })
      expect([ca.percentage, ca.region, ca.inclusive]).toEqual(["7.25", "CA", false])
      await rateOf(k, { name: "NY", percentage: "8.875", country: "US", region: "NY" })
      expect(refusal(await rate(k, { name: "VAT again", percentage: "7", country: "DE" }))).toEqual([
        409,
        "duplicate_resource",
        "region"
      ])
      const list = async (q: string) =>
        ((await api.call("GET", `/api/v1/tax_rates?${q}`, k)).body as any).data.list.map((r: any) => r.name)
      expect(await list("country=US")).toEqual(["NY", "Sales tax"])
      expect(await list("limit=2")).toEqual(["NY", "Sales tax"])
      const got = await api.call("GET", `/api/v1/tax_rate/${vat.tax_rate_id}`, k)
      expect((got.body as any).data.tax_rate).toEqual(vat)
      const archived = await api.call("POST", `/api/v1/tax_rate/${vat.tax_rate_id}/archive`, k)
      expect((archived.body as any).data.tax_rate).toMatchObject({
        status: "archived",
        archived_at: "2026-01-01T00:00:00Z"
      })
      expect(refusal(await api.call("POST", `/api/v1/tax_rate/${vat.tax_rate_id}/archive`, k))).toEqual([
        409,
        "state_conflict",
        undefined
      ])
      // archived, its place is free again
      await rateOf(k, { name: "VAT 2027", percentage: "19", country: "DE", inclusive: true })
      expect(await list("status=archived")).toEqual(["VAT"])
      expect(refusal(await api.call("GET", "/api/v1/tax_rates?status=gone", k))).toEqual([
        400,
        "InvalidParameter",
        "status"
      ])
      // another merchant sees none of them
      const other = await fresh()
      expect((await api.call("GET", `/api/v1/tax_rate/${vat.tax_rate_id}`, other)).status).toBe(404)
    })

    it("refuses bad rates with the field named, and creates nothing", async () => {
      const k = await fresh()
      const base = { name: "VAT", percentage: "19", country: "DE" }
      for (const [patch, param] of [
        [{ name: "" }, "name"],
        [{ name: "x".repeat(101) }, "name"],
        [{ percentage: "100.0001" }, "percentage"],
        [{ percentage: "19.12345" }, "percentage"],
        [{ percentage: "-1" }, "percentage"],
        [{ percentage: "1e2" }, "percentage"],
        [{ percentage: " 19" }, "percentage"],
        [{ country: "Germany" }, "country"],
        [{ country: "D1" }, "country"],
        [{ region: "BAVARIA" }, "region"],
        [{ region: "" }, "region"]
      ] as const) {
        expect([JSON.stringify(patch), ...refusal(await rate(k, { ...base, ...patch }))]).toEqual([
          JSON.stringify(patch),
          400,
          "InvalidParameter",
          param
        ])
      }
      expect(refusal(await rate(k, { ...base, percentage: 19 }))[0]).toBe(400)
      expect(refusal(await rate(k, { ...base, inclusive: "yes" }))[0]).toBe(400)
      expect(((await api.call("GET", "/api/v1/tax_rates", k)).body as any).data.list).toEqual([])
    })

    it("19 % inclusive on 119.00 at a German billing address: 119.00 charged, 19.00 of it tax, on the trade and the invoice", async () => {
      const k = await fresh()
      const vat = await rateOf(k, { name: "VAT", percentage: "19", country: "DE", inclusive: true })
      const { priceId } = await api.priceOf(k, {
        price_plan: { billing_cycle_unit: "month", base_price_val: "119.00" }
      })
      const { session, subscriptionId, trade } = await paid(k, {
        line_items: [{ price_id: priceId }],
        billing_address: de
      })
      expect([session.amount, session.tax_amount]).toEqual(["119.00", "19.00"])
      expect([trade.amount, trade.tax_amount]).toEqual(["119.00", "19.00"])
      const [first] = await invoicesOf(k, subscriptionId!)
      expect(first).toMatchObject({
        amount: "119.00",
        subtotal: "119.00",
        tax_amount: "19.00",
        tax_lines: [
          {
            tax_rate_id: vat.tax_rate_id,
            name: "VAT",
            percentage: "19",
            country: "DE",
            region: null,
            inclusive: true,
            taxable_amount: "100.00",
            amount: "19.00"
          }
        ]
      })
      expect(first.lines).toEqual([
        {
          kind: "subscription",
          description: "Pro monthly × 1",
          quantity: "1",
          amount: "119.00",
          period_start: "2026-01-01T00:00:00Z",
          period_end: "2026-02-01T00:00:00Z",
          // its shares of the invoice's discounts and tax (the inclusive 19.00 is all its own)
          discount_amount: "0.00",
          tax_amount: "19.00"
        }
      ])
      // the renewal: the same tax, over the next period
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-02-01T00:00:00Z" })
      const [, renewal] = await invoicesOf(k, subscriptionId!)
      expect([renewal.amount, renewal.tax_amount, renewal.lines[0].period_start, renewal.lines[0].period_end]).toEqual([
        "119.00",
        "19.00",
        "2026-02-01T00:00:00Z",
        "2026-03-01T00:00:00Z"
      ])
    })

    it("exclusive taxes are added; a region's rate before its country's; the customer's address when the session has none", async () => {
      const k = await fresh()
      await rateOf(k, { name: "Federal", percentage: "5", country: "US" })
      await rateOf(k, { name: "CA sales tax", percentage: "7.25", country: "US", region: "CA" })
      const { priceId } = await api.priceOf(k, {
        price_plan: { billing_cycle_unit: "month", base_price_val: "100.00" }
      })
      const inCa = await paid(k, {
        line_items: [{ price_id: priceId }],
        billing_address: { country_code: "US", province_code: "CA" }
      })
      expect([inCa.session.amount, inCa.trade.amount, inCa.trade.tax_amount]).toEqual(["107.25", "107.25", "7.25"])
      const customer = await api.call("POST", "/api/v1/front/customer/create", k, {
        payer_id: "ny-1",
        address: { line1: "1 Main St", city: "New York", province: "NY", country: "US" }
      })
      expect(customer.status, JSON.stringify(customer.body)).toBe(200)
      const inNy = await paid(k, {
        line_items: [{ price_id: priceId }],
        customer_id: (customer.body as any).data.customer_id
      })
      const [inv] = await invoicesOf(k, inNy.subscriptionId!)
      expect([inv.amount, inv.subtotal, inv.tax_amount, inv.tax_lines[0].name]).toEqual([
        "105.00",
        "100.00",
        "5.00",
        "Federal"
      ])
      // nowhere known: no tax
      const nowhere = await paid(k, { line_items: [{ price_id: priceId }] })
      expect([nowhere.trade.amount, nowhere.trade.tax_amount]).toEqual(["100.00", "0.00"])
      // a one-time payment is taxed too
      const once = await paid(k, {
        mode: "payment",
        amount: "10.00",
        currency: "USD",
        billing_address: { country_code: "US", province_code: "CA" }
      })
      expect([once.session.amount, once.session.tax_amount, once.trade.amount, once.trade.tax_amount]).toEqual([
        "10.73",
        "0.73",
        "10.73",
        "0.73"
      ])
    })

    it("tax is on the discounted amount: 10 % off 50.00 with 20 % VAT is 45.00 + 9.00", async () => {
      const k = await fresh()
      await rateOf(k, { name: "VAT", percentage: "20", country: "GB" })
      await api.call("POST", "/api/v1/discounts", k, {
        name: "Ten",
        code: "TEN",
        discount_type: "percentage",
        percent_off: 10,
        duration: "forever"
      })
      const { priceId } = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "50.00" } })
      const { session, subscriptionId } = await paid(k, {
        line_items: [{ price_id: priceId }],
        discount_code: "TEN",
        billing_address: { country_code: "GB" }
      })
      expect([session.amount, session.tax_amount]).toEqual(["54.00", "9.00"])
      const [inv] = await invoicesOf(k, subscriptionId!)
      expect([inv.subtotal, inv.amount, inv.tax_amount, inv.tax_lines[0].taxable_amount]).toEqual([
        "50.00",
        "54.00",
        "9.00",
        "45.00"
      ])
      expect(inv.lines.map((l: any) => [l.kind, l.amount])).toEqual([
        ["subscription", "50.00"],
        ["discount", "-5.00"]
      ])
    })

    it("refunds carry the tax in proportion; partial refunds that add up to the whole carry exactly the whole tax", async () => {
      const k = await fresh()
      await rateOf(k, { name: "VAT", percentage: "19", country: "DE" })
      const { priceId } = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "10.01" } })
      const { trade, subscriptionId } = await paid(k, { line_items: [{ price_id: priceId }], billing_address: de })
      // 10.01 + 1.90 (19 % of 10.01 = 1.9019) = 11.91
      expect([trade.amount, trade.tax_amount]).toEqual(["11.91", "1.90"])
      for (const amount of ["3.97", "3.97", "3.97"]) {
        const r = await api.call("POST", "/api/v1/refund", k, { trade_id: trade.trade_id, amount })
        expect(r.status, JSON.stringify(r.body)).toBe(200)
      }
      const refunds = (await invoicesOf(k, subscriptionId!)).filter((i: any) => i.invoice_type === "refund")
      expect(refunds.map((i: any) => i.amount)).toEqual(["3.97", "3.97", "3.97"])
      const taxes = refunds.map((i: any) => i.tax_amount)
      // 1.90 × 3.97 / 11.91 = 0.6333…: 0.63, then 1.27 − 0.63 = 0.64, then 1.90 − 1.27 = 0.63
      expect(taxes).toEqual(["0.63", "0.64", "0.63"])
      expect(refunds[0].tax_lines[0]).toMatchObject({ name: "VAT", inclusive: true, amount: "0.63" })
    })

    it("an upgrade's prorated charge is taxed like a cycle", async () => {
      const k = await fresh()
      await rateOf(k, { name: "VAT", percentage: "20", country: "FR" })
      const { priceId } = await api.priceOf(k)
      const bigger = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } })
      const { subscriptionId } = await paid(k, {
        line_items: [{ price_id: priceId }],
        billing_address: { country_code: "FR" }
      })
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-01-16T13:00:00Z" })
      const changed = await api.call("POST", `/api/v1/subscription/${subscriptionId}`, k, {
        price_id: bigger.priceId
      })
      expect(changed.status, JSON.stringify(changed.body)).toBe(200)
      const upgrade = (await invoicesOf(k, subscriptionId!)).find((i: any) => i.invoice_type === "upgrade")
      expect(upgrade).toBeDefined()
      const net = upgrade.lines.reduce((a: number, l: any) => a + Math.round(Number(l.amount) * 100), 0)
      expect(net).toBeGreaterThan(0)
      expect(Math.round(Number(upgrade.tax_amount) * 100)).toBe(Math.round(net * 0.2))
      expect(Math.round(Number(upgrade.amount) * 100)).toBe(net + Math.round(net * 0.2))
      expect(upgrade.lines.map((l: any) => l.period_end)).toEqual(["2026-02-01T00:00:00Z", "2026-02-01T00:00:00Z"])
    })

    it("a downgrade gives back the unused net and the exclusive tax paid on it", async () => {
      const k = await fresh()
      await rateOf(k, { name: "VAT", percentage: "20", country: "FR" })
      const big = await api.priceOf(k, { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } })
      const small = await api.priceOf(k)
      const { subscriptionId, trade } = await paid(k, {
        line_items: [{ price_id: big.priceId }],
        billing_address: { country_code: "FR" }
      })
      expect([trade.amount, trade.tax_amount]).toEqual(["72.00", "12.00"])
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-01-16T13:00:00Z" })
      const quote = (
        await api.call("POST", `/api/v1/subscription/${subscriptionId}/preview-change`, k, { price_id: small.priceId })
      ).body as any
      const net = -Math.round(Number(quote.data.net) * 100)
      expect(net).toBeGreaterThan(0)
      const changed = await api.call("POST", `/api/v1/subscription/${subscriptionId}`, k, { price_id: small.priceId })
      expect(changed.status, JSON.stringify(changed.body)).toBe(200)
      const refunds = (await invoicesOf(k, subscriptionId!)).filter((i: any) => i.invoice_type === "refund")
      expect(refunds).toHaveLength(1)
      const back = Math.round(Number(refunds[0].amount) * 100)
      // the net and 20 % on it, each rounded once
      expect(Math.abs(back - Math.round(net * 1.2))).toBeLessThanOrEqual(1)
      // the refund invoice carries the tax part of what it paid back: a sixth of it
      expect(Math.abs(Math.round(Number(refunds[0].tax_amount) * 100) - Math.round(back / 6))).toBeLessThanOrEqual(1)
    })

    it("renewals billed together are each taxed at their own customer's address", async () => {
      const k = await fresh()
      await rateOf(k, { name: "VAT", percentage: "19", country: "DE", inclusive: true })
      await rateOf(k, { name: "CA", percentage: "7.25", country: "US", region: "CA" })
      const { priceId } = await api.priceOf(k, {
        price_plan: { billing_cycle_unit: "month", base_price_val: "100.00" }
      })
      const where = [{ country_code: "DE" }, { country_code: "US", province_code: "CA" }, null, { country_code: "DE" }]
      const subs = await Promise.all(
        where.map(
          async (billing_address) =>
            (
              await paid(k, {
                line_items: [{ price_id: priceId }],
                ...(billing_address ? { billing_address } : {})
              })
            ).subscriptionId!
        )
      )
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-02-01T00:00:00Z" })
      const renewals = await Promise.all(
        subs.map(async (sub) => (await invoicesOf(k, sub)).find((i: any) => i.cycle_index === 1))
      )
      expect(renewals.map((i: any) => [i.amount, i.tax_amount])).toEqual([
        ["100.00", "15.97"],
        ["107.25", "7.25"],
        ["100.00", "0.00"],
        ["100.00", "15.97"]
      ])
    })
  })
}
