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
  /** A card declined as stolen (a hard decline; Stripe's 4000000000009979): its case runs when given. */
  readonly stolen?: string
  /** A card declined as expired (Stripe's 4000000000000069): its case runs when given. */
  readonly expired?: string
}

/**
 * What the suite pays with: a new payment source for each outcome (card details, or payment
 * methods a processor's form collected, e.g. Stripe's `pm_card_visa`), one the processor refuses
 * as invalid, and what the succeeding one shows.
 *
 * @since 0.1.0
 */
export interface Sources {
  readonly succeed: Ports.NewPaymentSource
  readonly decline: Ports.NewPaymentSource
  readonly insufficient: Ports.NewPaymentSource
  readonly invalid: Ports.NewPaymentSource
  /** The expiry when the test knows it (a live processor's test cards expire in a year of its choosing). */
  readonly shows: { readonly last4: string; readonly exp_month?: number; readonly exp_year?: number }
  /**
   * A card whose issuer asks for 3-D Secure every time (Stripe's `pm_card_authenticationRequired`,
   * the sandbox's 4000002760003184): its cases run when given.
   */
  readonly challenge?: Ports.NewPaymentSource
  /**
   * Makes the processor unavailable to the next charge (a rate limit, an outage: the sandbox's
   * `unavailableNext`, a fault of a fake); its case runs when given.
   */
  readonly makeUnavailable?: Effect.Effect<void, never, any>
  /** A source declined as stolen (a `hard` decline): its case runs when given. */
  readonly stolen?: Ports.NewPaymentSource
  /** A source declined as expired (an `expired_card` decline): its case runs when given. */
  readonly expired?: Ports.NewPaymentSource
}

const card = (number: string): Ports.CardInput => ({ number, exp_month: 12, exp_year: 2099, cvc: "123" })

/**
 * {@link Sources} of card numbers (expiring 12/2099).
 *
 * @since 0.1.0
 */
export const cardSources = (cards: Cards): Sources => ({
  succeed: { _tag: "Card", card: card(cards.succeed) },
  decline: { _tag: "Card", card: card(cards.decline) },
  insufficient: { _tag: "Card", card: card(cards.insufficient) },
  invalid: { _tag: "Card", card: card("4242424242424241") },
  shows: { last4: cards.succeed.slice(-4), exp_month: 12, exp_year: 2099 },
  ...(cards.stolen !== undefined ? { stolen: { _tag: "Card", card: card(cards.stolen) } } : {}),
  ...(cards.expired !== undefined ? { expired: { _tag: "Card", card: card(cards.expired) } } : {})
})

/**
 * What the engine keeps of a trade's charges after the outcomes of its attempts 1, 2, …: the
 * processor references they named (a gateway that names none falls back to its own lookup).
 *
 * @since 0.1.0
 */
export const knownOf = (...outcomes: ReadonlyArray<Ports.ChargeOutcome>): Ports.ChargeReferences => ({
  attempt: outcomes.length,
  references: outcomes.flatMap((o, i) =>
    o._tag !== "Unknown" && o._tag !== "Unavailable" && o.reference !== undefined
      ? [{ attempt: i + 1, reference: o.reference }]
      : []
  )
})

/**
 * Faults the suite can order from the gateway under test (each optional: its cases are skipped
 * for a gateway that cannot stage it, e.g. a live processor).
 *
 * @since 0.1.0
 */
export interface Faults<R> {
  /** The next refund is made at the processor but its answer is lost (a timeout or a 5xx after). */
  readonly refundAnswerLost?: Effect.Effect<void, never, R>
}

/**
 * Registers the gateway suite.
 *
 * @since 0.1.0
 */
