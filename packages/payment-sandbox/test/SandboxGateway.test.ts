import { describe, expect, it } from "@effect/vitest"
import { Ids, Money, Ports } from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"

const usd = Money.make(3000n, "USD")
const card = (number: string) => ({
  _tag: "Card" as const,
  card: { number, exp_month: 12, exp_year: 2099, cvc: "123" }
})

describe("Sandbox test cards", () => {
  it.effect("3-D Secure: requires action, then the challenge decides", () =>
    Effect.gen(function* () {
      const g = yield* Ports.PaymentGateway
      const controls = yield* SandboxGateway.SandboxControls
      const approved = yield* Ids.make("trd")
      const first = yield* g.charge({
        trade_id: approved,
        merchant_id: "m",
        amount: usd,
        source: card("4000 0000 0000 3220"),
        off_session: false
      })
      // the attempt's reference is named, as a processor names its charge (kept by the engine)
      expect(first).toEqual(
        Ports.ChargeOutcome.RequiresAction({
          redirect_url: `/sandbox/3ds/${approved}`,
          reference: `sbx_${approved}:1`
        })
      )
      expect(yield* controls.completeChallenge(approved, true)).toBe(true)
      expect((yield* g.retrieve(approved))._tag).toBe("Succeeded")
      const refused = yield* Ids.make("trd")
      yield* g.charge({
        trade_id: refused,
        merchant_id: "m",
        amount: usd,
        source: card("4000000000003220"),
        off_session: false
      })
      yield* controls.completeChallenge(refused, false)
      expect(yield* g.retrieve(refused)).toMatchObject({ _tag: "Failed", code: "authentication_failed" })
    }).pipe(Effect.provide(SandboxGateway.layer()))
  )

  it.effect("4000 0000 0000 0341: the first charge succeeds, later off-session charges decline", () =>
    Effect.gen(function* () {
      const g = yield* Ports.PaymentGateway
      const first = yield* g.charge({
        trade_id: yield* Ids.make("trd"),
        merchant_id: "m",
        amount: usd,
        source: card("4000000000000341"),
        off_session: false
      })
      expect(first._tag).toBe("Succeeded")
      const token = first._tag === "Succeeded" ? Option.getOrThrow(first.token) : ""
      const renewal = yield* g.charge({
        trade_id: yield* Ids.make("trd"),
        merchant_id: "m",
        amount: usd,
        source: { _tag: "Token", token },
        off_session: true
      })
      expect(renewal).toMatchObject({ _tag: "Failed", code: "card_declined" })
    }).pipe(Effect.provide(SandboxGateway.layer()))
  )

  it.effect("0341, 0358, 0366: saved fine, then every charge of the saved card declines with its class", () =>
    Effect.gen(function* () {
      const g = yield* Ports.PaymentGateway
      for (const [number, code, decline_class] of [
        ["4000000000000341", "card_declined", "soft"],
        ["4000000000000358", "stolen_card", "hard"],
        ["4000000000000366", "expired_card", "expired_card"]
      ] as const) {
        const saved = yield* g.saveCard({ merchant_id: "m", customer_id: "c", source: card(number) })
        expect(saved._tag, number).toBe("Saved")
        const token = saved._tag === "Saved" ? saved.token : ""
        const renewal = yield* g.charge({
          trade_id: yield* Ids.make("trd"),
          merchant_id: "m",
          amount: usd,
          source: { _tag: "Token", token },
          off_session: true
        })
        expect(renewal, number).toMatchObject({ _tag: "Failed", code, decline_class })
      }
    }).pipe(Effect.provide(SandboxGateway.layer()))
  )

  it.effect(
    "a card's expiry is compared with the instant the engine passes (the merchant's clock), else the Clock",
    () =>
      Effect.gen(function* () {
        const g = yield* Ports.PaymentGateway
        const feb2026 = {
          _tag: "Card" as const,
          card: { number: "4242424242424242", exp_month: 2, exp_year: 2026, cvc: "123" }
        }
        const charge = (source: Ports.ChargeRequest["source"], now?: number) =>
          Effect.flatMap(Ids.make("trd"), (trade_id) =>
            g.charge({ trade_id, merchant_id: "m", amount: usd, source, off_session: false, ...(now ? { now } : {}) })
          )
        const first = yield* charge(feb2026, Date.parse("2026-01-01T00:00:00Z"))
        expect(first._tag).toBe("Succeeded")
        const token = first._tag === "Succeeded" ? Option.getOrThrow(first.token) : ""
        expect((yield* charge({ _tag: "Token", token }, Date.parse("2026-02-28T23:59:59Z")))._tag).toBe("Succeeded")
        expect(yield* charge({ _tag: "Token", token }, Date.parse("2026-03-01T00:00:00Z"))).toMatchObject({
          _tag: "Failed",
          code: "expired_card",
          decline_class: "expired_card"
        })
        // no instant given: Effect's Clock (the test clock starts at 1970)
        expect((yield* charge({ _tag: "Token", token }))._tag).toBe("Succeeded")
        yield* TestClock.setTime(Date.parse("2026-03-01T00:00:00Z"))
        expect((yield* charge({ _tag: "Token", token }))._tag).toBe("Failed")
        const saved = yield* g.saveCard({
          merchant_id: "m",
          customer_id: "c",
          source: feb2026,
          now: Date.parse("2026-01-01T00:00:00Z")
        })
        expect(saved._tag).toBe("Saved")
      }).pipe(Effect.provide(SandboxGateway.layer()))
  )

  it.effect("4000 0000 0000 0119: unknown outcome, reconciled as success; the processor was asked once", () =>
    Effect.gen(function* () {
      const g = yield* Ports.PaymentGateway
      const controls = yield* SandboxGateway.SandboxControls
      const trade = yield* Ids.make("trd")
      expect(
        (yield* g.charge({
          trade_id: trade,
          merchant_id: "m",
          amount: usd,
          source: card("4000000000000119"),
          off_session: false
        }))._tag
      ).toBe("Unknown")
      expect((yield* g.retrieve(trade))._tag).toBe("Succeeded")
      expect(
        (yield* g.charge({
          trade_id: trade,
          merchant_id: "m",
          amount: usd,
          source: card("4000000000000119"),
          off_session: false
        }))._tag
      ).toBe("Succeeded")
      expect(yield* controls.chargeAttempts(trade)).toBe(1)
    }).pipe(Effect.provide(SandboxGateway.layer()))
  )

  it.effect("expired cards and bad tokens fail; card numbers never appear in tokens", () =>
    Effect.gen(function* () {
      const g = yield* Ports.PaymentGateway
      yield* TestClock.setTime(Date.UTC(2030, 0, 1))
      const expired = yield* g.charge({
        trade_id: yield* Ids.make("trd"),
        merchant_id: "m",
        amount: usd,
        source: { _tag: "Card", card: { number: "4242424242424242", exp_month: 12, exp_year: 2029, cvc: "123" } },
        off_session: false
      })
      expect(expired).toMatchObject({ _tag: "Failed", code: "expired_card" })
      const bad = yield* g.charge({
        trade_id: yield* Ids.make("trd"),
        merchant_id: "m",
        amount: usd,
        source: { _tag: "Token", token: "tok_nope" },
        off_session: true
      })
      expect(bad).toMatchObject({ _tag: "Failed", code: "invalid_token" })
    }).pipe(Effect.provide(SandboxGateway.layer()))
  )

  it.effect(
    "a test card per decline class, each declined on every charge and refused when saved, as Stripe's are",
    () =>
      Effect.gen(function* () {
        const g = yield* Ports.PaymentGateway
        const table: ReadonlyArray<readonly [string, string, "hard" | "soft" | "expired_card"]> = [
          ["4000000000000002", "card_declined", "soft"],
          ["4000000000009995", "insufficient_funds", "soft"],
          ["4000000000000150", "processing_error", "soft"],
          ["4000000000006975", "card_velocity_exceeded", "soft"],
          ["4000000000009987", "lost_card", "hard"],
          ["4000000000009979", "stolen_card", "hard"],
          ["4100000000000019", "fraudulent", "hard"],
          ["4000000000000168", "do_not_honor", "hard"],
          ["4000000000000176", "invalid_account", "hard"],
          ["4000000000000069", "expired_card", "expired_card"],
          ["4242424242424241", "incorrect_number", "hard"]
        ]
        for (const [number, code, decline_class] of table) {
          for (const off_session of [false, true]) {
            const outcome = yield* g.charge({
              trade_id: yield* Ids.make("trd"),
              merchant_id: "m",
              amount: usd,
              source: card(number),
              off_session
            })
            expect([number, outcome]).toMatchObject([number, { _tag: "Failed", code, decline_class }])
          }
          const saved = yield* g.saveCard({ merchant_id: "m", customer_id: "c", source: card(number) })
          expect([number, saved]).toMatchObject([number, { _tag: "Failed", code }])
        }
        // Stripe's test payment methods for the same cards
        for (const [id, code] of [
          ["pm_card_chargeDeclinedStolenCard", "stolen_card"],
          ["pm_card_chargeDeclinedLostCard", "lost_card"],
          ["pm_card_radarBlock", "fraudulent"],
          ["pm_card_chargeDeclinedExpiredCard", "expired_card"]
        ] as const) {
          const outcome = yield* g.charge({
            trade_id: yield* Ids.make("trd"),
            merchant_id: "m",
            amount: usd,
            source: { _tag: "PaymentMethod", id },
            off_session: false
          })
          expect([id, outcome]).toMatchObject([id, { _tag: "Failed", code }])
        }
      }).pipe(Effect.provide(SandboxGateway.layer())),
    30_000
  )

  it.effect(
    "a saved card whose expiry passes is an expired card; forced declines carry their class",
    () =>
      Effect.gen(function* () {
        const g = yield* Ports.PaymentGateway
        const controls = yield* SandboxGateway.SandboxControls
        yield* TestClock.setTime(Date.UTC(2030, 0, 1))
        const first = yield* g.charge({
          trade_id: yield* Ids.make("trd"),
          merchant_id: "m",
          amount: usd,
          source: { _tag: "Card", card: { number: "4242424242424242", exp_month: 1, exp_year: 2030, cvc: "123" } },
          off_session: false
        })
        const token = first._tag === "Succeeded" ? Option.getOrThrow(first.token) : ""
        const renew = (id: string) =>
          g.charge({ trade_id: id, merchant_id: "m", amount: usd, source: { _tag: "Token", token }, off_session: true })
        yield* controls.declineNextOffSession(1, "stolen_card")
        expect(yield* renew(yield* Ids.make("trd"))).toMatchObject({ code: "stolen_card", decline_class: "hard" })
        yield* controls.declineNextOffSession(1)
        expect(yield* renew(yield* Ids.make("trd"))).toMatchObject({ code: "card_declined", decline_class: "soft" })
        expect((yield* renew(yield* Ids.make("trd")))._tag).toBe("Succeeded")
        yield* TestClock.setTime(Date.UTC(2030, 1, 1))
        expect(yield* renew(yield* Ids.make("trd"))).toMatchObject({
          code: "expired_card",
          decline_class: "expired_card"
        })
        expect(
          yield* g.charge({
            trade_id: yield* Ids.make("trd"),
            merchant_id: "m",
            amount: usd,
            source: { _tag: "Token", token: "tok_nope" },
            off_session: true
          })
        ).toMatchObject({ code: "invalid_token", decline_class: "hard" })
      }).pipe(Effect.provide(SandboxGateway.layer())),
    30_000
  )
})
