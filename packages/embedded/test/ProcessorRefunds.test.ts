import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Billing, Money, Ports, ProcessorEvents, Refunds } from "@recur/core"
import { Effect } from "effect"
import { backends, engineRuntime, merchantWithPrice, subscribe } from "./receiver.js"

// A refund made at the processor outside Recur (its dashboard), as the engine records it
// (issue 30): once by its processor id, never beyond what the trade still holds — and through
// the processor-event path, with the sandbox gateway beneath (PGlite, and PostgreSQL when set).
for (const [name, storage] of backends()) {
  describe(`refunds made at the processor (${name})`, () => {
    let rt: ReturnType<typeof engineRuntime>
    beforeAll(async () => {
      rt = engineRuntime(storage())
    })
    afterAll(async () => {
      await rt.dispose()
    })
    const run = <A, E>(effect: Effect.Effect<A, E, any>) => rt.runPromise(effect as Effect.Effect<A, E, never>)

    it("recorded once by its processor id, and never beyond what the trade holds", { timeout: 60_000 }, async () => {
      const m = await run(merchantWithPrice("2026-01-01T00:00:00Z"))
      const paid = await run(subscribe(m.merchantId, m.priceId))
      const tradeId = paid.trade.trade_id
      const record = (refundId: string, minor: bigint) =>
        run(
          Refunds.Refunds.use((r) =>
            r.recordProcessorRefund(m.merchantId, tradeId, {
              refund_id: refundId,
              amount: Money.make(minor, "USD"),
              reason: null
            })
          )
        )
      const first = await record("re_dash_1", 1000n)
      expect(first._tag === "Some" && [first.value.refund_amount, first.value.refund_status]).toEqual([
        "10.00",
        "succeeded"
      ])
      // the same refund again (a second event about it): the same record
      const again = await record("re_dash_1", 1000n)
      expect(again._tag === "Some" && again.value.refund_id).toBe(first._tag === "Some" && first.value.refund_id)
      // more than the trade still holds (20.00 of 30.00): only what it holds is recorded
      const beyond = await record("re_dash_2", 5000n)
      expect(beyond._tag === "Some" && beyond.value.refund_amount).toBe("20.00")
      // nothing left: nothing recorded
      expect((await record("re_dash_3", 100n))._tag).toBe("None")
      const trade = await run(Billing.Billing.use((b) => b.getTrade(m.merchantId, tradeId)))
      expect([trade.total_refunded_amount, trade.refund_status]).toEqual(["30.00", "refunded"])
      const refunds = await run(
        Refunds.Refunds.use((r) =>
          r.listRefunds(m.merchantId, { limit: 10, filters: [{ column: "trade_id", op: "in", values: [tradeId] }] })
        )
      )
      expect(refunds.list.map((r) => r.refund_amount).sort()).toEqual(["10.00", "20.00"])
    })

    it("a processor event with a dashboard refund: acted on once per event, one refund per processor refund", {
      timeout: 60_000
    }, async () => {
      const m = await run(merchantWithPrice("2026-01-01T00:00:00Z"))
      const paid = await run(subscribe(m.merchantId, m.priceId))
      const tradeId = paid.trade.trade_id
      const event = (eventId: string) =>
        run(
          ProcessorEvents.ProcessorEvents.use((p) =>
            p.receive(
              m.merchantId,
              "stripe",
              Ports.ProcessorEvent.Refunded({
                event_id: eventId,
                trade_id: tradeId,
                processor_refunds: [{ refund_id: "re_evt_1", amount: Money.make(700n, "USD") }]
              })
            )
          )
        )
      expect(await event("evt_a")).toMatchObject({ duplicate: false, handled: "refund" })
      expect(await event("evt_a")).toMatchObject({ duplicate: true })
      expect(await event("evt_b")).toMatchObject({ duplicate: false, handled: "refund" })
      const trade = await run(Billing.Billing.use((b) => b.getTrade(m.merchantId, tradeId)))
      expect([trade.total_refunded_amount, trade.refund_status]).toEqual(["7.00", "partially_refunded"])
      // an event that could not be read: refused for a retry, and not kept as seen
      const refused = await run(
        Effect.flip(
          ProcessorEvents.ProcessorEvents.use((p) =>
            p.receive(m.merchantId, "stripe", Ports.ProcessorEvent.Retry({ event_id: "evt_c", reason: "timeout" }))
          )
        )
      )
      expect(refused._tag).toBe("EventNotReadable")
      expect(await event("evt_c")).toMatchObject({ duplicate: false, handled: "refund" })
    })
  })
}
