/**
 * The contract of a `PaymentGateway` adapter: outcomes as a closed union, idempotency by
 * (trade id, attempt) and refund id, refunds never above the charge. Run it against the sandbox and any
 * real gateway's test mode.
 *
 * @since 0.1.0
 */
import { expect, layer } from "@effect/vitest"
import { Ids, Money, Ports } from "@recur/core"
import { Effect, type Layer, Option } from "effect"

/**
 * Card numbers the gateway under test maps to each outcome.
 *
 * @since 0.1.0
 */
export interface Cards {
  readonly succeed: string
  readonly decline: string
  readonly insufficient: string
}

const card = (number: string): Ports.CardInput => ({ number, exp_month: 12, exp_year: 2099, cvc: "123" })

/**
 * Registers the gateway suite.
 *
 * @since 0.1.0
 */
export const suite = <E>(name: string, gateway: Layer.Layer<Ports.PaymentGateway, E>, cards: Cards) =>
  layer(gateway)(`PaymentGateway contract: ${name}`, (it) => {
    const usd = (n: bigint) => Money.make(n, "USD")
    const charge = (number: string, amount = 3000n, extra: Partial<Ports.ChargeRequest> = {}) =>
      Effect.gen(function* () {
        const trade_id = yield* Ids.make("trd")
        const outcome = yield* (yield* Ports.PaymentGateway).charge({
          trade_id,
          merchant_id: "mch_1",
          amount: usd(amount),
          source: { _tag: "Card", card: card(number) },
          off_session: false,
          ...extra
        })
        return { trade_id, outcome }
      })

    it.effect("a good card succeeds and yields a reusable token", () =>
      Effect.gen(function* () {
        const g = yield* Ports.PaymentGateway
        const { outcome } = yield* charge(cards.succeed)
        expect(outcome._tag).toBe("Succeeded")
        if (outcome._tag !== "Succeeded") return
        expect(outcome.last4).toBe(cards.succeed.slice(-4))
        // an expiry, when the gateway tells one, is the card's
        if (outcome.exp_month !== undefined || outcome.exp_year !== undefined)
          expect([outcome.exp_month, outcome.exp_year]).toEqual([
            card(cards.succeed).exp_month,
            card(cards.succeed).exp_year
          ])
        const token = Option.getOrThrow(outcome.token)
        expect(token).not.toContain(cards.succeed)
        const renewal = yield* g.charge({
          trade_id: yield* Ids.make("trd"),
          merchant_id: "mch_1",
          amount: usd(3000n),
          source: { _tag: "Token", token },
          off_session: true
        })
        expect(renewal._tag).toBe("Succeeded")
        if (renewal._tag === "Succeeded" && renewal.exp_year !== undefined)
          expect(renewal.exp_year).toBe(card(cards.succeed).exp_year)
      })
    )

    it.effect("declines carry their codes", () =>
      Effect.gen(function* () {
        expect((yield* charge(cards.decline)).outcome).toMatchObject({ _tag: "Failed", code: "card_declined" })
        expect((yield* charge(cards.insufficient)).outcome).toMatchObject({
          _tag: "Failed",
          code: "insufficient_funds"
        })
        expect((yield* charge("4242424242424241")).outcome).toMatchObject({ _tag: "Failed" })
      })
    )

    it.effect(
      "a saved card charges nothing, shows only brand, last 4 and expiry, and its token charges off-session",
      () =>
        Effect.gen(function* () {
          const g = yield* Ports.PaymentGateway
          const saved = yield* g.saveCard({ merchant_id: "mch_1", customer_id: "cus_1", card: card(cards.succeed) })
          expect(saved).toMatchObject({ _tag: "Saved", last4: cards.succeed.slice(-4), exp_month: 12, exp_year: 2099 })
          if (saved._tag !== "Saved") return
          expect(saved.token).not.toContain(cards.succeed)
          const renewal = yield* g.charge({
            trade_id: yield* Ids.make("trd"),
            merchant_id: "mch_1",
            amount: usd(3000n),
            source: { _tag: "Token", token: saved.token },
            off_session: true
          })
          expect(renewal._tag).toBe("Succeeded")
          const refused = yield* g.saveCard({ merchant_id: "mch_1", customer_id: "cus_1", card: card(cards.decline) })
          expect(refused).toMatchObject({ _tag: "Failed", code: "card_declined" })
          const invalid = yield* g.saveCard({
            merchant_id: "mch_1",
            customer_id: "cus_1",
            card: card("4242424242424241")
          })
          expect(invalid._tag).toBe("Failed")
          const badMonth = yield* g.saveCard({
            merchant_id: "mch_1",
            customer_id: "cus_1",
            card: { ...card(cards.succeed), exp_month: 13 }
          })
          expect(badMonth._tag).toBe("Failed")
        })
    )

    it.effect("charging one trade twice charges once", () =>
      Effect.gen(function* () {
        const g = yield* Ports.PaymentGateway
        const { outcome, trade_id } = yield* charge(cards.succeed)
        const again = yield* g.charge({
          trade_id,
          merchant_id: "mch_1",
          amount: usd(3000n),
          source: { _tag: "Card", card: card(cards.succeed) },
          off_session: false
        })
        expect(again).toEqual(outcome)
        expect(yield* g.retrieve(trade_id)).toEqual(outcome)
      })
    )

    it.effect("a new attempt after a decline is charged; a repeated (trade, attempt) answers its first outcome", () =>
      Effect.gen(function* () {
        const g = yield* Ports.PaymentGateway
        const { outcome, trade_id } = yield* charge(cards.decline)
        expect(outcome._tag).toBe("Failed")
        const attempt = (attempt: number, number: string) =>
          g.charge({
            trade_id,
            attempt,
            merchant_id: "mch_1",
            amount: usd(3000n),
            source: { _tag: "Card", card: card(number) },
            off_session: false
          })
        // the same attempt again, even with another card: the first answer, nothing charged
        expect(yield* attempt(1, cards.succeed)).toEqual(outcome)
        const second = yield* attempt(2, cards.succeed)
        expect(second._tag).toBe("Succeeded")
        expect(yield* attempt(2, cards.succeed)).toEqual(second)
        expect(yield* attempt(2, cards.decline)).toEqual(second)
        expect(yield* g.retrieve(trade_id)).toEqual(second)
      })
    )

    it.effect("refunds: idempotent by refund id, never above the charge", () =>
      Effect.gen(function* () {
        const g = yield* Ports.PaymentGateway
        const { trade_id } = yield* charge(cards.succeed, 1000n)
        const r1 = yield* Ids.make("ref")
        expect((yield* g.refund({ refund_id: r1, trade_id, amount: usd(600n) }))._tag).toBe("Succeeded")
        expect((yield* g.refund({ refund_id: r1, trade_id, amount: usd(600n) }))._tag).toBe("Succeeded")
        expect((yield* g.refund({ refund_id: yield* Ids.make("ref"), trade_id, amount: usd(500n) }))._tag).toBe(
          "Failed"
        )
        expect((yield* g.refund({ refund_id: yield* Ids.make("ref"), trade_id, amount: usd(400n) }))._tag).toBe(
          "Succeeded"
        )
        const declined = yield* charge(cards.decline)
        expect(
          (yield* g.refund({ refund_id: yield* Ids.make("ref"), trade_id: declined.trade_id, amount: usd(1n) }))._tag
        ).toBe("Failed")
      })
    )
  })
