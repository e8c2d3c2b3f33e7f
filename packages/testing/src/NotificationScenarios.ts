/**
 * Customer notifications, told through the engine's services on a frozen sandbox clock and a
 * recording notifier: nothing is written for a merchant without settings; a receipt, a failed
 * renewal (with the portal's card-update link), a cancellation and a trial's notice are each
 * written with their cause and sent once by the worker; a failed send is retried; a cause
 * replayed, or rolled back by a crash and run again, writes one message. Run against any storage
 * adapter.
 *
 * @since 0.1.0
 */
import { expect, layer } from "@effect/vitest"
import {
  Billing,
  Engine,
  Entities,
  Merchants,
  Notification,
  NotificationOutbox,
  Notifications,
  Ports,
  Secrets,
  SessionPayments,
  Settings,
  Store,
  Subscriptions
} from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Effect, Layer } from "effect"
import * as ServicesContract from "./ServicesContract.js"
import { advance, iso, merchantAt, monthly, openSession, productOf, subscribeTo } from "./ScenarioKit.js"
import * as WebhookRecorder from "./WebhookRecorder.js"

const START = "2026-01-01T00:00:00Z"

/** The engine with a recording notifier: `sent` holds what it took, `failing` makes it refuse. */
const engineWith = <E>(
  storage: Layer.Layer<Store.Storage, E>,
  sent: Array<Ports.OutgoingMessage>,
  failing: { on: boolean }
) =>
  Engine.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        SandboxGateway.layer(),
        Ports.fxStatic({}),
        Ports.taxNone,
        Settings.layer(),
        WebhookRecorder.layer,
        Ports.recording(sent, () => failing.on)
      )
    ),
    Layer.provideMerge(Layer.mergeAll(storage, Secrets.layer(ServicesContract.testMasterKey)))
  )

const outboxOf = (merchantId: string) => Notifications.Notifications.use((n) => n.list(merchantId))

/**
 * Registers the suite.
 *
 * @since 0.1.0
 */
