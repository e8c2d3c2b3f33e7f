import { expect, layer } from "@effect/vitest"
import { Engine, Ports, PriceChanges, SandboxClock, Secrets, Settings } from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Effect, Layer, Option, Tracer } from "effect"
import { MemoryStorage, ScenarioKit, ServicesContract, WebhookRecorder } from "../src/index.js"

const engine = Engine.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(MemoryStorage.layer, Secrets.layer(ServicesContract.testMasterKey))),
  Layer.provideMerge(
    Layer.mergeAll(SandboxGateway.layer(), Ports.fxStatic({}), Ports.taxNone, Settings.layer(), WebhookRecorder.layer)
  )
)

/** The engine's services and the adapters in this engine, by the name their operations' spans carry (`Concept.method`). */
const services = new Set([
  "Billing",
  "Catalog",
  "Charges",
  "Checkout",
  "Customers",
  "Declines",
  "Discounts",
  "Dunning",
  "InvoicePayments",
  "Merchants",
  "Metering",
  "PaymentMethods",
  "PaymentSettings",
  "Payments",
  "Portal",
  "PriceChanges",
  "ProcessorEvents",
  "OwedRefunds",
  "Reconciliation",
  "Refunds",
  "RenewalBatches",
  "SandboxGateway",
  "Renewals",
  "SandboxClock",
  "SessionPayments",
  "Subscriptions",
  "TaxRates",
  "WebhookDispatch",
  "Webhooks",
  "Worker"
])

layer(engine, { timeout: "60 seconds" })("span names", (it) => {
  it.effect(
    "every operation of a subscription's life is a span named after the service that owns it",
    () =>
      Effect.gen(function* () {
        const names: Array<string> = []
        const recording = Tracer.make({
          span: (options) => {
            names.push(options.name)
            return new Tracer.NativeSpan(options)
          }
        })
        yield* Effect.gen(function* () {
          const { merchantId, priceId } = yield* ScenarioKit.setup("2024-05-31T09:00:00Z")
          const { result } = yield* ScenarioKit.subscribe(merchantId, priceId)
          const subscriptionId = Option.getOrThrow(result.subscription).id
          const priceChanges = yield* PriceChanges.PriceChanges
          yield* priceChanges.previewChange(merchantId, PriceChanges.change(subscriptionId, { quantity: 2n }))
          yield* (yield* SandboxClock.SandboxClock).advanceClock(merchantId, Date.parse("2024-07-01T00:00:00Z"))
        }).pipe(Effect.withTracer(recording))
        const operations = new Set(names.filter((n) => /^[A-Z]\w*\.\w+$/.test(n)))
        for (const name of [
          "Merchants.create",
          "Catalog.createPrice",
          "Checkout.createSession",
          "SessionPayments.paySession",
          "Payments.applyOutcome",
          "PriceChanges.previewChange",
          "SandboxGateway.charge",
          "SandboxClock.advanceClock",
          "Worker.runItem"
        ])
          expect(operations).toContain(name)
        // a renewal is named by the path that billed it (alone or in a batch)
        expect(operations.has("Renewals.renew") || operations.has("RenewalBatches.renewMany")).toBe(true)
        // each operation names its own service (a price change was once named Subscriptions.*)
        expect([...operations].filter((n) => !services.has(n.split(".")[0]!))).toEqual([])
        expect(operations).not.toContain("Subscriptions.previewChange")
      }),
    { timeout: 60_000 }
  )
})