export const suite = <E, R = never>(
  name: string,
  gateway: Layer.Layer<Ports.PaymentGateway | R, E>,
  cards: Cards | Sources,
  faults: Faults<R> = {}
) =>
  layer(gateway, { timeout: 60_000 })(`PaymentGateway contract: ${name}`, (it) => {
    const sources: Sources = "shows" in cards ? cards : cardSources(cards)
    const usd = (n: bigint) => Money.make(n, "USD")
    const charge = (source: Ports.NewPaymentSource, amount = 3000n, extra: Partial<Ports.ChargeRequest> = {}) =>
      Effect.gen(function* () {
        const trade_id = yield* Ids.make("trd")
        const outcome = yield* (yield* Ports.PaymentGateway).charge({
          trade_id,
          merchant_id: "mch_1",
          amount: usd(amount),
          source,
          off_session: false,
          ...extra
        })
        return { trade_id, outcome }
      })

    it.effect("a good card succeeds and yields a reusable token", () =>
      Effect.gen(function* () {
        const g = yield* Ports.PaymentGateway
        const { outcome } = yield* charge(sources.succeed)
        expect(outcome._tag).toBe("Succeeded")
        if (outcome._tag !== "Succeeded") return
        expect(outcome.last4).toBe(sources.shows.last4)
        // an expiry, when the gateway tells one, is the card's
        if (sources.shows.exp_year !== undefined && (outcome.exp_month !== undefined || outcome.exp_year !== undefined))
          expect([outcome.exp_month, outcome.exp_year]).toEqual([sources.shows.exp_month, sources.shows.exp_year])
        const token = Option.getOrThrow(outcome.token)
        if (sources.succeed._tag === "Card") expect(token).not.toContain(sources.succeed.card.number)
        const renewal = yield* g.charge({
          trade_id: yield* Ids.make("trd"),
          merchant_id: "mch_1",
          amount: usd(3000n),
          source: { _tag: "Token", token },
          off_session: true
        })
        expect(renewal._tag).toBe("Succeeded")
        if (renewal._tag === "Succeeded" && renewal.exp_year !== undefined && sources.shows.exp_year !== undefined)
          expect(renewal.exp_year).toBe(sources.shows.exp_year)
      })
    )

    it.effect(
      "a charge of 0 (a free trial) saves the card, charging nothing: a reusable token; a declined card fails",
      () =>
        Effect.gen(function* () {
          const g = yield* Ports.PaymentGateway
          const { outcome } = yield* charge(sources.succeed, 0n)
          expect(outcome._tag).toBe("Succeeded")
          if (outcome._tag !== "Succeeded") return
          const renewal = yield* g.charge({
            trade_id: yield* Ids.make("trd"),
            merchant_id: "mch_1",
            amount: usd(3000n),
            source: { _tag: "Token", token: Option.getOrThrow(outcome.token) },
            off_session: true
          })
          expect(renewal._tag).toBe("Succeeded")
          expect((yield* charge(sources.decline, 0n)).outcome).toMatchObject({ _tag: "Failed" })
          // a gateway with a minimum charge takes a charge of exactly that minimum
          const minimum = g.minimumCharge
            ? yield* g.minimumCharge({ merchant_id: "mch_1", currency: "USD" })
            : Option.none()
          if (Option.isSome(minimum))
            expect((yield* charge(sources.succeed, minimum.value.amount)).outcome._tag).toBe("Succeeded")
        })
    )

    it.effect("declines carry their codes and their classes", () =>
      Effect.gen(function* () {
        expect((yield* charge(sources.decline)).outcome).toMatchObject({
          _tag: "Failed",
          code: "card_declined",
          decline_class: "soft"
        })
        expect((yield* charge(sources.insufficient)).outcome).toMatchObject({
          _tag: "Failed",
          code: "insufficient_funds",
          decline_class: "soft"
        })
        expect((yield* charge(sources.invalid)).outcome).toMatchObject({ _tag: "Failed" })
        if (sources.stolen !== undefined)
          expect((yield* charge(sources.stolen)).outcome).toMatchObject({
            _tag: "Failed",
            code: "stolen_card",
            decline_class: "hard"
          })
        if (sources.expired !== undefined)
          expect((yield* charge(sources.expired)).outcome).toMatchObject({
            _tag: "Failed",
            code: "expired_card",
            decline_class: "expired_card"
          })
      })
    )

    it.effect(
      "a saved card charges nothing, shows only brand, last 4 and expiry, and its token charges off-session",
      () =>
        Effect.gen(function* () {
          const g = yield* Ports.PaymentGateway
          const saved = yield* g.saveCard({ merchant_id: "mch_1", customer_id: "cus_1", source: sources.succeed })
          expect(saved).toMatchObject({ _tag: "Saved", ...sources.shows })
          if (saved._tag === "Saved") expect(saved.exp_year).toBeGreaterThan(2000)
          if (saved._tag !== "Saved") return
          if (sources.succeed._tag === "Card") expect(saved.token).not.toContain(sources.succeed.card.number)
          const renewal = yield* g.charge({
            trade_id: yield* Ids.make("trd"),
            merchant_id: "mch_1",
            amount: usd(3000n),
            source: { _tag: "Token", token: saved.token },
            off_session: true
          })
          expect(renewal._tag).toBe("Succeeded")
          const refused = yield* g.saveCard({ merchant_id: "mch_1", customer_id: "cus_1", source: sources.decline })
          expect(refused).toMatchObject({ _tag: "Failed", code: "card_declined" })
          const invalid = yield* g.saveCard({ merchant_id: "mch_1", customer_id: "cus_1", source: sources.invalid })
          expect(invalid._tag).toBe("Failed")
          if (sources.succeed._tag === "Card") {
            const badMonth = yield* g.saveCard({
              merchant_id: "mch_1",
              customer_id: "cus_1",
              source: { _tag: "Card", card: { ...sources.succeed.card, exp_month: 13 } }
            })
            expect(badMonth._tag).toBe("Failed")
          }
        })
    )

    it.effect("charging one trade twice charges once", () =>
      Effect.gen(function* () {
        const g = yield* Ports.PaymentGateway
        const { outcome, trade_id } = yield* charge(sources.succeed)
        const again = yield* g.charge({
          trade_id,
          merchant_id: "mch_1",
          amount: usd(3000n),
          source: sources.succeed,
          off_session: false
        })
        expect(again).toEqual(outcome)
        expect(yield* g.retrieve(trade_id, knownOf(outcome))).toEqual(outcome)
      })
    )

    it.effect(
      "giving up a charge that already ended (cancel) changes nothing: paid stays paid, declined stays declined",
      () =>
        Effect.gen(function* () {
          const g = yield* Ports.PaymentGateway
          // a gateway without `cancel` is only asked (`retrieve`) before a checkout ends
          const cancel = g.cancel ?? g.retrieve
          const paid = yield* charge(sources.succeed)
          expect(paid.outcome._tag).toBe("Succeeded")
          expect((yield* cancel(paid.trade_id, knownOf(paid.outcome)))._tag).toBe("Succeeded")
          expect((yield* g.retrieve(paid.trade_id, knownOf(paid.outcome)))._tag).toBe("Succeeded")
          const declined = yield* charge(sources.decline)
          expect(declined.outcome._tag).toBe("Failed")
          expect((yield* cancel(declined.trade_id, knownOf(declined.outcome)))._tag).toBe("Failed")
          expect((yield* g.retrieve(declined.trade_id, knownOf(declined.outcome)))._tag).toBe("Failed")
        })
    )

    it.effect("a new attempt after a decline is charged; a repeated (trade, attempt) answers its first outcome", () =>
      Effect.gen(function* () {
        const g = yield* Ports.PaymentGateway
        const { outcome, trade_id } = yield* charge(sources.decline)
        expect(outcome._tag).toBe("Failed")
        // as the engine sends it: with the references the earlier answers named
        const attempt = (attempt: number, source: Ports.NewPaymentSource, ...before: Array<Ports.ChargeOutcome>) =>
          g.charge({
            trade_id,
            attempt,
            merchant_id: "mch_1",
            amount: usd(3000n),
            source,
            off_session: false,
            references: knownOf(...before).references
          })
        // the same attempt again, even with another card: the first answer, nothing charged
        expect(yield* attempt(1, sources.succeed, outcome)).toEqual(outcome)
        const second = yield* attempt(2, sources.succeed, outcome)
        expect(second._tag).toBe("Succeeded")
        expect(yield* attempt(2, sources.succeed, outcome, second)).toEqual(second)
        expect(yield* attempt(2, sources.decline, outcome, second)).toEqual(second)
        expect(yield* g.retrieve(trade_id, knownOf(outcome, second))).toEqual(second)
      })
    )

    if (sources.makeUnavailable !== undefined) {
      const makeUnavailable = sources.makeUnavailable
      it.effect(
        "a processor that cannot take a charge answers Unavailable, never Failed: nothing is charged, the next attempt is",
        () =>
          Effect.gen(function* () {
            const g = yield* Ports.PaymentGateway
            yield* makeUnavailable
            const { outcome, trade_id } = yield* charge(sources.succeed)
            expect(outcome._tag).toBe("Unavailable")
            if (outcome._tag !== "Unavailable") return
            expect(["processor_unavailable", "merchant_configuration"]).toContain(outcome.reason)
            // the gateway cannot promise a retry: the engine retries an off-session charge, not a checkout
            expect(outcome.message).not.toMatch(/tried again|retried|will retry/i)
            expect((yield* g.retrieve(trade_id))._tag).not.toBe("Succeeded")
            const next = yield* g.charge({
              trade_id,
              attempt: 2,
              merchant_id: "mch_1",
              amount: usd(3000n),
              source: sources.succeed,
              off_session: false
            })
            expect(next._tag).toBe("Succeeded")
          })
      )
    }

    if (sources.challenge !== undefined) {
      const challenge = sources.challenge
      it.effect(
        "a card that asks for 3-D Secure: a charge and a card set-up with a return_url wait for the cardholder; without one it is never saved",
        () =>
          Effect.gen(function* () {
            const g = yield* Ports.PaymentGateway
            const { outcome } = yield* charge(challenge, 3000n, { return_url: "https://shop.example/back" })
            expect(outcome._tag).toBe("RequiresAction")
            if (outcome._tag === "RequiresAction") expect(outcome.redirect_url.length).toBeGreaterThan(0)
            const customer_id = yield* Ids.make("cus")
            const setup = yield* g.saveCard({
              merchant_id: "mch_1",
              customer_id,
              source: challenge,
              return_url: "https://shop.example/card"
            })
            expect(setup._tag).toBe("RequiresAction")
            if (setup._tag !== "RequiresAction") return
            expect(setup.redirect_url.length).toBeGreaterThan(0)
            if (g.completeSaveCard !== undefined) {
              // not answered yet: still waiting; another customer's asking finds nothing
              expect(
                (yield* g.completeSaveCard({ merchant_id: "mch_1", customer_id, setup_id: setup.setup_id }))._tag
              ).toBe("RequiresAction")
              expect(
                (yield* g.completeSaveCard({
                  merchant_id: "mch_1",
                  customer_id: "cus_other",
                  setup_id: setup.setup_id
                }))._tag
              ).toBe("Failed")
            }
            expect((yield* g.saveCard({ merchant_id: "mch_1", customer_id, source: challenge }))._tag).toBe("Failed")
          })
      )
    }

    it.effect("refunds: idempotent by refund id, never above the charge", () =>
      Effect.gen(function* () {
        const g = yield* Ports.PaymentGateway
        const { outcome, trade_id } = yield* charge(sources.succeed, 1000n)
        const charges = knownOf(outcome)
        const r1 = yield* Ids.make("ref")
        expect((yield* g.refund({ refund_id: r1, trade_id, amount: usd(600n), charges }))._tag).toBe("Succeeded")
        expect((yield* g.refund({ refund_id: r1, trade_id, amount: usd(600n), charges }))._tag).toBe("Succeeded")
        expect(
          (yield* g.refund({ refund_id: yield* Ids.make("ref"), trade_id, amount: usd(500n), charges }))._tag
        ).toBe("Failed")
        expect(
          (yield* g.refund({ refund_id: yield* Ids.make("ref"), trade_id, amount: usd(400n), charges }))._tag
        ).toBe("Succeeded")
        const declined = yield* charge(sources.decline)
        expect(
          (yield* g.refund({
            refund_id: yield* Ids.make("ref"),
            trade_id: declined.trade_id,
            amount: usd(1n),
            charges: knownOf(declined.outcome)
          }))._tag
        ).toBe("Failed")
      })
    )

    it.effect(
      "a charge is read by the reference it named: a later attempt of a paid trade answers the payment, charging nothing",
      () =>
        Effect.gen(function* () {
          const g = yield* Ports.PaymentGateway
          const { outcome, trade_id } = yield* charge(sources.succeed)
          expect(outcome._tag).toBe("Succeeded")
          expect(yield* g.retrieve(trade_id, knownOf(outcome))).toMatchObject({ _tag: "Succeeded" })
          // the payer pays again (a page that did not know yet): the trade's first payment answers
          const again = yield* g.charge({
            trade_id,
            attempt: 2,
            merchant_id: "mch_1",
            amount: usd(3000n),
            source: sources.succeed,
            off_session: false,
            references: knownOf(outcome).references
          })
          expect(again._tag).toBe("Succeeded")
          if (again._tag === "Succeeded" && outcome._tag === "Succeeded")
            expect(again.reference).toBe(outcome.reference)
        })
    )

    if (faults.refundAnswerLost !== undefined) {
      const lose = faults.refundAnswerLost
      it.effect("a refund whose answer was lost is Unknown, and asking again settles it without refunding twice", () =>
        Effect.gen(function* () {
          const g = yield* Ports.PaymentGateway
          const { outcome, trade_id } = yield* charge(sources.succeed, 1000n)
          const charges = knownOf(outcome)
          const refund_id = yield* Ids.make("ref")
          yield* lose
          expect(yield* g.refund({ refund_id, trade_id, amount: usd(600n), charges })).toMatchObject({
            _tag: "Unknown"
          })
          const settled = yield* g.refund({ refund_id, trade_id, amount: usd(600n), charges })
          expect(settled._tag).toBe("Succeeded")
          if (settled._tag !== "Succeeded") return
          // read by the reference it named: the same refund
          expect(
            yield* g.refund({
              refund_id,
              trade_id,
              amount: usd(600n),
              charges,
              reference: settled.refund_transaction_id
            })
          ).toEqual(settled)
          // made once: 400 is all that is left
          expect(
            (yield* g.refund({ refund_id: yield* Ids.make("ref"), trade_id, amount: usd(500n), charges }))._tag
          ).toBe("Failed")
        })
      )
    }
  })
