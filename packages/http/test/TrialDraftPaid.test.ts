/**
 * A trial's first renewal written as a draft (grace period), finalised by the worker or on
 * request: paid, the trial ends (`active`), as a renewal charged at once does; declined, dunning
 * starts (`past_due`).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"
import { changeHelpers } from "./fixtures/changes.js"

for (const [name, storage] of backends()) {
  describe(`trial-end drafts (${name})`, { timeout: 180_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())
    const { ok, fresh, advance, subscribe, invoicesOf, subOf } = changeHelpers(api)

    for (const how of ["worker", "request"] as const)
      it(`the trial's end as a draft, finalised by the ${how} and paid: the subscription is active`, async () => {
        const k = await fresh()
        const trialing = await api.priceOf(k, {
          has_trial: true,
          trial_period: { trial_period_unit: "day", trial_period_count: 7 }
        })
        const { id: sub } = await subscribe(k, trialing.priceId)
        ok(await api.call("POST", "/api/v1/billing_settings", k, { invoice_draft_grace_seconds: 3600 }))
        ok(await advance(k, "2026-01-08T00:00:00Z"))
        const draft = (await invoicesOf(k, sub)).find((i: any) => i.invoice_type === "renewal")
        expect(draft.biz_status).toBe("draft")
        if (how === "worker") ok(await advance(k, "2026-01-08T02:00:00Z"))
        else ok(await api.call("POST", `/api/v1/invoices/${draft.invoice_id}/finalize`, k))
        const paid = (await invoicesOf(k, sub)).find((i: any) => i.invoice_id === draft.invoice_id)
        expect(paid.biz_status).toBe("success")
        expect((await subOf(k, sub)).status).toBe("active")
      })
    it("the trial's end as a draft, finalised and declined: dunning starts (past_due), the trial is over", async () => {
      const k = await fresh()
      const { priceId } = await api.priceOf(k, {
        has_trial: true,
        trial_period: { trial_period_unit: "day", trial_period_count: 7 }
      })
      const s = ok(
        await api.call("POST", "/api/v1/session", k, {
          payer_id: `p-${Math.random()}`,
          line_items: [{ price_id: priceId }]
        })
      )
      ok(
        await api.call(
          "POST",
          `/checkout/${s.session_id}/pay`,
          null,
          { card_number: "4000000000000341", exp_month: "12", exp_year: "2030", cvc: "123" },
          { accept: "application/json" }
        )
      )
      const sub = ok(await api.call("GET", `/api/v1/session/${s.session_id}`, k)).session.subscription_id as string
      ok(await api.call("POST", "/api/v1/billing_settings", k, { invoice_draft_grace_seconds: 3600 }))
      ok(await advance(k, "2026-01-08T00:00:00Z"))
      const draft = (await invoicesOf(k, sub)).find((i: any) => i.invoice_type === "renewal")
      ok(await advance(k, "2026-01-08T02:00:00Z"))
      const after = (await invoicesOf(k, sub)).find((i: any) => i.invoice_id === draft.invoice_id)
      expect(after.biz_status).toBe("retrying")
      expect((await subOf(k, sub)).status).toBe("past_due")
    })
  })
}
