/**
 * Issue 35 (6): a declined automatic top-up disables nothing — `v2.customer.auto_top_up_failed`,
 * another attempt a day later (the same payment key, the next attempt), granted once that one
 * succeeds; the setting stays on. The renewal's credit covers it in full, so the only off-session
 * charge of the test is the top-up.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { CreditGrants, SandboxClock, Webhooks } from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { type Effect, Option } from "effect"
import { engineRuntime, merchantWithPrice, subscribe } from "./receiver.js"
import { Pg } from "@recur/sql"

describe("automatic top-up (PGlite)", { timeout: 120_000 }, () => {
  let rt: ReturnType<typeof engineRuntime>
  beforeAll(() => {
    rt = engineRuntime(Pg.layerPglite())
  })
  afterAll(() => rt.dispose())
  const run = <A, E>(effect: Effect.Effect<A, E, any>) => rt.runPromise(effect as Effect.Effect<A, E, never>)
  const credits = <A, E>(f: (c: CreditGrants.CreditGrants["Service"]) => Effect.Effect<A, E>) =>
    run(CreditGrants.CreditGrants.use(f))
  const advance = (merchantId: string, to: string) =>
    run(SandboxClock.SandboxClock.use((c) => c.advanceClock(merchantId, Date.parse(to))))

  it("a decline emits auto_top_up_failed and is tried again a day later; granted once it succeeds", async () => {
    const m = await run(merchantWithPrice("2026-01-01T00:00:00Z"))
    const sub = Option.getOrThrow((await run(subscribe(m.merchantId, m.priceId))).subscription)
    const customer = sub.customer_id
    await credits((c) =>
      c.create(m.merchantId, {
        customer_id: customer,
        amount: "35.00",
        currency: "USD",
        reason: "prepaid",
        category: "paid"
      })
    )
    await credits((c) =>
      c.setAutoTopUp(m.merchantId, {
        customer_id: customer,
        enabled: true,
        threshold: "10.00",
        amount: "20.00",
        currency: "USD"
      })
    )
    await run(SandboxGateway.SandboxControls.use((c) => c.declineNextOffSession(1, "insufficient_funds")))
    await advance(m.merchantId, "2026-02-01T00:00:00Z")
    const topUps = async () =>
      (await credits((c) => c.list(m.merchantId, customer, { limit: 100 }))).list.filter((g) => g.source === "top_up")
    expect(await topUps()).toEqual([])
    const setting = Option.getOrThrow(await credits((c) => c.autoTopUp(m.merchantId, customer)))
    expect([setting.enabled, setting.failed_attempts, setting.in_flight?.startsWith("atu_")]).toEqual([true, 1, true])
    const failed = (
      await run(
        Webhooks.Webhooks.use((w) =>
          w.listEvents(m.merchantId, { event_types: ["v2.customer.auto_top_up_failed"], limit: 10 })
        )
      )
    ).list
    expect(failed.length).toBe(1)
    const data = JSON.parse(failed[0]!.content).data
    expect([data.code, data.attempt, data.amount, data.next_attempt_at]).toEqual([
      "insufficient_funds",
      1,
      "20.00",
      "2026-02-02T00:00:00Z"
    ])
    // a day later the same top-up is charged again (its next attempt) and succeeds
    await advance(m.merchantId, "2026-02-02T00:00:00Z")
    expect((await topUps()).map((g) => [g.amount, g.payment_key === setting.in_flight])).toEqual([["20.00", true]])
    const after = Option.getOrThrow(await credits((c) => c.autoTopUp(m.merchantId, customer)))
    expect([after.enabled, after.in_flight, after.failed_attempts]).toEqual([true, null, 0])
  })
})
