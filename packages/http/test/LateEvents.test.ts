import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { UsageAdjustments } from "@recur/core"
import * as fc from "fast-check"
import { backends, serve } from "./client.js"
import { changeHelpers, refusal } from "./fixtures/changes.js"

// Issue 35 (4): late meter events and corrections over REST — a late event refreshes a draft,
// re-rates a finalised invoice into an extra invoice or a credit note of exactly the difference,
// repeated corrections bill once, the late window bounds them — on PGlite, and on PostgreSQL when
// RECUR_TEST_DATABASE_URL is set. docs/usage.md "Late events and corrections" is this example.

const JAN = "2026-01-01T00:00:00Z"
const FEB = "2026-02-01T00:00:00Z"

for (const [name, storage] of backends()) {
  describe(`late meter events and corrections over HTTP (${name})`, () => {
    let app: ReturnType<typeof serve>
    beforeAll(async () => {
      app = serve(storage())
      await app.ready()
    }, 120_000)
    afterAll(() => app.dispose())

    /** A merchant frozen on January 1 with `api_calls` (count) at 2.00 a call beside a 10.00 plan, one paid subscription. */
    const world = async (grace = 0, basePrice = "10.00") => {
      const h = changeHelpers(app)
      const { api_key: key, merchant } = await app.merchant({ frozen: JAN })
      if (grace > 0)
        h.ok(await app.call("POST", "/api/v1/billing_settings", key, { invoice_draft_grace_seconds: grace }))
      h.ok(
        await app.call("POST", "/api/v1/billable_metrics", key, {
          code: "api_calls",
          name: "API calls",
          aggregation: "count"
        })
      )
      const base = (
        await app.priceOf(
          key,
          { price_plan: { billing_cycle_unit: "month", base_price_val: basePrice } },
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
            usage_unit_price: "2.00",
            billing_threshold: "1",
            usage_unit: "calls",
            billable_metric_id: "api_calls"
          },
          { product: "API", price: "API calls" }
        )
      ).priceId
      const session = h.ok(
        await app.call("POST", "/api/v1/session", key, {
          payer_id: `late-${Math.random()}`,
          line_items: [{ price_id: base }, { price_id: calls }]
        })
      )
      h.ok(
        await app.call(
          "POST",
          `/checkout/${session.session_id}/pay`,
          null,
          { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
          { accept: "application/json" }
        )
      )
      const { subscription_id: sub, customer_id: customer } = h.ok(
        await app.call("GET", `/api/v1/session/${session.session_id}`, key)
      ).session
      h.ok(await h.advance(key, "2026-01-10T00:00:00Z"))
      const send = (transaction_id: string, timestamp: string) =>
        app.call("POST", "/api/v1/meter_events", key, {
          transaction_id,
          customer_id: customer,
          code: "api_calls",
          timestamp
        })
      const adjustments = async () =>
        h.ok(await app.call("GET", `/api/v1/subscription/${sub}/usage_adjustments?limit=100`, key)).list as Array<any>
      const preview = async (timestamp = "2026-01-15T00:00:00Z") =>
        h.ok(await app.call("POST", `/api/v1/subscription/${sub}/usage_adjustments/preview`, key, { timestamp }))
          .preview
      const invoices = async () => (await h.invoicesOf(key, sub)) as Array<any>
      const balance = async () => h.ok(await app.call("GET", `/api/v1/customers/${customer}/balance`, key))
      return {
        ...h,
        key,
        merchantId: merchant.merchant_id,
        sub,
        customer,
        send,
        adjustments,
        preview,
        invoices,
        balance
      }
    }
    const usageLine = (inv: any) => inv.lines.find((l: any) => l.kind === "usage")

    it("a late event into a draft (the merchant's grace period) re-prices the draft's usage line", async () => {
      const w = await world(86_400)
      for (const [tx, at] of [
        ["d1", "2026-01-05T10:00:00Z"],
        ["d2", "2026-01-06T10:00:00Z"]
      ])
        w.ok(await w.send(tx!, at!))
      w.ok(await w.advance(w.key, FEB))
      const draft = (await w.invoices()).find((i) => i.biz_status === "draft")!
      expect([draft.amount, usageLine(draft).description, usageLine(draft).amount]).toEqual([
        "14.00",
        "API calls: 2 calls (api_calls)",
        "4.00"
      ])
      // on February 1, 00:30: an event of January 20, and January's period is billed by a draft
      w.ok(await w.advance(w.key, "2026-02-01T00:30:00Z"))
      w.ok(await w.send("d3", "2026-01-20T10:00:00Z"))
      expect((await w.preview()).kind).toBe("draft")
      w.ok(await w.advance(w.key, "2026-02-01T00:31:00Z"))
      const refreshed = (await w.invoices()).find((i) => i.invoice_id === draft.invoice_id)!
      expect([
        refreshed.biz_status,
        refreshed.amount,
        usageLine(refreshed).description,
        usageLine(refreshed).amount
      ]).toEqual(["draft", "16.00", "API calls: 3 calls (api_calls)", "6.00"])
      expect((await w.adjustments()).map((a) => [a.kind, a.amount, a.invoice_id])).toEqual([
        ["draft", "2.00", draft.invoice_id]
      ])
      expect((await w.preview()).kind).toBe("none")
      // finalised at the end of the grace period as refreshed, and charged
      w.ok(await w.advance(w.key, "2026-02-02T01:00:00Z"))
      const final = (await w.invoices()).find((i) => i.invoice_id === draft.invoice_id)!
      expect([final.biz_status, final.amount]).toEqual(["success", "16.00"])
    }, 120_000)

    it("after finalisation: a late event bills an extra invoice of exactly the difference, a void credits exactly the difference, repeats bill once, the window bounds them", async () => {
      const w = await world()
      for (const [tx, at] of [
        ["e1", "2026-01-05T10:00:00Z"],
        ["e2", "2026-01-06T10:00:00Z"],
        ["e3", "2026-01-07T10:00:00Z"]
      ])
        w.ok(await w.send(tx!, at!))
      w.ok(await w.advance(w.key, FEB))
      const renewal = (await w.invoices()).find((i) => i.invoice_type === "renewal")!
      expect([renewal.amount, renewal.biz_status, usageLine(renewal).amount]).toEqual(["16.00", "success", "6.00"])

      // February 5: a late event of January 20 — previewed, then billed by the worker
      w.ok(await w.advance(w.key, "2026-02-05T00:00:00Z"))
      w.ok(await w.send("late-1", "2026-01-20T10:00:00Z"))
      const quote = await w.preview()
      expect([
        quote.kind,
        quote.difference,
        quote.amount,
        quote.invoice_id,
        quote.period_start,
        quote.period_end
      ]).toEqual(["invoice", "2.00", "2.00", renewal.invoice_id, JAN, FEB])
      expect(quote.lines.map((l: any) => [l.value, l.billed, l.rated, l.amount])).toEqual([
        ["4", "6.00", "8.00", "2.00"]
      ])
      expect(await w.adjustments()).toEqual([]) // a preview writes nothing
      w.ok(await w.advance(w.key, "2026-02-05T00:01:00Z"))
      const extra = (await w.invoices()).filter((i) => i.invoice_type === "one_off")
      expect(
        extra.map((i) => [
          i.amount,
          i.biz_status,
          i.original_invoice_id,
          i.subscription_id,
          i.lines.map((l: any) => l.amount)
        ])
      ).toEqual([["2.00", "success", renewal.invoice_id, w.sub, ["2.00"]]])
      const [first] = await w.adjustments()
      expect([first.kind, first.amount, first.sequence, first.adjustment_invoice_id]).toEqual([
        "invoice",
        "2.00",
        1,
        extra[0].invoice_id
      ])

      // the same event re-sent, and the worker run again: nothing more is billed
      expect(w.ok(await w.send("late-1", "2026-01-20T10:00:00Z")).duplicate).toBe(true)
      w.ok(await w.advance(w.key, "2026-02-05T00:02:00Z"))
      expect((await w.adjustments()).length).toBe(1)
      expect((await w.preview()).kind).toBe("none")

      // a void: a credit note to the balance of exactly one call
      const voided = w.ok(await app.call("POST", "/api/v1/meter_events/e1/void", w.key))
      expect([voided.voided, voided.event.voided_at !== null]).toEqual([true, true])
      expect([(await w.preview()).kind, (await w.preview()).amount]).toEqual(["credit_note", "-2.00"])
      // voided twice: changes nothing
      expect(w.ok(await app.call("POST", "/api/v1/meter_events/e1/void", w.key)).voided).toBe(false)
      w.ok(await w.advance(w.key, "2026-02-05T00:03:00Z"))
      const credit = (await w.adjustments())[0]
      expect([credit.kind, credit.amount, credit.sequence]).toEqual(["credit_note", "-2.00", 2])
      // the credit note: a refund-type invoice of the renewal, numbered in the credit-note series
      const notes = (await w.invoices()).filter((i) => i.invoice_type === "refund")
      expect(notes.map((n: any) => [n.invoice_id, n.amount, n.original_invoice_id])).toEqual([
        [credit.credit_note_id, "2.00", renewal.invoice_id]
      ])
      expect(w.ok(await app.call("GET", `/api/v1/customers/${w.customer}/balance`, w.key)).balance).toEqual([
        expect.objectContaining({ currency: "USD", amount: "2.00" })
      ])

      // an amendment moving e2 into February: January credits one call, February counts it
      const amended = w.ok(
        await app.call("POST", "/api/v1/meter_events/e2/amend", w.key, {
          transaction_id: "e2-v2",
          timestamp: "2026-02-03T00:00:00Z"
        })
      )
      expect([amended.duplicate, amended.amended.voided_at !== null, amended.event.timestamp]).toEqual([
        false,
        true,
        "2026-02-03T00:00:00Z"
      ])
      // sent again: the replacement, nothing more
      expect(
        w.ok(
          await app.call("POST", "/api/v1/meter_events/e2/amend", w.key, {
            transaction_id: "e2-v2",
            timestamp: "2026-02-03T00:00:00Z"
          })
        ).duplicate
      ).toBe(true)
      w.ok(await w.advance(w.key, "2026-02-05T00:04:00Z"))
      expect((await w.adjustments()).map((a) => [a.kind, a.amount])).toEqual([
        ["credit_note", "-2.00"],
        ["credit_note", "-2.00"],
        ["invoice", "2.00"]
      ])
      const feb = w.ok(await app.call("GET", `/api/v1/subscription/${w.sub}/current_usage`, w.key)).current_usage
      expect(feb.items.map((i: any) => i.value)).toEqual(["1"])
      // the period's invoice plus its adjustments bill exactly January's final rating: 2 calls
      expect((await w.preview()).lines.map((l: any) => [l.value, l.billed, l.rated])).toEqual([["2", "4.00", "4.00"]])

      // beyond the late window (January ended February 1; 35 days: March 8): refused, nothing changes
      w.ok(await w.advance(w.key, "2026-03-09T00:00:00Z"))
      const before = (await w.invoices()).length
      expect(refusal(await w.send("too-late", "2026-01-25T00:00:00Z"))).toEqual([400, "InvalidParameter", "timestamp"])
      expect(
        refusal(
          await app.call("POST", "/api/v1/meter_events/batch", w.key, {
            events: [
              { transaction_id: "ok", customer_id: w.customer, code: "api_calls", timestamp: "2026-03-02T00:00:00Z" },
              {
                transaction_id: "too-late-2",
                customer_id: w.customer,
                code: "api_calls",
                timestamp: "2026-01-25T00:00:00Z"
              }
            ]
          })
        )
      ).toEqual([400, "InvalidParameter", "events[1].timestamp"])
      expect(refusal(await app.call("POST", "/api/v1/meter_events/e3/void", w.key))).toEqual([
        400,
        "InvalidParameter",
        "timestamp"
      ])
      expect(
        refusal(await app.call("POST", "/api/v1/meter_events/e3/amend", w.key, { transaction_id: "e3-v2" }))
      ).toEqual([400, "InvalidParameter", "timestamp"])
      expect(refusal(await app.call("POST", "/api/v1/meter_events/nope/void", w.key))[0]).toBe(404)
      w.ok(await w.advance(w.key, "2026-03-09T00:01:00Z"))
      expect((await w.adjustments()).length).toBe(3)
      expect((await w.invoices()).length).toBe(before)
      const listed = w.ok(await app.call("GET", `/api/v1/meter_events?customer_id=${w.customer}&limit=100`, w.key)).list
      expect(listed.some((e: any) => e.transaction_id.startsWith("too-late") || e.transaction_id === "ok")).toBe(false)
      expect(listed.find((e: any) => e.transaction_id === "e3").voided_at).toBe(null)
    }, 180_000)

    // after random late events, re-sends, voids and amendments (the worker run between some of
    // them), January's invoice plus its adjustments bill exactly the rating of January's final
    // aggregation, and the documents (extra invoices less credit notes) add up to the adjustments
    type Op =
      | { readonly kind: "late"; readonly day: number; readonly resend: boolean }
      | { readonly kind: "void"; readonly pick: number }
      | { readonly kind: "amend"; readonly pick: number; readonly day: number; readonly toFebruary: boolean }
      | { readonly kind: "run" }
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant("late" as const), day: fc.integer({ min: 1, max: 31 }), resend: fc.boolean() }),
      fc.record({ kind: fc.constant("void" as const), pick: fc.nat(50) }),
      fc.record({
        kind: fc.constant("amend" as const),
        pick: fc.nat(50),
        day: fc.integer({ min: 1, max: 31 }),
        toFebruary: fc.boolean()
      }),
      fc.constant({ kind: "run" as const })
    )
    it("property (fixed seed, 3 runs of 14 operations): the period's invoice plus its adjustments = the rating of its final aggregation", async () => {
      const runs = fc.sample(fc.array(op, { minLength: 14, maxLength: 14 }), { seed: 354, numRuns: 3 })
      const kinds = new Set<string>()
      for (const ops of runs) {
        // a large base price: every credit stays within what January's invoice collected
        const w = await world(0, "100.00")
        const events = new Map<string, { at: string; live: boolean }>()
        for (const [tx, at] of [
          ["p1", "2026-01-03T00:00:00Z"],
          ["p2", "2026-01-04T00:00:00Z"]
        ]) {
          w.ok(await w.send(tx!, at!))
          events.set(tx!, { at: at!, live: true })
        }
        w.ok(await w.advance(w.key, FEB))
        let clock = Date.parse("2026-02-02T00:00:00Z")
        const tick = async () => {
          clock += 60_000
          w.ok(await w.advance(w.key, new Date(clock).toISOString()))
        }
        await tick()
        let n = 0
        for (const o of ops) {
          const live = [...events].filter(([, e]) => e.live).map(([tx]) => tx)
          if (o.kind === "late") {
            const known = [...events.keys()]
            const tx = o.resend && known.length > 0 ? known[n % known.length]! : `l${++n}`
            const at = events.get(tx)?.at ?? `2026-01-${String(o.day).padStart(2, "0")}T12:00:00Z`
            w.ok(await w.send(tx, at))
            if (!events.has(tx)) events.set(tx, { at, live: true })
          } else if (o.kind === "void") {
            const tx = [...events.keys()][o.pick % events.size]!
            w.ok(await app.call("POST", `/api/v1/meter_events/${tx}/void`, w.key))
            events.get(tx)!.live = false
          } else if (o.kind === "amend") {
            if (live.length === 0) continue
            const tx = live[o.pick % live.length]!
            const at = o.toFebruary ? "2026-02-01T06:00:00Z" : `2026-01-${String(o.day).padStart(2, "0")}T06:00:00Z`
            const replacement = `a${++n}`
            w.ok(
              await app.call("POST", `/api/v1/meter_events/${tx}/amend`, w.key, {
                transaction_id: replacement,
                timestamp: at
              })
            )
            events.get(tx)!.live = false
            events.set(replacement, { at, live: true })
          } else await tick()
        }
        await tick()
        const january = [...events.values()].filter((e) => e.live && e.at < FEB).length
        const invoices = await w.invoices()
        const renewal = invoices.find((i) => i.invoice_type === "renewal")!
        const made = await w.adjustments()
        const cents = (s: string) => Math.round(Number(s) * 100)
        const billed = cents(usageLine(renewal).amount) + made.reduce((a, x) => a + cents(x.amount), 0)
        expect(billed, JSON.stringify(ops)).toBe(january * 200)
        const quote = await w.preview()
        expect([quote.kind, quote.lines[0].value]).toEqual(["none", String(january)])
        const documents =
          invoices.filter((i) => i.invoice_type === "one_off").reduce((a, i) => a + cents(i.amount), 0) -
          invoices.filter((i) => i.invoice_type === "refund").reduce((a, i) => a + cents(i.amount), 0)
        expect(documents).toBe(made.reduce((a, x) => a + cents(x.amount), 0))
        for (const x of made) kinds.add(x.kind)
      }
      // the runs made both kinds of adjustment
      expect([...kinds].sort()).toEqual(["credit_note", "invoice"])
    }, 300_000)

    it("under review: adjustments wait as pending (revised by later corrections) until the merchant applies them", async () => {
      const w = await world()
      w.ok(await app.call("POST", "/api/v1/billing_settings", w.key, { usage_adjustments: "review" }))
      expect(w.ok(await app.call("GET", "/api/v1/billing_settings", w.key)).usage_adjustments).toBe("review")
      expect(
        refusal(await app.call("POST", "/api/v1/billing_settings", w.key, { usage_adjustments: "sometimes" }))[0]
      ).toBe(400)
      w.ok(await w.send("r1", "2026-01-05T10:00:00Z"))
      w.ok(await w.advance(w.key, FEB))
      w.ok(await w.advance(w.key, "2026-02-03T00:00:00Z"))
      w.ok(await w.send("r2", "2026-01-10T00:00:00Z"))
      w.ok(await w.advance(w.key, "2026-02-03T00:01:00Z"))
      const [held] = await w.adjustments()
      expect([held.status, held.kind, held.amount, held.adjustment_invoice_id]).toEqual([
        "pending",
        "invoice",
        "2.00",
        null
      ])
      // a pending adjustment bills nothing: the preview still shows the whole difference
      expect([(await w.preview()).kind, (await w.preview()).amount]).toEqual(["invoice", "2.00"])
      // a second late event revises the same pending adjustment
      w.ok(await w.send("r3", "2026-01-11T00:00:00Z"))
      w.ok(await w.advance(w.key, "2026-02-03T00:02:00Z"))
      const revised = await w.adjustments()
      expect(revised.map((a) => [a.usage_adjustment_id, a.status, a.amount])).toEqual([
        [held.usage_adjustment_id, "pending", "4.00"]
      ])
      expect((await w.invoices()).filter((i) => i.invoice_type === "one_off")).toEqual([])
      const applied = w.ok(
        await app.call("POST", `/api/v1/usage_adjustments/${held.usage_adjustment_id}/apply`, w.key)
      ).usage_adjustment
      expect([applied.status, applied.amount]).toEqual(["applied", "4.00"])
      const extra = (await w.invoices()).filter((i) => i.invoice_type === "one_off")
      expect(extra.map((i) => [i.invoice_id, i.amount, i.biz_status])).toEqual([
        [applied.adjustment_invoice_id, "4.00", "success"]
      ])
      expect(
        refusal(await app.call("POST", `/api/v1/usage_adjustments/${held.usage_adjustment_id}/apply`, w.key))[0]
      ).toBe(409)
      expect(refusal(await app.call("POST", "/api/v1/usage_adjustments/uadj_nope/apply", w.key))[0]).toBe(404)
      expect((await w.preview()).kind).toBe("none")
    }, 120_000)

    it("two late events at once: one adjustment of their sum", async () => {
      const w = await world()
      w.ok(await w.send("c1", "2026-01-05T10:00:00Z"))
      w.ok(await w.advance(w.key, FEB))
      w.ok(await w.advance(w.key, "2026-02-03T00:00:00Z"))
      const sent = await Promise.all([w.send("c2", "2026-01-10T00:00:00Z"), w.send("c3", "2026-01-11T00:00:00Z")])
      for (const r of sent) w.ok(r)
      w.ok(await w.advance(w.key, "2026-02-03T00:01:00Z"))
      const made = await w.adjustments()
      expect(made.map((a) => [a.kind, a.amount])).toEqual([["invoice", "4.00"]])
      expect((await w.invoices()).filter((i) => i.invoice_type === "one_off").map((i) => i.amount)).toEqual(["4.00"])
      // and two re-ratings of one period at once (a second worker, a retry): one of them bills it
      w.ok(await w.send("c4", "2026-01-12T00:00:00Z"))
      const subject = `${w.sub}@${Date.parse(JAN)}`
      const both = await Promise.allSettled(
        [0, 1].map(() =>
          app.runtime.runPromise(UsageAdjustments.UsageAdjustments.use((s) => s.adjust(w.merchantId, subject)))
        )
      )
      expect(both.some((r) => r.status === "fulfilled" && r.value !== undefined)).toBe(true)
      expect((await w.adjustments()).map((a) => [a.kind, a.amount])).toEqual([
        ["invoice", "2.00"],
        ["invoice", "4.00"]
      ])
      expect((await w.preview()).kind).toBe("none")
    }, 120_000)
  })
}
