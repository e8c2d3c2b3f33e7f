import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { TestClient } from "@recur/http"
import { OpenApi } from "effect/http-api"
import { BillingApi } from "../src/Api.js"
import { backends, serve } from "./client.js"

describe("billing cycle anchor in the OpenAPI document", () => {
  it("the session body takes billing_cycle_anchor and proration_behavior; the session and subscription show the anchor", () => {
    const doc = OpenApi.fromApi(BillingApi) as any
    const text = JSON.stringify(doc)
    const schemas = doc.components.schemas as Record<string, any>
    expect(schemas.CheckoutSession.properties).toHaveProperty("billing_cycle_anchor")
    expect(schemas.CheckoutSession.properties).toHaveProperty("proration_behavior")
    expect(schemas.Subscription.properties).toHaveProperty("billing_cycle_anchor")
    const body = JSON.stringify(doc.paths["/api/v1/session"].post.requestBody)
    const create = body.includes("$ref") ? text : body
    expect(create).toContain("billing_cycle_anchor")
    expect(create).toContain('"create_prorations"')
  })
})

const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; data?: { param?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}

for (const [name, storage] of backends()) {
  describe(`billing cycle anchor (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const fresh = async (policy = "per_day") => {
      const k = (await api.merchant({ frozen: "2026-01-15T00:00:00Z" })).api_key
      const set = await api.call("POST", "/api/v1/billing_settings", k, { proration_policy: policy })
      expect(set.status, JSON.stringify(set.body)).toBe(200)
      return k
    }
    const session = (k: string, body: Record<string, unknown>) =>
      api.call("POST", "/api/v1/session", k, { payer_id: `p-${Math.random()}`, ...body })
    const sessionOf = async (k: string, id: string) =>
      ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session
    const pay = (sessionId: string) =>
      api.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
    const invoicesOf = async (k: string, subscriptionId: string) =>
      ((await api.call("GET", "/api/v1/invoices?limit=100", k)).body as any).data.list
        .filter((i: any) => i.subscription_id === subscriptionId)
        .sort((a: any, b: any) => a.cycle_index - b.cycle_index)
    const advance = (k: string, to: string) =>
      api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: to })

    it("anchored on the 1st: the first invoice is 17/31 of 30.00 (per_day), then 30.00 on the 1st of each month", async () => {
      const k = await fresh()
      const { priceId } = await api.priceOf(k)
      const s = await session(k, { line_items: [{ price_id: priceId }], billing_cycle_anchor: "2026-02-01T00:00:00Z" })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const id = (s.body as any).data.session_id
      const opened = await sessionOf(k, id)
      expect([opened.amount, opened.billing_cycle_anchor, opened.proration_behavior]).toEqual([
        "16.45",
        "2026-02-01T00:00:00Z",
        "create_prorations"
      ])
      const page = await api.call("GET", `/checkout/${id}`, null)
      expect(String(page.body)).toContain("Then $30.00 on the 1st of each month")
      for (const [language, words] of [
        ["de-DE", "am 1. jedes Monats"],
        ["fr-FR", "le 1er de chaque mois"]
      ] as const) {
        const localized = await api.call("GET", `/checkout/${id}`, null, undefined, { "accept-language": language })
        expect(String(localized.body)).toContain(words)
      }
      expect((await pay(id)).status).toBe(200)
      const subId = (await sessionOf(k, id)).subscription_id as string
      const sub = ((await api.call("GET", `/api/v1/subscription/${subId}`, k)).body as any).data.subscription
      expect([sub.status, sub.billing_cycle_anchor, sub.current_period_start, sub.current_period_end]).toEqual([
        "active",
        "2026-02-01T00:00:00Z",
        "2026-01-15T00:00:00Z",
        "2026-02-01T00:00:00Z"
      ])
      const [first] = await invoicesOf(k, subId)
      expect([first.invoice_type, first.cycle_index, first.amount]).toEqual(["initial", 0, "16.45"])
      // the renewal on the anchor day bills a whole period at full price
      await advance(k, "2026-02-01T00:00:00Z")
      await advance(k, "2026-03-01T00:00:00Z")
      const all = await invoicesOf(k, subId)
      expect(all.map((i: any) => [i.invoice_type, i.cycle_index, i.amount])).toEqual([
        ["initial", 0, "16.45"],
        ["renewal", 1, "30.00"],
        ["renewal", 2, "30.00"]
      ])
      const renewed = ((await api.call("GET", `/api/v1/subscription/${subId}`, k)).body as any).data.subscription
      expect([renewed.current_period_start, renewed.current_period_end]).toEqual([
        "2026-03-01T00:00:00Z",
        "2026-04-01T00:00:00Z"
      ])
    })

    it("in the short first period: the upcoming invoice is the anchor day's 30.00, and a change prorates over the whole period ending at the anchor", async () => {
      const k = await fresh()
      const { priceId } = await api.priceOf(k)
      const { priceId: bigger } = await api.priceOf(
        k,
        { price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" } },
        { product: "Pro", price: "Pro big" }
      )
      const s = await session(k, { line_items: [{ price_id: priceId }], billing_cycle_anchor: "2026-02-01T00:00:00Z" })
      const id = (s.body as any).data.session_id
      expect((await pay(id)).status).toBe(200)
      const subId = (await sessionOf(k, id)).subscription_id as string
      const upcoming = ((await api.call("GET", `/api/v1/subscription/${subId}/upcoming_invoice`, k)).body as any).data
        .upcoming_invoice
      expect([upcoming.invoice_type, upcoming.cycle_index, upcoming.invoice_date, upcoming.amount]).toEqual([
        "renewal",
        1,
        "2026-02-01T00:00:00Z",
        "30.00"
      ])
      // 12 of January's 31 days left: the credit is what the 16.45 first invoice charged for them
      await advance(k, "2026-01-20T00:00:00Z")
      const change = { price_id: bigger, effective_type: "immediate", proration: "immediate" }
      const preview = (await api.call("POST", `/api/v1/subscription/${subId}/preview-change`, k, change)).body as any
      expect([preview.data.credit, preview.data.charge, preview.data.net]).toEqual(["11.61", "23.23", "11.62"])
      // create_prorations prorates over the same span: the same credit and charge, billed later
      const pending = (
        await api.call("POST", `/api/v1/subscription/${subId}/preview-change`, k, {
          ...change,
          proration: "create_prorations"
        })
      ).body as any
      expect([pending.data.credit, pending.data.charge, pending.data.net]).toEqual(["11.61", "23.23", "11.62"])
      // an interval switch waits for the anchor: the short period was charged as a share of a month
      const { priceId: yearly } = await api.priceOf(
        k,
        { price_plan: { billing_cycle_unit: "year", base_price_val: "300.00" } },
        { product: "Pro", price: "Pro yearly" }
      )
      const switched = (await api.call("POST", `/api/v1/subscription/${subId}/preview-change`, k, { price_id: yearly }))
        .body as any
      expect([switched.code, switched.data.param]).toEqual(["InvalidParameter", "price_id"])
      expect(switched.message).toContain("billing anchor")
      const done = await api.call("POST", `/api/v1/subscription/${subId}`, k, {
        ...change,
        quote_id: preview.data.quote_id
      })
      expect(done.status, JSON.stringify(done.body)).toBe(200)
      await advance(k, "2026-02-01T00:00:00Z")
      const all = await invoicesOf(k, subId)
      expect(all.map((i: any) => `${i.cycle_index} ${i.invoice_type} ${i.amount}`).sort()).toEqual([
        "0 initial 16.45",
        "0 upgrade 11.62",
        "1 renewal 60.00"
      ])
    })

    it("the short first period is the first cycle: a once discount takes it, and total_cycles 2 ends a whole period after the anchor", async () => {
      const k = await fresh()
      const { priceId } = await api.priceOf(k)
      const d = await api.call("POST", "/api/v1/discounts", k, {
        name: "Once",
        code: "ONCE50",
        discount_type: "percentage",
        percent_off: 50,
        duration: "once"
      })
      expect(d.status, JSON.stringify(d.body)).toBe(200)
      const s = await session(k, {
        line_items: [{ price_id: priceId }],
        billing_cycle_anchor: "2026-02-01T00:00:00Z",
        discount_code: "ONCE50",
        total_cycles: 2
      })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const id = (s.body as any).data.session_id
      // 16.45 less half of it, rounded half-even: 8.22 off (8.225), 8.23 due
      expect((await sessionOf(k, id)).amount).toBe("8.23")
      expect((await pay(id)).status).toBe(200)
      const subId = (await sessionOf(k, id)).subscription_id as string
      await advance(k, "2026-02-01T00:00:00Z")
      await advance(k, "2026-03-01T00:00:00Z")
      await advance(k, "2026-04-01T00:00:00Z")
      const all = await invoicesOf(k, subId)
      expect(all.map((i: any) => [i.invoice_type, i.cycle_index, i.amount])).toEqual([
        ["initial", 0, "8.23"],
        ["renewal", 1, "30.00"]
      ])
      const sub = ((await api.call("GET", `/api/v1/subscription/${subId}`, k)).body as any).data.subscription
      expect(sub.status).not.toBe("active")
    })

    it("usage billed in arrears: the short first period's usage is billed whole on the anchor day", async () => {
      const k = await fresh()
      const product = ((await api.call("POST", "/api/v1/products", k, { product_name: "API" })).body as any).data
      const price = await api.call("POST", "/api/v1/prices", k, {
        name: "Calls",
        product_id: product.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "based_on_usage",
        model_type: "per_unit",
        billing_threshold: "1",
        usage_unit_price: "0.10",
        payment_timing: "postpaid",
        billing_dimension: "usage",
        usage_amount: "1",
        usage_unit: "call",
        price_plan: { billing_cycle_unit: "month", base_price_val: "0" }
      })
      expect(price.status, JSON.stringify(price.body)).toBe(200)
      const s = await session(k, {
        line_items: [{ price_id: (price.body as any).data.price_id }],
        billing_cycle_anchor: "2026-02-01T00:00:00Z"
      })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const id = (s.body as any).data.session_id
      expect((await sessionOf(k, id)).amount).toBe("0.00")
      expect((await pay(id)).status).toBe(200)
      const subId = (await sessionOf(k, id)).subscription_id as string
      const used = await api.call("POST", `/api/v1/subscription/${subId}/usage`, k, { usage_count: 40 })
      expect(used.status, JSON.stringify(used.body)).toBe(200)
      await advance(k, "2026-02-01T00:00:00Z")
      const all = await invoicesOf(k, subId)
      expect(all.map((i: any) => `${i.cycle_index} ${i.invoice_type} ${i.amount}`).sort()).toEqual([
        "0 initial 0.00",
        "0 renewal 4.00"
      ])
      const sub = ((await api.call("GET", `/api/v1/subscription/${subId}`, k)).body as any).data.subscription
      expect([sub.current_period_start, sub.current_period_end]).toEqual([
        "2026-02-01T00:00:00Z",
        "2026-03-01T00:00:00Z"
      ])
    })

    it("proration_behavior none: the short first period is free, the anchor day bills 30.00", async () => {
      const k = await fresh("per_second")
      const { priceId } = await api.priceOf(k)
      const s = await session(k, {
        line_items: [{ price_id: priceId }],
        billing_cycle_anchor: "2026-02-01T00:00:00Z",
        proration_behavior: "none"
      })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const id = (s.body as any).data.session_id
      expect((await sessionOf(k, id)).amount).toBe("0.00")
      expect((await pay(id)).status).toBe(200)
      const subId = (await sessionOf(k, id)).subscription_id as string
      await advance(k, "2026-02-01T00:00:00Z")
      const all = await invoicesOf(k, subId)
      expect(all.map((i: any) => [i.invoice_type, i.amount])).toEqual([
        ["initial", "0.00"],
        ["renewal", "30.00"]
      ])
    })

    it("refuses an anchor in the past, more than one interval ahead, malformed, with a trial or a one-time payment, naming the field", async () => {
      const k = await fresh()
      const { priceId } = await api.priceOf(k)
      const trial = await api.priceOf(k, {
        has_trial: true,
        trial_period: { trial_period_unit: "day", trial_period_count: 7 }
      })
      const line = { line_items: [{ price_id: priceId }] }
      for (const [body, param] of [
        [{ ...line, billing_cycle_anchor: "2026-01-14T00:00:00Z" }, "billing_cycle_anchor"],
        [{ ...line, billing_cycle_anchor: "2026-01-15T00:00:00Z" }, "billing_cycle_anchor"],
        [{ ...line, billing_cycle_anchor: "2026-02-15T00:00:01Z" }, "billing_cycle_anchor"],
        [{ ...line, billing_cycle_anchor: "the 1st" }, "billing_cycle_anchor"],
        [{ ...line, proration_behavior: "none" }, "proration_behavior"],
        [
          { ...line, billing_cycle_anchor: "2026-02-01T00:00:00Z", proration_behavior: "sometimes" },
          "proration_behavior"
        ],
        [
          { line_items: [{ price_id: trial.priceId }], billing_cycle_anchor: "2026-02-01T00:00:00Z" },
          "billing_cycle_anchor"
        ],
        [
          { mode: "payment", amount: "10.00", currency: "USD", billing_cycle_anchor: "2026-02-01T00:00:00Z" },
          "billing_cycle_anchor"
        ]
      ] as const) {
        const r = await session(k, body)
        expect(refusal(r), JSON.stringify(body)).toEqual([400, "InvalidParameter", param])
      }
      // a session with an anchor sooner than its time to live expires at the anchor
      const soon = await session(k, { ...line, billing_cycle_anchor: "2026-01-15T06:00:00Z" })
      const opened = await sessionOf(k, (soon.body as any).data.session_id)
      expect([opened.expires_at, opened.amount]).toEqual(["2026-01-15T06:00:00Z", "0.00"])
      // exactly one interval ahead is a whole first period
      const whole = await session(k, { ...line, billing_cycle_anchor: "2026-02-15T00:00:00Z" })
      expect((await sessionOf(k, (whole.body as any).data.session_id)).amount).toBe("30.00")
    })
  })
}
