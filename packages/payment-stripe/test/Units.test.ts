import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Fake from "./fake/StripeFake.js"
import * as Harness from "./harness.js"

// Issue 30, items 6 and 7: amounts in Stripe's units (ISK with two decimals, three-decimal
// currencies ending in 0, JPY as it is), a free trial saving the card with a SetupIntent, and a
// charge under Stripe's minimum carried to the next invoice — through REST, with the Stripe
// adapter on the local fake (which refuses what Stripe refuses), on PGlite and PostgreSQL.

const SECRET = "whsec_unitslocalfakesecret"

/** The engine with each merchant's own Stripe account (the fake). */
const serve = Harness.perMerchant

for (const [name, storage] of Harness.storages) {
  describe(`amounts in Stripe's units (${name})`, { timeout: 180_000 }, () => {
    let fake: Fake.StripeFake
    let api: ReturnType<typeof serve>
    beforeAll(async () => {
      fake = await Fake.start()
      api = serve(storage(), fake)
    }, 120_000)
    afterAll(async () => {
      await api.dispose()
      await fake.close()
    })

    /** A merchant of `currency` on the sandbox clock of 2026-01-01, and calls with its key. */
    const merchant = (currency: string) => Harness.stripeMerchant(api, fake, currency, SECRET)
    const intentsOf = (trade: string) =>
      ([...fake.intents.values()] as Array<any>).filter((i) => i.metadata.recur_trade_id === trade)

    it("ISK: a plan of 4,990 kr. is charged 499000 (two decimals at Stripe) at checkout, on the page and at renewal; refunds and disputes convert too", async () => {
      const m = await merchant("ISK")
      const { page, sub, trade } = await m.checkout(await m.price("4990"))
      // the Payment Element is given Stripe's units too
      expect(page).toContain('"amount":499000')
      expect(intentsOf(trade).map((i) => [i.amount, i.currency, i.status])).toEqual([[499000, "isk", "succeeded"]])
      // a dispute of the whole charge: Stripe's 499000 is Recur's 4,990 kr.
      // (not a fraud dispute: those hold the card's renewals by default)
      await m.hook(
        "charge.dispute.created",
        fake.dispute(intentsOf(trade)[0].id, "needs_response", undefined, { reason: "product_not_received" })
      )
      expect((await m.ok("GET", `/api/v1/trade/${trade}`)).trade.dispute).toMatchObject({
        amount: "4990",
        currency: "ISK"
      })
      await m.advance("2026-02-01T01:00:00Z")
      const renewal = (await m.invoices(sub)).find((i) => i.cycle_index === 1)
      expect([renewal.amount, renewal.biz_status]).toEqual(["4990", "success"])
      expect(intentsOf(renewal.trade_id).map((i) => i.amount)).toEqual([499000])
      // a partial refund of 990 kr. is 99000 at Stripe
      const refund = await m.ok("POST", "/api/v1/refund", {
        trade_id: renewal.trade_id,
        amount: "990",
        reason: "goodwill"
      })
      expect(refund.refund_status).toBe("succeeded")
      expect(([...fake.refunds.values()] as Array<any>).at(-1).amount).toBe(99000)
      expect(fake.violations).toEqual([])
    })

    it("JPY: a plan of ¥3,000 is charged 3000", async () => {
      const m = await merchant("JPY")
      const { page, trade } = await m.checkout(await m.price("3000"))
      expect(page).toContain('"amount":3000,')
      expect(intentsOf(trade).map((i) => [i.amount, i.currency, i.status])).toEqual([[3000, "jpy", "succeeded"]])
      expect(fake.violations).toEqual([])
    })

    it("MGA: zero-decimal at Stripe though Recur keeps one decimal — a plan of 5,000.0 Ar is charged 5000, not 50000", async () => {
      const m = await merchant("MGA")
      const { page, trade } = await m.checkout(await m.price("5000.0"))
      expect(page).toContain('"amount":5000,')
      expect(intentsOf(trade).map((i) => [i.amount, i.currency, i.status])).toEqual([[5000, "mga", "succeeded"]])
      expect(fake.violations).toEqual([])
    })

    it("KWD: a prorated upgrade of x.xx5 KWD is sent rounded down to a multiple of 10 fils and paid, not dunned", async () => {
      const m = await merchant("KWD")
      const basic = await m.price("10.000")
      const pro = await m.price("15.000")
      const { sub } = await m.checkout(basic)
      // 2026-01-01 + 14 days 7 hours of 31 days: the upgrade's net has a last digit that is not 0
      await m.advance("2026-01-15T07:00:00Z")
      const quote = await m.ok("POST", `/api/v1/subscription/${sub}/preview-change`, { price_id: pro })
      expect(quote.total).toMatch(/[1-9]$/)
      await m.ok("POST", `/api/v1/subscription/${sub}`, { price_id: pro, quote_id: quote.quote_id })
      const upgrade = (await m.invoices(sub)).find((i) => i.invoice_type === "upgrade")
      expect([upgrade.amount, upgrade.biz_status]).toEqual([quote.total, "success"])
      const [intent] = intentsOf(upgrade.trade_id)
      const fils = Number(quote.total.replace(".", ""))
      expect([intent.amount, intent.status]).toEqual([fils - (fils % 10), "succeeded"])
      expect((await m.ok("GET", `/api/v1/subscription/${sub}`)).subscription.status).toBe("active")
      expect(fake.violations).toEqual([])
    })

    it("a prorated upgrade under Stripe's minimum (0.50 USD) is carried to the next invoice, not charged nor dunned; the next invoice shows it and charges it", async () => {
      const m = await merchant("USD")
      const basic = await m.price("30.00")
      const plus = await m.price("30.60")
      const { sub } = await m.checkout(basic)
      // a week before the period ends: the upgrade's net is a few cents
      await m.advance("2026-01-25T00:00:00Z")
      const quote = await m.ok("POST", `/api/v1/subscription/${sub}/preview-change`, { price_id: plus })
      const tiny = Number(quote.total.replace(".", ""))
      expect(tiny > 0 && tiny < 50).toBe(true)
      const before = fake.intents.size
      await m.ok("POST", `/api/v1/subscription/${sub}`, { price_id: plus, quote_id: quote.quote_id })
      const upgrade = (await m.invoices(sub)).find((i) => i.invoice_type === "upgrade")
      // settled by the carry: paid at 0.00, a balance line taking the amount to the next invoice
      expect([upgrade.amount, upgrade.biz_status, upgrade.trade_id]).toEqual(["0.00", "success", null])
      expect(upgrade.lines.filter((l: any) => l.kind === "balance").map((l: any) => l.amount)).toEqual([
        `-${quote.total}`
      ])
      expect(fake.intents.size).toBe(before)
      const after = (await m.ok("GET", `/api/v1/subscription/${sub}`)).subscription
      expect([after.status, after.credit_balance]).toEqual(["active", `-${quote.total}`])
      // the next invoice: the new plan and what was carried, charged at once
      await m.advance("2026-02-01T01:00:00Z")
      const next = (await m.invoices(sub)).find((i) => i.invoice_type === "renewal" && i.cycle_index === 1)
      expect([next.amount, next.biz_status]).toEqual([((3060 + tiny) / 100).toFixed(2), "success"])
      expect(next.lines.filter((l: any) => l.kind === "balance").map((l: any) => l.amount)).toEqual([quote.total])
      expect(intentsOf(next.trade_id).map((i) => [i.amount, i.status])).toEqual([[3060 + tiny, "succeeded"]])
      expect((await m.ok("GET", `/api/v1/subscription/${sub}`)).subscription.credit_balance).toBe("0.00")
      expect(fake.violations).toEqual([])
    })

    it("renewals under Stripe's minimum are carried until the balance reaches it, then charged once", async () => {
      const m = await merchant("USD")
      const monthly = await m.price("30.00")
      const cheap = await m.price("0.20")
      const { sub } = await m.checkout(monthly)
      await m.ok("POST", `/api/v1/subscription/${sub}`, { price_id: cheap, effective_type: "end_of_period" })
      const before = fake.intents.size
      // 0.20 and 0.20 + 0.20: under 0.50, carried; then 0.20 + 0.40 = 0.60: charged
      await m.advance("2026-02-01T01:00:00Z")
      await m.advance("2026-03-01T01:00:00Z")
      expect(fake.intents.size).toBe(before)
      expect((await m.ok("GET", `/api/v1/subscription/${sub}`)).subscription).toMatchObject({
        status: "active",
        credit_balance: "-0.40"
      })
      await m.advance("2026-04-01T01:00:00Z")
      const renewals = (await m.invoices(sub)).filter((i) => i.invoice_type === "renewal")
      expect(renewals.map((i) => [i.cycle_index, i.amount, i.biz_status])).toEqual([
        [1, "0.00", "success"],
        [2, "0.00", "success"],
        [3, "0.60", "success"]
      ])
      expect(intentsOf(renewals[2].trade_id).map((i) => [i.amount, i.status])).toEqual([[60, "succeeded"]])
      expect((await m.ok("GET", `/api/v1/subscription/${sub}`)).subscription.credit_balance).toBe("0.00")
      expect(fake.violations).toEqual([])
    })

    it("a renewal Stripe refuses as under the minimum of the account's settlement currency (amount_too_small) is carried to the next invoice, not tried again", async () => {
      const m = await merchant("USD")
      const { sub } = await m.checkout(await m.price("0.52"))
      // the merchant's Stripe account now settles in EUR: 0.52 USD is about 0.47 EUR, under 0.50 EUR
      fake.settle(m.account, { currency: "eur", rates: { usd: 0.9 } })
      await m.advance("2026-02-01T01:00:00Z")
      const first = (await m.invoices(sub)).find((i) => i.cycle_index === 1)
      expect([first.amount, first.biz_status]).toEqual(["0.52", "success"])
      expect(intentsOf(first.trade_id)).toEqual([])
      const trade = (await m.ok("GET", `/api/v1/trade/${first.trade_id}`)).trade
      expect([trade.trade_status, trade.closed_reason, trade.last_payment_error?.code]).toEqual([
        "closed",
        "below_minimum",
        "amount_too_small"
      ])
      expect((await m.ok("GET", `/api/v1/subscription/${sub}`)).subscription).toMatchObject({
        status: "active",
        credit_balance: "-0.52"
      })
      // not tried again hourly: an hour and a day later, still no PaymentIntent for it
      const refusals = fake.requests.filter((r) => r.method === "post" && r.path === "/v1/payment_intents").length
      await m.advance("2026-02-02T03:00:00Z")
      expect(fake.requests.filter((r) => r.method === "post" && r.path === "/v1/payment_intents").length).toBe(refusals)
      const events = (await m.ok("GET", `/api/v2/webhook/events?business_ids=${first.invoice_id}&limit=100`)).list.map(
        (e: any) => e.event_type
      )
      expect(events).toContain("v2.invoice.paid")
      // its page says so: nothing charged, the amount carried to the next invoice (not paid by card)
      const page = await api.handler(new Request(`http://localhost${new URL(first.hosted_invoice_url).pathname}`))
      expect(page.status).toBe(200)
      expect(await page.text()).toContain("<dt>Carried to your next invoice</dt><dd>$0.52</dd>")
      // the next invoice collects it: 0.52 + 0.52 = 1.04 USD, about 0.94 EUR, charged once
      await m.advance("2026-03-01T01:00:00Z")
      const second = (await m.invoices(sub)).find((i) => i.cycle_index === 2)
      expect([second.amount, second.biz_status]).toEqual(["1.04", "success"])
      expect(second.lines.some((l: any) => l.kind === "balance" && l.amount === "0.52")).toBe(true)
      expect(intentsOf(second.trade_id).map((i) => [i.amount, i.status])).toEqual([[104, "succeeded"]])
      expect((await m.ok("GET", `/api/v1/subscription/${sub}`)).subscription.credit_balance).toBe("0.00")
      expect(fake.violations).toEqual([])
    })

    it("a past-due subscription's dunning retry Stripe refuses as amount_too_small is carried too: the subscription recovers, never stuck past due retrying hourly", async () => {
      const m = await merchant("USD")
      const { sub } = await m.checkout(await m.price("0.52"))
      // the renewal is declined: past due, dunning retries the saved card
      fake.declineOffSession(1)
      await m.advance("2026-02-01T01:00:00Z")
      expect((await m.ok("GET", `/api/v1/subscription/${sub}`)).subscription.status).toBe("past_due")
      // meanwhile the account settles in EUR: the retry's 0.52 USD is under Stripe's 0.50 EUR
      fake.settle(m.account, { currency: "eur", rates: { usd: 0.9 } })
      await m.advance("2026-02-20T01:00:00Z")
      const first = (await m.invoices(sub)).find((i) => i.cycle_index === 1)
      expect([first.amount, first.biz_status]).toEqual(["0.52", "success"])
      const trade = (await m.ok("GET", `/api/v1/trade/${first.trade_id}`)).trade
      expect([trade.trade_status, trade.closed_reason]).toEqual(["closed", "below_minimum"])
      expect((await m.ok("GET", `/api/v1/subscription/${sub}`)).subscription).toMatchObject({
        status: "active",
        credit_balance: "-0.52"
      })
      // the next renewal collects it once
      await m.advance("2026-03-01T01:00:00Z")
      const second = (await m.invoices(sub)).find((i) => i.cycle_index === 2)
      expect([second.amount, second.biz_status]).toEqual(["1.04", "success"])
      expect(intentsOf(second.trade_id).map((i) => [i.amount, i.status])).toEqual([[104, "succeeded"]])
      expect((await m.ok("GET", `/api/v1/subscription/${sub}`)).subscription.credit_balance).toBe("0.00")
      expect(fake.violations).toEqual([])
    })

    it("a first invoice under Stripe's minimum: the card is saved (SetupIntent), the amount carried to the first renewal, which charges it", async () => {
      const m = await merchant("USD")
      const { sub, trade } = await m.checkout(await m.price("0.40"))
      expect(intentsOf(trade)).toEqual([])
      const [initial] = await m.invoices(sub)
      expect([initial.invoice_type, initial.amount, initial.biz_status]).toEqual(["initial", "0.00", "success"])
      expect((await m.ok("GET", `/api/v1/subscription/${sub}`)).subscription).toMatchObject({
        status: "active",
        credit_balance: "-0.40"
      })
      await m.advance("2026-02-01T01:00:00Z")
      const renewal = (await m.invoices(sub)).find((i) => i.cycle_index === 1)
      expect([renewal.amount, renewal.biz_status]).toEqual(["0.80", "success"])
      expect(intentsOf(renewal.trade_id).map((i) => [i.amount, i.status])).toEqual([[80, "succeeded"]])
      expect(fake.violations).toEqual([])
    })

    it("a free trial saves the card with a SetupIntent (no PaymentIntent of 0); the first renewal charges it off session", async () => {
      const m = await merchant("USD")
      const trial = await m.price("30.00", {
        has_trial: true,
        trial_period: { trial_period_unit: "day", trial_period_count: 7 }
      })
      const { page, sub, trade } = await m.checkout(trial)
      // the page mounts the Payment Element in setup mode
      expect(page).toContain('"mode":"setup"')
      expect(intentsOf(trade)).toEqual([])
      const subscription = (await m.ok("GET", `/api/v1/subscription/${sub}`)).subscription
      expect(subscription.status).toBe("trial")
      expect((await m.ok("GET", `/api/v1/trade/${trade}`)).trade.trade_status).toBe("succeeded")
      await m.advance("2026-01-08T01:00:00Z")
      const first = (await m.invoices(sub)).find((i) => i.cycle_index === 1)
      expect([first.amount, first.biz_status]).toEqual(["30.00", "success"])
      const [charged] = intentsOf(first.trade_id)
      expect([charged.amount, charged.status]).toEqual([3000, "succeeded"])
      expect((await m.ok("GET", `/api/v1/subscription/${sub}`)).subscription.status).toBe("active")
      expect(fake.violations).toEqual([])
    })
  })
}
