import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { UsageChecks } from "@recur/core"
import { Effect } from "effect"
import { backends, serve } from "./client.js"
import { changeHelpers, refusal } from "./fixtures/changes.js"

// Issue 35 (5): usage alerts and progressive billing over REST, on PGlite and on PostgreSQL when
// RECUR_TEST_DATABASE_URL is set. The numbers are docs/usage.md's "Alerts" and "Progressive
// billing": API calls at 1.00 each beside a 10.00 platform price.

const JAN = "2026-01-01T00:00:00Z"
const FEB = "2026-02-01T00:00:00Z"

for (const [name, storage] of backends()) {
  describe(`usage alerts and progressive billing over HTTP (${name})`, () => {
    let app: ReturnType<typeof serve>
    beforeAll(async () => {
      app = serve(storage())
      await app.ready()
    }, 120_000)
    afterAll(() => app.dispose())
    const pay = (sessionId: string) =>
      app.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )

    /** A merchant frozen on January 1, its `api_calls` metric at 1.00 a call beside a 10.00 platform, a paid subscription. */
    const setup = async () => {
      const { ok, advance } = changeHelpers(app)
      const { api_key: key, merchant } = await app.merchant({ frozen: JAN })
      ok(
        await app.call("POST", "/api/v1/billable_metrics", key, {
          code: "api_calls",
          name: "API calls",
          aggregation: "count"
        })
      )
      const base = (
        await app.priceOf(
          key,
          { price_plan: { billing_cycle_unit: "month", base_price_val: "10.00" } },
          { product: "Platform", price: "Platform" }
        )
      ).priceId
      const calls = (
        await app.priceOf(
          key,
          {
            price_type: "based_on_usage",
            payment_timing: "postpaid",
            billing_dimension: "usage",
            usage_amount: "1",
            price_plan: { billing_cycle_unit: "month", base_price_val: "0" },
            model_type: "per_unit",
            usage_unit_price: "1.00",
            billing_threshold: "1",
            usage_unit: "calls",
            billable_metric_id: "api_calls"
          },
          { product: "API", price: "API calls" }
        )
      ).priceId
      const session = ok(
        await app.call("POST", "/api/v1/session", key, {
          payer_id: `p-${Math.random()}`,
          line_items: [{ price_id: base }, { price_id: calls }]
        })
      )
      ok(await pay(session.session_id))
      const { subscription_id: subId, customer_id: customer } = ok(
        await app.call("GET", `/api/v1/session/${session.session_id}`, key)
      ).session
      let n = 0
      /** `count` calls, now (the merchant's frozen clock). */
      const send = async (count: number) => {
        const events = Array.from({ length: count }, () => ({
          transaction_id: `t${++n}`,
          customer_id: customer,
          code: "api_calls"
        }))
        ok(await app.call("POST", "/api/v1/meter_events/batch", key, { events }))
      }
      let clock = Date.parse(JAN)
      /** Moves the merchant's clock on by `seconds` (the coalesced check runs at its window's end). */
      const later = async (seconds = 10) => {
        clock += seconds * 1000
        ok(await advance(key, new Date(clock).toISOString()))
      }
      const to = async (iso: string) => {
        clock = Date.parse(iso)
        ok(await advance(key, iso))
      }
      const events = async (type: string) =>
        ok(await app.call("GET", `/api/v2/webhook/events?event_types=${type}&limit=100`, key)).list.map((e: any) =>
          JSON.parse(e.content)
        )
      return { ok, key, merchantId: merchant.merchant_id as string, subId, customer, send, later, to, events }
    }

    it("an amount alert at 80 % of a 100.00 budget fires once when crossed, a value alert and a recurring one too; all resolve at the next cycle", async () => {
      const { customer, events, key, later, ok, send, subId, to } = await setup()
      // refusals name the field
      expect(
        refusal(
          await app.call("POST", "/api/v1/usage_alerts", key, {
            subscription_id: subId,
            billable_metric_id: "api_calls",
            thresholds: [{ type: "percent", value: "80" }]
          })
        )
      ).toEqual([400, "InvalidParameter", "thresholds[0].type"])
      expect(
        refusal(
          await app.call("POST", "/api/v1/usage_alerts", key, {
            subscription_id: subId,
            billable_metric_id: "api_calls",
            thresholds: [{ type: "amount", value: "80.001" }]
          })
        )
      ).toEqual([400, "InvalidParameter", "thresholds[0].value"])
      expect(
        refusal(
          await app.call("POST", "/api/v1/usage_alerts", key, {
            subscription_id: subId,
            billable_metric_id: "nope",
            thresholds: [{ type: "value", value: 1 }]
          })
        )
      ).toEqual([404, "resource_not_found", "billable_metric_id"])
      expect(
        refusal(
          await app.call("POST", "/api/v1/usage_alerts", key, {
            subscription_id: "sub_nope",
            billable_metric_id: "api_calls",
            thresholds: [{ type: "value", value: 1 }]
          })
        )
      ).toEqual([404, "resource_not_found", "subscription_id"])

      const budget = ok(
        await app.call("POST", "/api/v1/usage_alerts", key, {
          subscription_id: subId,
          billable_metric_id: "api_calls",
          name: "80 % of the 100.00 budget",
          thresholds: [{ type: "amount", value: "80" }]
        })
      ).usage_alert
      expect([budget.usage_alert_id.slice(0, 3), budget.thresholds, budget.fired, budget.currency]).toEqual([
        "ua_",
        [{ type: "amount", value: "80.00", recurring: false }],
        [],
        "USD"
      ])
      const fifty = ok(
        await app.call("POST", "/api/v1/usage_alerts", key, {
          subscription_id: subId,
          billable_metric_id: "api_calls",
          thresholds: [{ type: "value", value: 50 }]
        })
      ).usage_alert
      const every30 = ok(
        await app.call("POST", "/api/v1/usage_alerts", key, {
          subscription_id: subId,
          billable_metric_id: "api_calls",
          thresholds: [{ type: "value", value: "30", recurring: true }]
        })
      ).usage_alert
      const triggered = async () =>
        (await events("v2.usage_alert.triggered")).map((e: any) => [e.data.usage_alert.usage_alert_id, e.data.level])

      await send(79)
      await later()
      // 79 calls, 79.00: the value alert (50) and the recurring one at its 2nd multiple (60), not the budget
      expect(new Set(await triggered())).toEqual(
        new Set([
          [fifty.usage_alert_id, "50"],
          [every30.usage_alert_id, "60"]
        ])
      )
      await send(1)
      await later()
      const atEighty = await triggered()
      expect(atEighty.filter(([id]: any) => id === budget.usage_alert_id)).toEqual([[budget.usage_alert_id, "80.00"]])
      const fired = (await events("v2.usage_alert.triggered")).find(
        (e: any) => e.data.usage_alert.usage_alert_id === budget.usage_alert_id
      ).data
      expect([
        fired.value,
        fired.amount,
        fired.currency,
        fired.cycle_index,
        fired.period_start,
        fired.period_end
      ]).toEqual(["80", "80.00", "USD", 0, JAN, FEB])
      // more usage: no second event for a crossing; the recurring one at 90
      await send(20)
      await later()
      const after = await triggered()
      expect(after.length).toBe(atEighty.length + 1)
      expect(
        after
          .filter(([id]: any) => id === every30.usage_alert_id)
          .map(([, level]: any) => level)
          .sort()
      ).toEqual(["60", "90"])
      // a check run again fires nothing (the crossings are recorded on the alerts)
      await later()
      expect((await triggered()).length).toBe(after.length)
      expect(ok(await app.call("GET", `/api/v1/usage_alerts/${budget.usage_alert_id}`, key)).usage_alert.fired).toEqual(
        ["amount:80.00"]
      )
      expect(ok(await app.call("GET", `/api/v1/usage_alerts?subscription_id=${subId}`, key)).list.length).toBe(3)

      // the portal shows the metric item's usage so far (value and amount), in the customer's language
      const portal = ok(
        await app.call("POST", "/api/v1/customer-portal/auth", key, { customer_id: customer })
      ).portal_session
      const pageOf = async (language: string) =>
        (
          await app.handler(
            new Request(`http://localhost${new URL(portal.url).pathname}`, { headers: { "accept-language": language } })
          )
        ).text()
      const english = await pageOf("en-US")
      const usage = english.slice(english.indexOf('<div class="usage" id="usage-0">'))
      expect(usage).toContain("<h3>Usage this period</h3>")
      expect(usage).toContain('<td>API calls <span class="muted">api_calls</span></td><td class="num">100</td>')
      expect(usage.slice(0, usage.indexOf("</div>"))).toContain("100.00")
      expect(await pageOf("de-DE")).toContain("<h3>Nutzung in diesem Zeitraum</h3>")

      // the next cycle starts: each alert's crossings resolve, once
      await to(FEB)
      const resolved = await events("v2.usage_alert.resolved")
      expect(new Set(resolved.map((e: any) => e.data.usage_alert.usage_alert_id))).toEqual(
        new Set([budget.usage_alert_id, fifty.usage_alert_id, every30.usage_alert_id])
      )
      expect(resolved.find((e: any) => e.data.usage_alert.usage_alert_id === budget.usage_alert_id).data).toMatchObject(
        {
          ended_cycle_index: 0,
          fired: ["amount:80.00"]
        }
      )
      await later()
      expect((await events("v2.usage_alert.resolved")).length).toBe(3)
      const reset = ok(await app.call("GET", `/api/v1/usage_alerts/${budget.usage_alert_id}`, key)).usage_alert
      expect([reset.cycle_index, reset.fired]).toEqual([1, []])
      // February's 80 calls cross the budget again: a new crossing in a new cycle
      await send(80)
      await later()
      expect(
        (await triggered()).filter(([id]: any) => id === budget.usage_alert_id).map(([, level]: any) => level)
      ).toEqual(["80.00", "80.00"])

      // deleted: fires nothing more
      ok(await app.call("POST", `/api/v1/usage_alerts/${fifty.usage_alert_id}/delete`, key))
      expect(refusal(await app.call("GET", `/api/v1/usage_alerts/${fifty.usage_alert_id}`, key))).toEqual([
        404,
        "resource_not_found",
        undefined
      ])
      expect(ok(await app.call("GET", `/api/v1/usage_alerts?subscription_id=${subId}`, key)).list.length).toBe(2)
    }, 180_000)

    it("progressive billing invoices the usage early at the threshold, again each time the uninvoiced usage reaches it, and the renewal deducts exactly", async () => {
      const { key, later, ok, send, subId, to } = await setup()
      expect(
        refusal(
          await app.call("POST", `/api/v1/subscription/${subId}/progressive_billing`, key, {
            progressive_billing_threshold: "-1"
          })
        )
      ).toEqual([400, "InvalidParameter", "progressive_billing_threshold"])
      const set = ok(
        await app.call("POST", `/api/v1/subscription/${subId}/progressive_billing`, key, {
          progressive_billing_threshold: "50"
        })
      ).progressive_billing
      expect([set.progressive_billing_threshold, set.billed, set.invoice_ids]).toEqual(["50.00", [], []])
      const progressive = async () =>
        ok(await app.call("GET", "/api/v1/invoices?limit=100", key))
          .list.filter((i: any) => i.invoice_type === "progressive")
          .sort(
            (a: any, b: any) =>
              a.created_at.localeCompare(b.created_at) || a.invoice_number?.localeCompare(b.invoice_number)
          )
      await send(30)
      await later()
      expect(await progressive()).toEqual([])
      await send(30)
      await later()
      const [first] = await progressive()
      expect([first.amount, first.biz_status, first.metadata, first.subscription_id]).toEqual([
        "60.00",
        "success",
        { subscription_id: subId, cycle_index: "0" },
        null
      ])
      expect(first.lines.map((l: any) => [l.kind, l.description, l.amount])).toEqual([
        ["usage", "API calls: 60 calls (api_calls), invoiced early (progressive billing)", "60.00"]
      ])
      // 80 calls: 20.00 not invoiced yet, under the threshold
      await send(20)
      await later()
      expect((await progressive()).length).toBe(1)
      // 120 calls: 60.00 not invoiced: a second progressive invoice
      await send(40)
      await later()
      const all = await progressive()
      expect(all.map((i: any) => i.amount)).toEqual(["60.00", "60.00"])
      await send(10)
      const state = ok(
        await app.call("GET", `/api/v1/subscription/${subId}/progressive_billing`, key)
      ).progressive_billing
      expect([state.cycle_index, state.billed, state.invoice_ids.length, state.deducted]).toEqual([
        0,
        [{ item_id: expect.any(String), description: "API calls", amount: "120.00" }],
        2,
        false
      ])
      // the upcoming invoice shows the deduction too
      const upcoming = ok(await app.call("GET", `/api/v1/subscription/${subId}/upcoming_invoice`, key)).upcoming_invoice
      expect(upcoming.amount).toBe("20.00")

      // the renewal: the whole cycle's 130 calls, less the 120.00 invoiced early
      await to(FEB)
      const renewal = ok(await app.call("GET", "/api/v1/invoices?limit=100", key)).list.find(
        (i: any) => i.invoice_type === "renewal" && i.subscription_id === subId && i.cycle_index === 1
      )
      expect(renewal.lines.map((l: any) => [l.kind, l.description, l.amount])).toEqual([
        ["subscription", "Platform × 1", "10.00"],
        ["usage", "API calls: 130 calls (api_calls)", "130.00"],
        ["usage", "API calls: already invoiced in this period (progressive billing)", "-120.00"]
      ])
      expect([renewal.amount, renewal.biz_status]).toEqual(["20.00", "success"])
      // Σ progressive + the renewal's usage lines = the rating of the whole cycle
      const usageOnRenewal = renewal.lines
        .filter((l: any) => l.kind === "usage")
        .reduce((a: number, l: any) => a + Math.round(Number(l.amount) * 100), 0)
      const early = all.reduce((a: number, i: any) => a + Math.round(Number(i.amount) * 100), 0)
      expect(early + usageOnRenewal).toBe(13_000)
      expect(
        ok(await app.call("GET", `/api/v1/subscription/${subId}/progressive_billing`, key)).progressive_billing.deducted
      ).toBe(true)
      // February starts from nothing invoiced
      await send(55)
      await later()
      const feb = (await progressive()).filter((i: any) => i.metadata.cycle_index === "1")
      expect(feb.map((i: any) => i.amount)).toEqual(["55.00"])
    }, 180_000)

    it("a check run twice at once, or run again after it committed, bills and fires once", async () => {
      const { events, key, merchantId, ok, send, subId } = await setup()
      ok(
        await app.call("POST", `/api/v1/subscription/${subId}/progressive_billing`, key, {
          progressive_billing_threshold: "50"
        })
      )
      ok(
        await app.call("POST", "/api/v1/usage_alerts", key, {
          subscription_id: subId,
          billable_metric_id: "api_calls",
          thresholds: [{ type: "amount", value: "40" }]
        })
      )
      await send(70)
      const check = UsageChecks.UsageChecks.use((c) => c.check(merchantId, subId))
      // two at once (on PostgreSQL truly concurrent: the loser fails whole, nothing written), then a retry
      const both = await app.runtime.runPromise(
        Effect.all([Effect.exit(check), Effect.exit(check)], { concurrency: 2 })
      )
      expect(both.some((e) => e._tag === "Success")).toBe(true)
      await app.runtime.runPromise(check)
      await app.runtime.runPromise(check)
      const invoices = ok(await app.call("GET", "/api/v1/invoices?limit=100", key)).list.filter(
        (i: any) => i.invoice_type === "progressive"
      )
      expect(invoices.map((i: any) => i.amount)).toEqual(["70.00"])
      expect((await events("v2.usage_alert.triggered")).length).toBe(1)
    }, 120_000)
  })
}
