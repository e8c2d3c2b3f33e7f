import { expect, layer } from "@effect/vitest"
import { Billing, Engine, Payments, Ports, SandboxClock, Secrets, Settings } from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Effect, Layer, Logger, LogLevel, Option } from "effect"
import { MemoryStorage, ScenarioKit, ServicesContract, WebhookRecorder } from "../src/index.js"

// Called after each charge the engine makes; the test uses it to act as a second process.
let afterCharge: ((request: Ports.ChargeRequest, outcome: Ports.ChargeOutcome) => Effect.Effect<void>) | undefined

/** The sandbox gateway, with a hook after every charge. */
const hookedGateway = Layer.effect(
  Ports.PaymentGateway,
  Ports.PaymentGateway.useSync((sandbox) => ({
    ...sandbox,
    charge: (request: Ports.ChargeRequest) =>
      Effect.tap(sandbox.charge(request), (outcome) => (afterCharge ? afterCharge(request, outcome) : Effect.void))
  }))
).pipe(Layer.provide(SandboxGateway.layer()))

const engine = Engine.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(MemoryStorage.layer, Secrets.layer(ServicesContract.testMasterKey))),
  Layer.provideMerge(
    Layer.mergeAll(hookedGateway, Ports.fxStatic({}), Ports.taxNone, Settings.layer(), WebhookRecorder.layer)
  )
)

layer(engine, { timeout: "60 seconds" })("renewal batch racing another process", (it) => {
  it.effect(
    "a charge recorded by another process between a batch's two transactions is recorded once; the rest of the batch still gets paid",
    () =>
      Effect.gen(function* () {
        const billing = yield* Billing.Billing
        const payments = yield* Payments.Payments
        const sandboxClock = yield* SandboxClock.SandboxClock
        const { merchantId, priceId } = yield* ScenarioKit.setup("2024-05-31T09:00:00Z")
        const subs = yield* Effect.forEach([1, 2, 3, 4], () =>
          Effect.map(
            ScenarioKit.subscribe(merchantId, priceId),
            ({ result }) => Option.getOrThrow(result.subscription).id
          )
        )
        // the first renewal charge of the batch is also applied by "another worker" (its charge
        // intent is due at once), before the batch records its outcomes
        const raced: Array<string> = []
        afterCharge = (request, outcome) =>
          raced.length > 0 || request.merchant_id !== merchantId
            ? Effect.void
            : Effect.asVoid(
                Effect.tap(
                  Effect.sync(() => raced.push(request.trade_id)),
                  () => Effect.orDie(payments.applyOutcome(merchantId, request.trade_id, outcome))
                )
              )
        // the conflict is expected and handled: the batch's outcomes are applied one by one, and
        // nothing fails on the way
        const errors: Array<unknown> = []
        const recordErrors = Logger.layer([
          Logger.make(({ logLevel, message }) => {
            if (LogLevel.isGreaterThanOrEqualTo(logLevel, "Warn")) errors.push(message)
          })
        ])
        yield* sandboxClock
          .advanceClock(merchantId, Date.parse("2024-07-01T00:00:00Z"))
          .pipe(Effect.provide(recordErrors))
        expect(errors).toEqual([])
        afterCharge = undefined
        expect(raced).toHaveLength(1)
        for (const id of subs) {
          const invoices = yield* ScenarioKit.invoicesOf(merchantId, id)
          expect(invoices.map((i) => [i.invoice_type, i.cycle_index, i.amount, i.biz_status])).toEqual([
            ["initial", 0, "30.00", "success"],
            ["renewal", 1, "30.00", "success"]
          ])
          const renewal = invoices[1]!
          expect(yield* ScenarioKit.eventsOf(merchantId, renewal.invoice_id)).toEqual(["v2.invoice.paid"])
          expect(yield* ScenarioKit.eventsOf(merchantId, renewal.trade_id!)).toEqual([
            "v2.trades.created",
            "v2.trades.succeeded"
          ])
          expect((yield* billing.getTrade(merchantId, renewal.trade_id!)).trade_status).toBe("succeeded")
          expect((yield* billing.getSubscription(merchantId, id)).cycle_index).toBe(1)
        }
        // the raced trade is among them
        const trades = yield* Effect.forEach(subs, (id) =>
          Effect.map(ScenarioKit.invoicesOf(merchantId, id), (i) => i[1]!.trade_id)
        )
        expect(trades).toContain(raced[0])
      })
  )
})
