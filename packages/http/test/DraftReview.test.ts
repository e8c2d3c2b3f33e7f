/**
 * Drafts a finance team reviews over REST (issue 34, follow-up): a draft edit is bounded (the
 * total an invoice carries, the lines it holds), an `invoice_item` line removed from a draft is
 * pending again, bad removals name their entry and say why — and a refused edit changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"

const card = { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" }

for (const [name, storage] of backends()) {
  describe(`drafts a finance team reviews (${name})`, { timeout: 180_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const fresh = async () => (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
    const clock = (k: string, at: string) =>
      api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: at })
    const subscribe = async (k: string) => {
      const { priceId } = await api.priceOf(k)
      const s = await api.call("POST", "/api/v1/session", k, {
        email: `c${Math.random()}@example.com`,
        line_items: [{ price_id: priceId }]
      })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const id = (s.body as any).data.session_id as string
      const paid = await api.call("POST", `/checkout/${id}/pay`, null, card, { accept: "application/json" })
      expect(paid.status).toBe(200)
      const session = ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session
      return { sub: session.subscription_id as string, customer: session.customer_id as string }
    }
    const invoicesOf = async (k: string, sub: string) =>
      (
        ((await api.call("GET", `/api/v1/invoices?subscription_id=${sub}&limit=100`, k)).body as any).data
          .list as Array<any>
      ).sort((a, b) => a.cycle_index - b.cycle_index)
    const invoice = async (k: string, id: string) =>
      ((await api.call("GET", `/api/v1/invoice/${id}`, k)).body as any).data.invoice
    const itemOf = async (k: string, id: string) =>
      ((await api.call("GET", `/api/v1/invoice_item/${id}`, k)).body as any).data.invoice_item
    const grace = async (k: string, seconds: number) =>
      expect(
        (await api.call("POST", "/api/v1/billing_settings", k, { invoice_draft_grace_seconds: seconds })).status
      ).toBe(200)
    const item = async (k: string, customer: string, sub: string, description: string, unit_amount: string) => {
      const made = await api.call("POST", "/api/v1/invoice_items", k, {
        customer_id: customer,
        subscription_id: sub,
        unit_amount,
        description
      })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      return (made.body as any).data.invoice_item.invoice_item_id as string
    }

    it("an edit past the largest invoice total or the line cap is refused naming the field; nothing changes", async () => {
      const k = await fresh()
      const { sub } = await subscribe(k)
      await grace(k, 3600)
      await clock(k, "2026-02-01T00:00:00Z")
      const draft = (await invoicesOf(k, sub))[1]
      const edit = (body: unknown) => api.call("POST", `/api/v1/invoices/${draft.invoice_id}/edit`, k, body)
      const huge = Array.from({ length: 20 }, (_, n) => ({
        description: `Line ${n}`,
        amount: "100000000.00",
        quantity: 10_000
      }))
      const tooMuch = await edit({ add_lines: huge })
      expect(tooMuch.status, JSON.stringify(tooMuch.body)).toBe(400)
      expect((tooMuch.body as any).data.param).toMatch(/^add_lines/)
      // each line within the bound, their sum past it
      const many = Array.from({ length: 20 }, (_, n) => ({
        description: `Line ${n}`,
        amount: "99999999.00",
        quantity: 100
      }))
      const summed = await edit({ add_lines: many })
      expect([summed.status, (summed.body as any).data?.param], JSON.stringify(summed.body)).toEqual([400, "add_lines"])
      // the line cap: 100 lines a draft
      for (let n = 0; n < 4; n++) {
        const r = await edit({
          add_lines: Array.from({ length: 20 }, (_, m) => ({ description: `L${n}-${m}`, amount: "1.00" }))
        })
        expect(r.status, JSON.stringify(r.body)).toBe(200)
      }
      const before = await invoice(k, draft.invoice_id)
      expect(before.lines.length).toBe(81)
      const past = await edit({
        add_lines: Array.from({ length: 20 }, (_, m) => ({ description: `Over ${m}`, amount: "1.00" }))
      })
      expect([past.status, (past.body as any).data?.param], JSON.stringify(past.body)).toEqual([400, "add_lines"])
      expect(await invoice(k, draft.invoice_id)).toMatchObject({ amount: before.amount, lines: before.lines })
      await clock(k, "2026-02-01T01:00:00Z")
      expect(await invoice(k, draft.invoice_id)).toMatchObject({ status: "paid", amount: before.amount })
    })

    it("removing an invoice item's line gives the item back to pending; bad removals name the entry and say why", async () => {
      const k = await fresh()
      const { sub, customer } = await subscribe(k)
      const first = await item(k, customer, sub, "Onboarding call", "5.00")
      const second = await item(k, customer, sub, "Training", "7.00")
      await grace(k, 3600)
      await clock(k, "2026-02-01T00:00:00Z")
      const draft = (await invoicesOf(k, sub))[1]
      const edit = (body: unknown) => api.call("POST", `/api/v1/invoices/${draft.invoice_id}/edit`, k, body)
      const at = (description: string) => draft.lines.findIndex((l: any) => l.description === description)
      expect(at("Training")).toBeGreaterThan(0)
      for (const [body, param, reason] of [
        [{ remove_lines: [at("Training"), at("Training")] }, "remove_lines[1]", /named twice/],
        [{ remove_lines: [99] }, "remove_lines[0]", /not the position of a line/],
        [{ remove_lines: draft.lines.map((_: unknown, n: number) => n) }, "remove_lines", /at least one line/],
        [{ add_lines: [{ description: "x", amount: "1.005" }] }, "add_lines[0].amount", /USD has 2 decimal places/]
      ] as const) {
        const r = await edit(body)
        expect([r.status, (r.body as any).data?.param], JSON.stringify(body)).toEqual([400, param])
        expect((r.body as any).message, JSON.stringify(r.body)).toMatch(reason)
      }
      expect(await invoice(k, draft.invoice_id)).toMatchObject({ amount: draft.amount, lines: draft.lines })
      expect(await itemOf(k, second)).toMatchObject({ status: "invoiced", invoice_id: draft.invoice_id })
      const removed = await edit({ remove_lines: [at("Training")] })
      expect(removed.status, JSON.stringify(removed.body)).toBe(200)
      const edited = (removed.body as any).data.invoice
      expect(edited.lines.map((l: any) => l.description)).not.toContain("Training")
      expect(Number(edited.amount)).toBeCloseTo(Number(draft.amount) - 7, 2)
      expect(await itemOf(k, second)).toMatchObject({ status: "pending", invoice_id: null })
      expect(await itemOf(k, first)).toMatchObject({ status: "invoiced", invoice_id: draft.invoice_id })
      // finalised as edited; the released item is billed by the next renewal
      await clock(k, "2026-02-01T01:00:00Z")
      expect(await invoice(k, draft.invoice_id)).toMatchObject({ status: "paid", amount: edited.amount })
      await clock(k, "2026-03-01T00:00:00Z")
      const next = (await invoicesOf(k, sub))[2]
      expect(next.lines.map((l: any) => l.description)).toContain("Training")
      expect(await itemOf(k, second)).toMatchObject({ status: "invoiced", invoice_id: next.invoice_id })
    })

    it("a draft shows the collection in force and when it finalises; finalising re-reads the collection; the subscription shows its own", async () => {
      const k = await fresh()
      const { sub } = await subscribe(k)
      const subscription = async () =>
        ((await api.call("GET", `/api/v1/subscription/${sub}`, k)).body as any).data.subscription
      expect(await subscription()).toMatchObject({ collection_method: null, days_until_due: null })
      const sent = await api.call("POST", `/api/v1/subscription/${sub}/collection_method`, k, {
        collection_method: "send_invoice",
        days_until_due: 30
      })
      expect(sent.status, JSON.stringify(sent.body)).toBe(200)
      expect(await subscription()).toMatchObject({ collection_method: "send_invoice", days_until_due: 30 })
      await grace(k, 3600)
      await clock(k, "2026-02-01T00:00:00Z")
      const draft = (await invoicesOf(k, sub))[1]
      expect(draft).toMatchObject({
        status: "draft",
        collection_method: "send_invoice",
        due_date: null,
        automatically_finalizes_at: "2026-02-01T01:00:00Z"
      })
      // changed back before the end of the grace period: finalising charges the card
      const back = await api.call("POST", `/api/v1/subscription/${sub}/collection_method`, k, {
        collection_method: "charge_automatically"
      })
      expect(back.status, JSON.stringify(back.body)).toBe(200)
      expect(await subscription()).toMatchObject({ collection_method: "charge_automatically", days_until_due: null })
      await clock(k, "2026-02-01T01:00:00Z")
      expect(await invoice(k, draft.invoice_id)).toMatchObject({
        status: "paid",
        collection_method: "charge_automatically",
        due_date: null,
        automatically_finalizes_at: null
      })
      // the first invoice, never a draft
      expect((await invoicesOf(k, sub))[0].automatically_finalizes_at).toBeNull()
    })

    it("a credit note is issued, not paid: the status filter tells them apart; unknown or mixed statuses are refused", async () => {
      const k = await fresh()
      const { sub } = await subscribe(k)
      const [first] = await invoicesOf(k, sub)
      expect(first.status).toBe("paid")
      const made = await api.call("POST", `/api/v1/invoices/${first.invoice_id}/credit_notes`, k, {
        amount: "1.00",
        reason: "sorry"
      })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      const note = (made.body as any).data.credit_note
      expect(note.invoice_type).toBe("refund")
      expect((await invoice(k, note.invoice_id)).status).toBe("issued")
      const listed = async (q: string) => {
        const r = await api.call("GET", `/api/v1/invoices?subscription_id=${sub}&${q}`, k)
        expect(r.status, JSON.stringify(r.body)).toBe(200)
        return ((r.body as any).data.list as Array<any>).map((i) => i.invoice_id).sort()
      }
      expect(await listed("status=paid")).toEqual([first.invoice_id])
      expect(await listed("status=issued")).toEqual([note.invoice_id])
      expect(await listed("status=open,draft")).toEqual([])
      expect((await listed("status=paid,open")).length).toBe(1)
      // the portal's history: the credit note shown as one, not as a paid invoice
      const { customer } = { customer: first.customer_id as string }
      const auth = await api.call("POST", "/api/v1/customer-portal/auth", k, { customer_id: customer })
      expect(auth.status, JSON.stringify(auth.body)).toBe(200)
      const home = await api.handler(
        new Request(`http://localhost${new URL((auth.body as any).data.portal_session.url).pathname}`)
      )
      const rows = ((await home.text()).match(/<table id="invoices">[\s\S]*?<\/table>/)?.[0] ?? "").split("<tr>")
      const noteRow = rows.find((r) => r.includes(note.number ?? note.invoice_id))
      expect(noteRow, rows.join("\n")).toContain("Credit note")
      expect(noteRow).not.toContain("Paid")
      for (const q of ["status=settled", "status=void,paid"]) {
        const r = await api.call("GET", `/api/v1/invoices?${q}`, k)
        expect([r.status, (r.body as any).data?.param], q).toEqual([400, "status"])
      }
    })

    it("a past-due subscription made active by voiding its invoice emits what a recovery by payment emits: no subscription event", async () => {
      const k = await fresh()
      // pays the checkout, declines every renewal (soft: retried on the schedule)
      const { priceId } = await api.priceOf(k)
      const s = await api.call("POST", "/api/v1/session", k, {
        payer_id: `p-${Math.random()}`,
        line_items: [{ price_id: priceId }]
      })
      const id = (s.body as any).data.session_id as string
      await api.call(
        "POST",
        `/checkout/${id}/pay`,
        null,
        { ...card, card_number: "4000000000000341" },
        { accept: "application/json" }
      )
      const sub = ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session
        .subscription_id as string
      const subEvents = async () =>
        (
          ((await api.call("GET", `/api/v2/webhook/events?business_ids=${sub}&limit=100`, k)).body as any).data
            .list as Array<any>
        )
          .map((e) => e.event_type as string)
          .filter((t) => t.startsWith("v2.subscription."))
          .sort()
      await clock(k, "2026-02-01T12:00:00Z")
      const before = await subEvents()
      expect(before).toContain("v2.subscription.past_due")
      const [, retrying] = await invoicesOf(k, sub)
      expect((await api.call("POST", `/api/v1/invoices/${retrying.invoice_id}/void`, k)).status).toBe(200)
      expect(((await api.call("GET", `/api/v1/subscription/${sub}`, k)).body as any).data.subscription.status).toBe(
        "active"
      )
      // retry_succeeded (a payment) and latest_invoice_closed (void, write-off, credit in full) both emit none
      expect(await subEvents()).toEqual(before)
    })
  })
}
