import { expect, layer } from "@effect/vitest"
import { Billing, PriceChanges } from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Effect, Option } from "effect"
import { MemoryStorage } from "../src/index.js"
import { advance, engine, invoicesOf, monthlyOfFirstProduct, setup, subscribe } from "../src/ScenarioKit.js"

layer(engine(MemoryStorage.layer), { timeout: "120 seconds" })("review2: decline-aware dunning", (it) => {
  it.effect(
    "a hard decline of an UPGRADE's proration charge does not end a paid-up subscription (canceled at once today)",
    () =>
      Effect.gen(function* () {
        const { merchantId, priceId } = yield* setup("2024-01-01T00:00:00Z", {}, { dunning_final_state: "canceled" })
        const sub = Option.getOrThrow((yield* subscribe(merchantId, priceId)).result.subscription)
        const billing = yield* Billing.Billing
        const merchant = (yield* billing.getSubscription(merchantId, sub.id)).status
        expect(merchant).toBe("active")
        const bigger = yield* monthlyOfFirstProduct(merchantId, "60.00")
        yield* advance(merchantId, "2024-01-16T00:00:00Z")
        yield* (yield* SandboxGateway.SandboxControls).declineNextOffSession(1, "stolen_card")
        const quote = yield* (yield* PriceChanges.PriceChanges).changePrice(
          merchantId,
          PriceChanges.change(sub.id, { priceId: bigger })
        )
        expect(quote.outcome).toBe("upgrade")
        const after = yield* billing.getSubscription(merchantId, sub.id)
        const invs = (yield* invoicesOf(merchantId, sub.id)).map((i) => [i.invoice_type, i.biz_status])
        // the cycle is paid (initial 30.00 succeeded): one declined proration must not cancel it
        expect({ status: after.status, invs }).toMatchObject({ status: "active" })
      }),
    60_000
  )
})