export const suite = <E>(name: string, storage: Layer.Layer<Store.Storage, E>) => {
  const sent: Array<Ports.OutgoingMessage> = []
  const failing = { on: false }
  const to = (address: string) => sent.filter((m) => m.to === address)
  return layer(engineWith(storage, sent, failing), { timeout: "120 seconds" })(
    `Notification scenarios: ${name}`,
    (it) => {
      it.effect("a merchant without notification settings writes none; bad settings are refused", () =>
        Effect.gen(function* () {
          const merchantId = yield* merchantAt(START)
          const price = yield* monthly(merchantId, yield* productOf(merchantId), "30.00")
          yield* subscribeTo(merchantId, price, { email: "nobody@example.com" })
          expect(yield* outboxOf(merchantId)).toEqual([])
          const n = yield* Notifications.Notifications
          for (const [command, param] of [
            [{ enabled: true }, "sender"],
            [{ sender: "not an address" }, "sender"],
            [{ sender: "billing@acme.test\r\nBcc: x@evil.test" }, "sender"],
            [{ sender: "billing@acme.test", reply_to: "nope" }, "reply_to"],
            [{ sender: "billing@acme.test", messages: ["spam"] }, "messages"],
            [{ sender: "billing@acme.test", language: "it" }, "language"]
          ] as const)
            expect(yield* Effect.flip(n.setSettings(merchantId, command))).toMatchObject({
              _tag: "InvalidParameter",
              param
            })
          expect(yield* n.settingsOf(merchantId)).toBeNull()
        })
      )

      it.effect(
        "a paid checkout writes a receipt with its cause; the worker sends it once, with the invoice page and PDF",
        () =>
          Effect.gen(function* () {
            const merchantId = yield* merchantAt(START, { name: "Acme & Co" })
            const settings = yield* Notifications.Notifications.use((n) =>
              n.setSettings(merchantId, { sender: "Acme Billing <billing@acme.test>", reply_to: "help@acme.test" })
            )
            expect(settings).toMatchObject({ enabled: true, language: "en", messages: Notification.allKinds })
            const price = yield* monthly(merchantId, yield* productOf(merchantId), "30.00")
            const { result } = yield* subscribeTo(merchantId, price, { email: "ada@example.com" })
            const [written] = yield* outboxOf(merchantId)
            expect(written).toMatchObject({ kind: "payment_receipt", status: "pending", attempts: 0 })
            expect(written!.cause_key).toBe(`payment_receipt:${written!.invoice_id}`)
            // the worker sends it when it runs (the frozen lane runs with the clock)
            yield* advance(merchantId, "2026-01-01T00:00:01Z")
            const [message] = to("ada@example.com")
            expect(message).toMatchObject({
              from: "Acme Billing <billing@acme.test>",
              replyTo: "help@acme.test",
              subject: "Acme & Co: receipt for your payment of 30.00 USD",
              messageId: `<${written!.id}@recur>`,
              language: "en"
            })
            const invoice = yield* Store.Storage.pipe(
              Effect.flatMap((s) => s.repository(Entities.invoice).get(merchantId, written!.invoice_id!)),
              Effect.map((o) => (o._tag === "Some" ? o.value.value : undefined))
            )
            expect(invoice?.hosted_invoice_url).toBeTruthy()
            expect(message!.text).toContain(invoice!.hosted_invoice_url!)
            expect(message!.text).toContain(invoice!.invoice_pdf!)
            expect(message!.html).toContain("Acme &amp; Co")
            expect(message!.html).not.toMatch(/<img|<link|src=|url\(/)
            const [after] = yield* outboxOf(merchantId)
            expect(after).toMatchObject({ status: "sent", attempts: 1, recipient: "ada@example.com" })
            // a second delivery of the same message sends nothing
            expect(yield* Notifications.Notifications.use((n) => n.deliver(merchantId, written!.id))).toBe("sent")
            expect(to("ada@example.com")).toHaveLength(1)
            expect(result.status).toBe("succeeded")
          })
      )

      it.effect(
        "a declined renewal emails a card-update link into the portal; cancellation and trial notice in German",
        () =>
          Effect.gen(function* () {
            const merchantId = yield* merchantAt(START)
            yield* Notifications.Notifications.use((n) =>
              n.setSettings(merchantId, {
                sender: "billing@acme.test",
                language: "de",
                messages: ["payment_failed", "subscription_canceled", "trial_ending"]
              })
            )
            const productId = yield* productOf(merchantId)
            const price = yield* monthly(merchantId, productId, "30.00")
            // a declined checkout: the payer saw it on the page, and its subscription never began
            const declined = yield* subscribeTo(merchantId, price, { email: "hal@example.com" }, "4000000000000002")
            const { result } = yield* subscribeTo(merchantId, price, { email: "bea@example.com" }, "4000000000000341")
            const subscriptionId = result.subscription.pipe((o) => (o._tag === "Some" ? o.value.id : ""))
            yield* advance(merchantId, "2026-02-01T00:00:10Z")
            const failed = to("bea@example.com")
            expect(failed.map((m) => m.subject)).toEqual(["Acme: Ihre Zahlung von 30.00 USD ist fehlgeschlagen"])
            expect(failed[0]!.text).toMatch(
              /Karte aktualisieren: http:\/\/localhost:4000\/portal\/card\/[A-Za-z0-9_-]+\/mch_[0-9a-z]+\/cus_[0-9a-z]+\/inv_[0-9a-z]+\/\d+\s/
            )
            expect(failed[0]!.html).toContain('lang="de"')
            yield* Subscriptions.Subscriptions.use((s) => s.cancel(merchantId, Subscriptions.cancelOf(subscriptionId)))
            yield* advance(merchantId, "2026-02-01T00:00:20Z")
            expect(to("bea@example.com").map((m) => m.subject)).toContain("Acme: Ihr Abonnement wurde gekündigt")
            // a trial's notice, 3 days before its end
            const trial = yield* monthly(merchantId, productId, "30.00", {
              has_trial: true,
              trial_type: 0,
              trial_period: { trial_period_unit: "day", trial_period_count: 14 }
            })
            yield* subscribeTo(merchantId, trial, { email: "cem@example.com" })
            yield* advance(merchantId, "2026-02-12T00:00:00Z")
            expect(to("cem@example.com")).toEqual([])
            yield* advance(merchantId, "2026-02-13T00:00:21Z")
            expect(to("cem@example.com").map((m) => m.subject)).toEqual(["Acme: Ihr Testzeitraum endet am 2026-02-15"])
            const ended = declined.result.subscription.pipe((o) => (o._tag === "Some" ? o.value.id : ""))
            expect(yield* Billing.Billing.use((b) => b.getSubscription(merchantId, ended))).toMatchObject({
              status: "canceled",
              cancel_reason: "incomplete_expired"
            })
            expect(to("hal@example.com")).toEqual([])
            // messages not chosen (receipts) were never written
            expect((yield* outboxOf(merchantId)).map((r) => r.kind).sort()).toEqual([
              "payment_failed",
              "subscription_canceled",
              "trial_ending"
            ])
          })
      )

      it.effect(
        "a stolen card stops dunning and cancels (final state canceled): the failed payment says the subscription ended, with no card link",
        () =>
          Effect.gen(function* () {
            const merchantId = yield* merchantAt(START)
            yield* Merchants.Merchants.use((m) => m.setBillingSettings(merchantId, { dunning_final_state: "canceled" }))
            yield* Notifications.Notifications.use((n) =>
              n.setSettings(merchantId, {
                sender: "billing@acme.test",
                messages: ["payment_failed", "subscription_canceled"]
              })
            )
            const price = yield* monthly(merchantId, yield* productOf(merchantId), "30.00")
            // saves fine, declines later charges as stolen_card (a hard decline: dunning stops)
            yield* subscribeTo(merchantId, price, { email: "ida@example.com" }, "4000000000000358")
            yield* advance(merchantId, "2026-02-01T00:00:10Z")
            const mail = to("ida@example.com")
            expect(mail.map((m) => m.subject).sort()).toEqual([
              "Acme: your payment of 30.00 USD failed",
              "Acme: your subscription is canceled"
            ])
            const failed = mail.find((m) => m.subject.includes("failed"))!
            expect(failed.text).toContain("Your subscription has been canceled.")
            expect(failed.text).not.toContain("/portal/card/")
          })
      )

      it.effect(
        "a card that will not last until the next renewal: told once, at the renewal before, with the portal link",
        () =>
          Effect.gen(function* () {
            const merchantId = yield* merchantAt(START)
            yield* Notifications.Notifications.use((n) =>
              n.setSettings(merchantId, { sender: "billing@acme.test", messages: ["card_expiring"] })
            )
            const price = yield* monthly(merchantId, yield* productOf(merchantId), "30.00")
            const session = yield* openSession(merchantId, {
              email: "fay@example.com",
              line_items: [{ price_id: price }],
              return_url: "https://shop.example/done"
            })
            // valid through February 2026: it pays January and February, not March
            yield* SessionPayments.SessionPayments.use((p) =>
              p.paySession(merchantId, session.session_id, {
                number: "4242424242424242",
                exp_month: 2,
                exp_year: 2026,
                cvc: "123"
              })
            )
            yield* advance(merchantId, "2026-01-15T00:00:00Z")
            expect(to("fay@example.com")).toEqual([])
            yield* advance(merchantId, "2026-02-01T00:00:10Z")
            const told = to("fay@example.com")
            expect(told.map((m) => m.subject)).toEqual(["Acme: your card expires soon"])
            expect(told[0]!.text).toContain("before your next renewal on 2026-03-01")
            expect(told[0]!.text).toMatch(/Update your card: http:\/\/localhost:4000\/portal\/card\//)
            expect((yield* outboxOf(merchantId)).map((r) => r.cause_key)).toEqual([
              expect.stringMatching(/^card_expiring:sub_[0-9a-z]+:2026-2$/)
            ])
          })
      )

      it.effect("a send that fails is retried with backoff and marked sent once", () =>
        Effect.gen(function* () {
          const merchantId = yield* merchantAt(START)
          yield* Notifications.Notifications.use((n) => n.setSettings(merchantId, { sender: "billing@acme.test" }))
          const price = yield* monthly(merchantId, yield* productOf(merchantId), "30.00")
          failing.on = true
          yield* subscribeTo(merchantId, price, { email: "dan@example.com" })
          yield* advance(merchantId, "2026-01-01T00:00:01Z")
          const [pending] = yield* outboxOf(merchantId)
          expect(pending).toMatchObject({ status: "pending", attempts: 1 })
          expect(pending!.last_error).toContain("unavailable")
          failing.on = false
          // the worker's backoff: the next attempt a minute later
          yield* advance(merchantId, "2026-01-01T00:00:30Z")
          expect(to("dan@example.com")).toEqual([])
          yield* advance(merchantId, "2026-01-01T00:02:00Z")
          expect(to("dan@example.com")).toHaveLength(1)
          const [sent2] = yield* outboxOf(merchantId)
          expect(sent2).toMatchObject({ status: "sent", attempts: 2 })
          // stamped on the merchant's clock, when the retry ran
          expect(sent2!.sent_at).toBeGreaterThan(iso("2026-01-01T00:00:30Z"))
          expect(sent2!.sent_at).toBeLessThanOrEqual(iso("2026-01-01T00:02:00Z"))
          yield* advance(merchantId, "2026-01-01T03:00:00Z")
          expect(to("dan@example.com")).toHaveLength(1)
        })
      )

      it.effect("a cause replayed writes no second message; a cause rolled back by a crash writes none", () =>
        Effect.gen(function* () {
          const storage = yield* Store.Storage
          const merchantId = yield* merchantAt(START)
          yield* Notifications.Notifications.use((n) => n.setSettings(merchantId, { sender: "billing@acme.test" }))
          const customer = { customer_id: "cus_x", invoice_id: "inv_crash", amount: "5.00", invoice_type: "one_time" }
          const cause = [{ type: "v2.invoice.paid", data: customer, at: iso(START) }]
          // the cause's transaction dies after writing: nothing is left
          const crashed = yield* Effect.exit(
            storage.withTransaction(
              Effect.andThen(NotificationOutbox.record(storage, merchantId, cause), Effect.die("crash"))
            )
          )
          expect(crashed._tag).toBe("Failure")
          expect(yield* outboxOf(merchantId)).toEqual([])
          // run again, and replayed twice more (a redelivered cause): one message, one work item
          for (let i = 0; i < 3; i++)
            yield* storage.withTransaction(NotificationOutbox.record(storage, merchantId, cause))
          const written = yield* outboxOf(merchantId)
          expect(written.map((r) => r.cause_key)).toEqual(["payment_receipt:inv_crash"])
        })
      )
    }
  )
}
