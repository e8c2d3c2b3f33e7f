/**
 * Invoice drafts, void and write-off over REST (issue 34, items 1 and 2): a renewal's invoice in
 * the merchant's grace period is a draft (no number, no charge) finalised by the worker at the end
 * of it, taking its number then (gapless across a voided draft); finalisations racing make one
 * number and one charge; void and mark_uncollectible refuse what they may not touch, changing
 * nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"

const card = { exp_month: "12", exp_year: "2030", cvc: "123" }

for (const [name, storage] of backends()) {
  describe(`invoice drafts (${name})`, { timeout: 180_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const fresh = async () => (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
    const subscribe = async (k: string, number = "4242424242424242", given?: { readonly priceId: string }) => {
      const { priceId } = given ?? (await api.priceOf(k))
      const s = await api.call("POST", "/api/v1/session", k, {
        payer_id: `p-${Math.random()}`,
        line_items: [{ price_id: priceId }]
      })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const id = (s.body as any).data.session_id as string
      const paid = await api.call(
        "POST",
        `/checkout/${id}/pay`,
        null,
        { card_number: number, ...card },
        { accept: "application/json" }
      )
      expect(paid.status).toBe(200)
      return ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session.subscription_id as string
    }
    const invoices = async (k: string) =>
      (((await api.call("GET", "/api/v1/invoices?limit=100", k)).body as any).data.list as Array<any>).sort(
        (a, b) => a.cycle_index - b.cycle_index
      )
    const trades = async (k: string) =>
      ((await api.call("GET", "/api/v1/trades?limit=100", k)).body as any).data.list as Array<any>
    const advance = (k: string, at: string) =>
      api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: at })
    const grace = async (k: string, seconds: number) => {
      const r = await api.call("POST", "/api/v1/billing_settings", k, { invoice_draft_grace_seconds: seconds })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      expect((r.body as any).data.invoice_draft_grace_seconds).toBe(seconds)
    }

    it("a renewal in a grace period is a draft; voided it takes no number; the next is finalised by the worker at grace end", async () => {
      const k = await fresh()
      const sub = await subscribe(k)
      await grace(k, 3600)
      const upcoming = ((await api.call("GET", `/api/v1/subscription/${sub}/upcoming_invoice`, k)).body as any).data
        .upcoming_invoice
      await advance(k, "2026-02-01T00:00:00Z")
      const [, draft] = await invoices(k)
      expect(draft).toMatchObject({ biz_status: "draft", status: "draft", number: null, trade_id: null })
      // the preview is what the draft holds: its lines, tax and amount
      expect(draft).toMatchObject({
        amount: upcoming.amount,
        subtotal: upcoming.subtotal,
        tax_amount: upcoming.tax_amount,
        lines: upcoming.lines,
        cycle_index: upcoming.cycle_index
      })
      expect((await trades(k)).length).toBe(1)
      const voided = await api.call("POST", `/api/v1/invoices/${draft.invoice_id}/void`, k)
      expect(voided.status, JSON.stringify(voided.body)).toBe(200)
      expect((voided.body as any).data.invoice).toMatchObject({ biz_status: "void", status: "void", number: null })
      // the voided draft's finalisation is gone: at grace end nothing is charged
      await advance(k, "2026-02-01T02:00:00Z")
      expect((await trades(k)).length).toBe(1)
      await advance(k, "2026-03-01T00:00:00Z")
      const next = (await invoices(k))[2]
      expect(next).toMatchObject({ biz_status: "draft", number: null })
      await advance(k, "2026-03-01T01:00:00Z")
      const finalised = (await invoices(k))[2]
      expect(finalised).toMatchObject({ biz_status: "success", status: "paid", number: "INV-000002" })
      expect(finalised.trade_id).not.toBeNull()
      expect((await trades(k)).length).toBe(2)
    })

    it("a draft edited — a line added, a line removed, a discount applied — is finalised as edited; bad edits change nothing", async () => {
      const k = await fresh()
      await subscribe(k)
      await grace(k, 3600)
      await advance(k, "2026-02-01T00:00:00Z")
      const draft = (await invoices(k))[1]
      const edit = (body: unknown) => api.call("POST", `/api/v1/invoices/${draft.invoice_id}/edit`, k, body)
      const added = await edit({ add_lines: [{ description: "Setup", amount: "12.50", quantity: 2 }] })
      expect(added.status, JSON.stringify(added.body)).toBe(200)
      const withSetup = (added.body as any).data.invoice
      expect(withSetup.lines.map((l: any) => [l.kind, l.description, l.quantity, l.amount])).toContainEqual([
        "one_time",
        "Setup",
        "2",
        "25.00"
      ])
      expect(Number(withSetup.amount)).toBeCloseTo(Number(draft.amount) + 25, 2)
      for (const [body, param] of [
        [{ add_lines: [{ description: "", amount: "1.00" }] }, "add_lines[0].description"],
        [{ add_lines: [{ description: "x", amount: "-1.00" }] }, "add_lines[0].amount"],
        [{ add_lines: [{ description: "x", amount: "1.00", quantity: 0 }] }, "add_lines[0].quantity"],
        [{ remove_lines: [99] }, "remove_lines[0]"],
        [{ discount_id: "dsc_unknown" }, "discount_id"]
      ] as const) {
        const r = await edit(body)
        expect([r.status, (r.body as any).data?.param], JSON.stringify(body)).toEqual([400, param])
      }
      expect((await invoices(k))[1]).toMatchObject({ amount: withSetup.amount, lines: withSetup.lines })
      // the subscription's own line removed: the setup line alone
      const removed = await edit({ remove_lines: [0] })
      expect(removed.status, JSON.stringify(removed.body)).toBe(200)
      expect((removed.body as any).data.invoice.lines.map((l: any) => l.description)).toEqual(["Setup"])
      const discount = await api.call("POST", "/api/v1/discounts", k, {
        name: "Ten",
        code: "TEN",
        discount_type: "percentage",
        percent_off: 10,
        duration: "once"
      })
      expect(discount.status, JSON.stringify(discount.body)).toBe(200)
      const discounted = await edit({ discount_id: (discount.body as any).data.discount.discount_id })
      expect(discounted.status, JSON.stringify(discounted.body)).toBe(200)
      const final = (discounted.body as any).data.invoice
      expect(final).toMatchObject({ subtotal: "25.00", amount: "22.50" })
      expect(final.lines.map((l: any) => [l.kind, l.amount])).toEqual([
        ["one_time", "25.00"],
        ["discount", "-2.50"]
      ])
      await advance(k, "2026-02-01T01:00:00Z")
      const issued = (await invoices(k))[1]
      expect(issued).toMatchObject({ status: "paid", number: "INV-000002", amount: "22.50", lines: final.lines })
      const charged = (await trades(k)).find((t) => t.trade_id === issued.trade_id)
      expect(charged.amount).toBe("22.50")
      // issued: never edited again
      const late = await edit({ add_lines: [{ description: "Late", amount: "1.00" }] })
      expect([late.status, (late.body as any).code]).toEqual([409, "state_conflict"])
    })

    it("a voided draft gives back the credit it applied", async () => {
      const k = await fresh()
      expect(
        (await api.call("POST", "/api/v1/billing_settings", k, { proration_credit: "credit_balance" })).status
      ).toBe(200)
      const base = await api.priceOf(k)
      const sub = await subscribe(k, undefined, base)
      const subscription = async () =>
        ((await api.call("GET", `/api/v1/subscription/${sub}`, k)).body as any).data.subscription
      const cheaper = await api.call("POST", "/api/v1/prices", k, {
        name: "Small",
        product_id: base.productId,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "10.00" }
      })
      expect(cheaper.status, JSON.stringify(cheaper.body)).toBe(200)
      await advance(k, "2026-01-16T00:00:00Z")
      const down = await api.call("POST", `/api/v1/subscription/${sub}`, k, {
        price_id: (cheaper.body as any).data.price_id,
        effective_type: "immediate",
        proration: "always_invoice"
      })
      expect(down.status, JSON.stringify(down.body)).toBe(200)
      const credit = (await subscription()).credit_balance as string
      expect(Number(credit)).toBeGreaterThan(10)
      await grace(k, 3600)
      await advance(k, "2026-02-01T00:00:00Z")
      const draft = (await invoices(k)).find((i) => i.biz_status === "draft")
      expect(draft).toMatchObject({ credit_applied: "10.00", amount: "0.00" })
      expect((await subscription()).credit_balance).toBe((Number(credit) - 10).toFixed(2))
      expect((await api.call("POST", `/api/v1/invoices/${draft.invoice_id}/void`, k)).status).toBe(200)
      expect((await subscription()).credit_balance).toBe(credit)
    })

    it("finalize requests racing: one number, one charge; the others 409; the worker then does nothing", async () => {
      const k = await fresh()
      await subscribe(k)
      await grace(k, 3600)
      await advance(k, "2026-02-01T00:00:00Z")
      const draft = (await invoices(k))[1]
      const answers = await Promise.all(
        Array.from({ length: 4 }, () => api.call("POST", `/api/v1/invoices/${draft.invoice_id}/finalize`, k))
      )
      const statuses = answers.map((r) => r.status).sort()
      expect(statuses.filter((s) => s === 200).length, JSON.stringify(answers.map((a) => a.body))).toBe(1)
      expect(statuses.every((s) => s === 200 || s === 409)).toBe(true)
      await advance(k, "2026-02-01T02:00:00Z")
      const [, issued] = await invoices(k)
      expect(issued).toMatchObject({ biz_status: "success", status: "paid", number: "INV-000002" })
      expect((await trades(k)).length).toBe(2)
    })

    const statusOf = async (k: string, sub: string) =>
      ((await api.call("GET", `/api/v1/subscription/${sub}`, k)).body as any).data.subscription.status as string

    it("voiding a past-due renewal: nothing owed, dunning stops, the subscription is active again, the page says VOID", async () => {
      const k = await fresh()
      // pays the checkout, declines every renewal (soft: retried on the schedule)
      const sub = await subscribe(k, "4000000000000341")
      await advance(k, "2026-02-01T12:00:00Z")
      expect(await statusOf(k, sub)).toBe("past_due")
      const [, retrying] = await invoices(k)
      expect(retrying).toMatchObject({ biz_status: "retrying", status: "open", number: "INV-000002" })
      const r = await api.call("POST", `/api/v1/invoices/${retrying.invoice_id}/void`, k)
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      expect((r.body as any).data.invoice).toMatchObject({ biz_status: "void", status: "void", number: "INV-000002" })
      expect(await statusOf(k, sub)).toBe("active")
      const attempts = (await trades(k)).length
      // no retry runs any more: the retry days pass without a charge
      await advance(k, "2026-02-09T12:00:00Z")
      expect((await trades(k)).length).toBe(attempts)
      expect(await statusOf(k, sub)).toBe("active")
      const page = await api.handler(new Request(`http://localhost${new URL(retrying.hosted_invoice_url).pathname}`))
      expect(await page.text()).toContain("VOID")
      // voided is final: no write-off, no second void
      for (const action of ["void", "mark_uncollectible"])
        expect((await api.call("POST", `/api/v1/invoices/${retrying.invoice_id}/${action}`, k)).status).toBe(409)
    })

    it("marking a past-due renewal uncollectible: still owed, dunning stops, the subscription is active again", async () => {
      const k = await fresh()
      const sub = await subscribe(k, "4000000000000341")
      await advance(k, "2026-02-01T12:00:00Z")
      const [, retrying] = await invoices(k)
      const r = await api.call("POST", `/api/v1/invoices/${retrying.invoice_id}/mark_uncollectible`, k)
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      expect((r.body as any).data.invoice).toMatchObject({
        biz_status: "uncollectible",
        status: "uncollectible",
        number: "INV-000002",
        amount: retrying.amount
      })
      expect(await statusOf(k, sub)).toBe("active")
      const attempts = (await trades(k)).length
      await advance(k, "2026-02-09T12:00:00Z")
      expect((await trades(k)).length).toBe(attempts)
      // an uncollectible invoice can still be voided
      const voided = await api.call("POST", `/api/v1/invoices/${retrying.invoice_id}/void`, k)
      expect((voided.body as any).data.invoice.status).toBe("void")
    })

    it("refusals change nothing: a paid invoice is not voided, written off or finalised; bad settings refused", async () => {
      const k = await fresh()
      await subscribe(k)
      const [paid] = await invoices(k)
      for (const action of ["void", "mark_uncollectible", "finalize"]) {
        const r = await api.call("POST", `/api/v1/invoices/${paid.invoice_id}/${action}`, k)
        expect([r.status, (r.body as any).code], action).toEqual([409, "state_conflict"])
      }
      const missing = await api.call("POST", "/api/v1/invoices/inv_00000000000000000000000000/void", k)
      expect(missing.status).toBe(404)
      expect((await invoices(k))[0]).toEqual(paid)
      for (const bad of [-1, 1.5, 30 * 86_400 + 1]) {
        const r = await api.call("POST", "/api/v1/billing_settings", k, { invoice_draft_grace_seconds: bad })
        expect([r.status, (r.body as any).data?.param]).toEqual([400, "invoice_draft_grace_seconds"])
      }
      const settings = (await api.call("GET", "/api/v1/billing_settings", k)).body as any
      expect(settings.data.invoice_draft_grace_seconds).toBe(0)
    })
  })
}
