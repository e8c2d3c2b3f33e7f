import { expect, layer } from "@effect/vitest"
import { Customers, Engine, Merchant, Merchants, Ports, SandboxClock, Secrets, Settings } from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { DateTime, Effect, Layer, Option } from "effect"
import { MemoryStorage, ScenarioKit, ServicesContract, WebhookRecorder } from "../src/index.js"

const engine = Engine.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(MemoryStorage.layer, Secrets.layer(ServicesContract.testMasterKey))),
  Layer.provideMerge(
    Layer.mergeAll(SandboxGateway.layer(), Ports.fxStatic({}), Ports.taxNone, Settings.layer(), WebhookRecorder.layer)
  )
)

const ms = (iso: string) => Date.parse(iso)

layer(engine, { timeout: "60 seconds" })("Merchants.asCaller: the request's merchant snapshot", (it) => {
  it.effect(
    "services take the caller's clock from the snapshot, and advancing the clock inside it still stamps every renewal at its own time",
    () =>
      Effect.gen(function* () {
        const merchants = yield* Merchants.Merchants
        const customers = yield* Customers.Customers
        const { merchantId, priceId } = yield* ScenarioKit.setup("2024-05-31T09:00:00Z")
        const sub = Option.getOrThrow((yield* ScenarioKit.subscribe(merchantId, priceId)).result.subscription).id
        const merchant = yield* merchants.get(merchantId)

        // the snapshot is what "now" is: a create stamped on the merchant as the request read it
        const snapshot = new Merchant.Merchant(
          { ...merchant, frozen_time: DateTime.makeUnsafe(ms("2024-05-31T08:00:00Z")) },
          { disableChecks: true }
        )
        const early = yield* Merchants.asCaller(snapshot)(customers.create(merchantId, { payer_id: "p-early" }))
        expect(early.created_at).toBe(ms("2024-05-31T08:00:00Z"))
        // without it, the merchant is read
        const plain = yield* customers.create(merchantId, { payer_id: "p-plain" })
        expect(plain.created_at).toBe(ms("2024-05-31T09:00:00Z"))

        // advance_clock inside a request: every renewal on the way is stamped at its due time, not
        // at the snapshot's, and the merchant's clock ends where it was moved
        const after = yield* Merchants.asCaller(merchant)(
          SandboxClock.SandboxClock.use((b) => b.advanceClock(merchantId, ms("2024-08-15T00:00:00Z")))
        )
        expect(DateTime.toEpochMillis(after.frozen_time!)).toBe(ms("2024-08-15T00:00:00Z"))
        const invoices = yield* ScenarioKit.invoicesOf(merchantId, sub)
        expect(invoices.map((i) => [i.invoice_type, i.cycle_index])).toEqual([
          ["initial", 0],
          ["renewal", 1],
          ["renewal", 2]
        ])
        // a monthly cycle from May 31 renews on Jun 30 and Jul 31 (clamped, then back to the 31st)
        expect(invoices.slice(1).map((i) => DateTime.formatIso(i.created_at).slice(0, 10))).toEqual([
          "2024-06-30",
          "2024-07-31"
        ])
      })
  )
})
