/**
 * Issue 35 (6): prepaid credits over REST. A grant is credit no subscription holds: the
 * customer's renewal applies it before charging, earliest-expiring grant first, and each grant's
 * `remaining` follows; expiry and a void remove only what remains; a top-up is granted only once
 * its charge succeeded; an automatic top-up fires once when a renewal leaves the balance under its
 * threshold. After each step: balance = Σ ledger entries = Σ grants' remaining + other credit.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { CustomerBalance, SharedCredit, Store } from "@recur/core"
import { Effect, Exit } from "effect"
import { backends, serve } from "./client.js"
import { changeHelpers } from "./fixtures/changes.js"

const cents = (s: string) => Math.round(Number(s) * 100)

for (const [name, storage] of backends()) {
  describe(`prepaid credits (${name})`, { timeout: 240_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const { ok, fresh, advance, invoicesOf, subOf, subscribe } = changeHelpers(api)

    const setup = async () => {
      const k = await fresh("credit_balance")
      const pro = await api.priceOf(k)
      const sub = (await subscribe(k, pro.priceId)).id
      const customer = (await subOf(k, sub)).customer_id as string
      return { k, sub, customer }
    }
    const grant = async (k: string, customer: string, amount: string, expires_at?: string) =>
      ok(
        await api.call("POST", `/api/v1/customers/${customer}/credit_grants`, k, {
          amount,
          currency: "USD",
          reason: "prepaid",
          category: "promotional",
          ...(expires_at !== undefined ? { expires_at } : {})
        })
      ).credit_grant
    const grantOf = async (k: string, id: string) =>
      ok(await api.call("GET", `/api/v1/credit_grants/${id}`, k)).credit_grant
    const grantsOf = async (k: string, customer: string) =>
      ok(await api.call("GET", `/api/v1/customers/${customer}/credit_grants?limit=100`, k)).list as Array<any>
    const ledger = async (k: string, customer: string) =>
      (ok(await api.call("GET", `/api/v1/customers/${customer}/balance_transactions?limit=100`, k)).list as Array<any>)
        .slice()
        .reverse()
    /** balance = Σ entries = Σ active grants' remaining + the subscriptions' shares + other credit (`other`). */
    const invariant = async (k: string, customer: string, subs: ReadonlyArray<string>, other = 0) => {
      const entries = await ledger(k, customer)
      let sum = 0
      for (const e of entries) {
        sum += cents(e.amount)
        expect(cents(e.ending_balance)).toBe(sum)
      }
      const usd = (ok(await api.call("GET", `/api/v1/customers/${customer}/balance`, k)).balance as Array<any>).find(
        (b) => b.currency === "USD"
      )
      expect(usd === undefined ? 0 : cents(usd.amount)).toBe(sum)
      let held = 0
      for (const id of subs) held += cents((await subOf(k, id)).credit_balance)
      const grants = await grantsOf(k, customer)
      const remaining = grants.reduce((a, g) => a + cents(g.remaining), 0)
      for (const g of grants) if (g.status !== "active") expect(g.remaining).toBe("0.00")
      expect(sum).toBe(remaining + held + other)
      return { entries, sum, remaining }
    }

    it("a grant expired by the renewal's instant is never applied, nor shown by the upcoming invoice (even at its own expires_at)", async () => {
      const { k, sub, customer } = await setup()
      const { upcoming } = changeHelpers(api)
      // expires exactly when the subscription renews (Feb 1), and one before it (Jan 20)
      await grant(k, customer, "10.00", "2026-02-01T00:00:00Z")
      await grant(k, customer, "5.00", "2026-01-20T00:00:00Z")
      const shown = await upcoming(k, sub)
      expect(shown.credit_applied).toBe("0.00")
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      const renewal = (await invoicesOf(k, sub)).find((i: any) => i.invoice_type === "renewal")
      expect([renewal.credit_applied, renewal.amount]).toEqual(["0.00", shown.amount])
      expect((await grantsOf(k, customer)).map((g: any) => [g.status, g.remaining]).sort()).toEqual([
        ["expired", "0.00"],
        ["expired", "0.00"]
      ])
    })

    it("a renewal consumes grants before charging, earliest-expiring first; each is depleted in turn", async () => {
      const { k, sub, customer } = await setup()
      const later = await grant(k, customer, "20.00")
      const sooner = await grant(k, customer, "15.00", "2026-03-15T00:00:00Z")
      expect([later.status, later.remaining, later.category, later.source]).toEqual([
        "active",
        "20.00",
        "promotional",
        "grant"
      ])
      expect((await invariant(k, customer, [sub])).sum).toBe(3500)
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      const renewal = (await invoicesOf(k, sub)).find((i: any) => i.invoice_type === "renewal")
      expect([renewal.credit_applied, renewal.amount]).toEqual(["30.00", "0.00"])
      expect([
        (await grantOf(k, sooner.credit_grant_id)).status,
        (await grantOf(k, sooner.credit_grant_id)).remaining
      ]).toEqual(["depleted", "0.00"])
      expect((await grantOf(k, later.credit_grant_id)).remaining).toBe("5.00")
      expect((await invariant(k, customer, [sub])).sum).toBe(500)
      ok(await advance(k, "2026-03-01T00:00:00Z"))
      const second = (await invoicesOf(k, sub)).filter((i: any) => i.invoice_type === "renewal")[1]
      expect([second.credit_applied, second.amount]).toEqual(["5.00", "25.00"])
      expect((await grantOf(k, later.credit_grant_id)).status).toBe("depleted")
      const { entries } = await invariant(k, customer, [sub])
      expect(entries.map((e) => e.source_type)).toEqual([
        "credit_grant",
        "credit_grant",
        "applied_to_invoice",
        "applied_to_invoice"
      ])
    })

    it("expiry removes only what remains (the sandbox clock moved past expires_at); a void removes the rest of another", async () => {
      const { k, sub, customer } = await setup()
      const g = await grant(k, customer, "40.00", "2026-02-15T00:00:00Z")
      const v = await grant(k, customer, "12.00")
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      // earliest-expiring first: the renewal's 30.00 all from g
      expect((await grantOf(k, g.credit_grant_id)).remaining).toBe("10.00")
      expect((await grantOf(k, v.credit_grant_id)).remaining).toBe("12.00")
      ok(await advance(k, "2026-02-16T00:00:00Z"))
      const expired = await grantOf(k, g.credit_grant_id)
      expect([expired.status, expired.remaining, expired.amount]).toEqual(["expired", "0.00", "40.00"])
      expect((await invariant(k, customer, [sub])).sum).toBe(1200)
      const voided = ok(await api.call("POST", `/api/v1/credit_grants/${v.credit_grant_id}/void`, k)).credit_grant
      expect([voided.status, voided.remaining]).toEqual(["voided", "0.00"])
      const again = await api.call("POST", `/api/v1/credit_grants/${v.credit_grant_id}/void`, k)
      expect(again.status).toBe(409)
      const { entries, sum } = await invariant(k, customer, [sub])
      expect(sum).toBe(0)
      expect(entries.slice(-2).map((e) => [e.source_type, e.amount, e.source_id])).toEqual([
        ["credit_grant_expired", "-10.00", g.credit_grant_id],
        ["credit_grant_voided", "-12.00", v.credit_grant_id]
      ])
      // the next renewal is charged in full
      ok(await advance(k, "2026-03-01T00:00:00Z"))
      const last = (await invoicesOf(k, sub)).filter((i: any) => i.invoice_type === "renewal")[1]
      expect([last.credit_applied, last.amount]).toEqual(["0.00", "30.00"])
    })

    it("the portal shows the remaining credits with their expiry, in the customer's language", async () => {
      const { k, customer } = await setup()
      const portal = async (locale: string) => {
        const r = await api.call("POST", "/api/v1/customer-portal/auth", k, { customer_id: customer, locale })
        expect(r.status, JSON.stringify(r.body)).toBe(200)
        const url = new URL((r.body as any).data.portal_session.url as string)
        return (await api.handler(new Request(`http://localhost${url.pathname}`))).text()
      }
      expect(await portal("en-US")).not.toContain('id="credits"')
      await grant(k, customer, "20.00")
      await grant(k, customer, "7.50", "2026-03-15T00:00:00Z")
      const section = (html: string) => html.match(/<section class="balance" id="credits">.*?<\/section>/)?.[0] ?? ""
      const en = section(await portal("en-US"))
      expect(en).toContain("Prepaid credits")
      // earliest-expiring first, as invoices use them
      expect(en.indexOf("$7.50")).toBeLessThan(en.indexOf("$20.00"))
      expect(en).toContain("Expires on Mar 15, 2026")
      expect(en).toContain("Never expires")
      const de = section(await portal("de-DE"))
      expect(de).toContain("Verfällt nicht")
      expect(de).toContain("Guthaben")
    })

    it("bad grants are refused with the field named, nothing written", async () => {
      const { k, customer } = await setup()
      const refused = async (body: Record<string, unknown>) => {
        const r = await api.call("POST", `/api/v1/customers/${customer}/credit_grants`, k, body)
        return [r.status, (r.body as any).data?.param]
      }
      const base = { amount: "5.00", currency: "USD", reason: "x", category: "paid" }
      expect(await refused({ ...base, amount: "-5.00" })).toEqual([400, "amount"])
      expect(await refused({ ...base, amount: "0" })).toEqual([400, "amount"])
      expect(await refused({ ...base, currency: "XXX" })).toEqual([400, "currency"])
      expect(await refused({ ...base, category: "gift" })).toEqual([400, "category"])
      expect(await refused({ ...base, reason: "" })).toEqual([400, "reason"])
      expect(await refused({ ...base, expires_at: "2025-01-01T00:00:00Z" })).toEqual([400, "expires_at"])
      expect(await refused({ ...base, expires_at: "soon" })).toEqual([400, "expires_at"])
      expect((await api.call("GET", "/api/v1/credit_grants/cgr_nope", k)).status).toBe(404)
      expect(await grantsOf(k, customer)).toEqual([])
    })

    it("a top-up is granted only once its charge succeeded: a declined card grants nothing", async () => {
      const { k, sub, customer } = await setup()
      const declined = await api.call("POST", `/api/v1/customers/${customer}/credit_top_ups`, k, {
        amount: "50.00",
        currency: "USD",
        card: { number: "4000000000000002", exp_month: 12, exp_year: 2030, cvc: "123" }
      })
      expect([declined.status, (declined.body as any).code]).toEqual([400, "invalid_request_error"])
      expect(await grantsOf(k, customer)).toEqual([])
      expect((await invariant(k, customer, [sub])).sum).toBe(0)
      // the card on file, off session; the same Request-Id answers the same grant, charged once
      const headers = { "request-id": `topup-${Math.random()}` }
      const first = ok(
        await api.call(
          "POST",
          `/api/v1/customers/${customer}/credit_top_ups`,
          k,
          { amount: "50.00", currency: "USD" },
          headers
        )
      ).credit_grant
      const retry = ok(
        await api.call(
          "POST",
          `/api/v1/customers/${customer}/credit_top_ups`,
          k,
          { amount: "50.00", currency: "USD" },
          headers
        )
      ).credit_grant
      expect(retry.credit_grant_id).toBe(first.credit_grant_id)
      expect([first.source, first.category, first.remaining, first.expires_at]).toEqual([
        "top_up",
        "paid",
        "50.00",
        null
      ])
      const { entries, sum } = await invariant(k, customer, [sub])
      expect(sum).toBe(5000)
      expect(entries.map((e) => e.source_type)).toEqual(["top_up"])
    })

    it("an automatic top-up fires once when a renewal leaves the balance under its threshold", async () => {
      const { k, sub, customer } = await setup()
      await grant(k, customer, "35.00")
      const set = ok(
        await api.call("POST", `/api/v1/customers/${customer}/auto_top_up`, k, {
          enabled: true,
          threshold: "10.00",
          amount: "20.00",
          currency: "USD"
        })
      ).auto_top_up
      expect([set.enabled, set.threshold, set.amount, set.in_flight]).toEqual([true, "10.00", "20.00", null])
      ok(await advance(k, "2026-02-01T00:00:00Z"))
      // 35.00 − 30.00 = 5.00 < 10.00: one top-up of 20.00
      const topUps = () => grantsOf(k, customer).then((gs) => gs.filter((g) => g.source === "top_up"))
      expect((await topUps()).map((g) => g.amount)).toEqual(["20.00"])
      expect((await invariant(k, customer, [sub])).sum).toBe(2500)
      // the clock moving on (the worker running again) charges nothing more for that cause
      ok(await advance(k, "2026-02-20T00:00:00Z"))
      expect((await topUps()).length).toBe(1)
      // the next renewal applies 25.00: the balance (0) is under the threshold again, a new top-up
      ok(await advance(k, "2026-03-01T00:00:00Z"))
      expect((await topUps()).length).toBe(2)
      expect((await invariant(k, customer, [sub])).sum).toBe(2000)
    })

    if (name === "PostgreSQL")
      it("two invoices applying one grant's credit at once never consume more than it holds", async () => {
        const k = await fresh("credit_balance")
        const customer = ok(
          await api.call("POST", "/api/v1/front/customer/create", k, { payer_id: `c-${Math.random()}` })
        ).customer_id as string
        const g = await grant(k, customer, "10.00")
        const merchantId = g.merchant_id as string
        // what an invoice of the customer does when it applies credit no subscription holds
        const apply = (invoice: string) =>
          Effect.gen(function* () {
            const storage = yield* Store.Storage
            return yield* storage.withTransaction(
              Effect.gen(function* () {
                const at = Date.parse("2026-01-01T00:00:00Z")
                const free = yield* SharedCredit.available(storage, {
                  merchantId,
                  customerId: customer,
                  currency: "USD",
                  holder: null,
                  at
                })
                const used = free.amount < 700n ? free.amount : 700n
                yield* SharedCredit.take(storage, merchantId, free, used)
                yield* CustomerBalance.record(storage, {
                  merchantId,
                  customerId: customer,
                  currency: "USD",
                  amount: -used,
                  sourceType: "applied_to_invoice",
                  sourceId: invoice,
                  at
                })
                return used
              })
            )
          })
        const results = await api.runtime.runPromise(
          Effect.all([Effect.exit(apply("inv_a")), Effect.exit(apply("inv_b"))], { concurrency: 2 })
        )
        const applied = results.reduce((a, r) => a + (Exit.isSuccess(r) ? Number(r.value) : 0), 0)
        expect(applied).toBeGreaterThan(0)
        expect(applied).toBeLessThanOrEqual(1000)
        const after = await grantOf(k, g.credit_grant_id)
        expect(cents(after.remaining)).toBe(1000 - applied)
        expect((await invariant(k, customer, [])).sum).toBe(1000 - applied)
      })
  })
}
