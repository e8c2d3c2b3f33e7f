/**
 * The sandbox payment gateway: deterministic outcomes by test card number (the contract's
 * table, and a card per decline class, Stripe's numbers where Stripe has one), so every payment
 * flow can be exercised without a processor. Charges are idempotent by trade id and refunds by
 * refund id; tokens carry the card's behaviour, never its number. Every decline names its class
 * (`hard`, `soft`, `expired_card`), as Stripe's codes are classed by `@recur/payment-stripe`.
 *
 * @since 0.1.0
 */
import { type DunningPolicy, type Money, Ports } from "@recur/core"
import { Clock, Context, Effect, Layer, Option, Ref } from "effect"
import * as ChallengePage from "./ChallengePage.js"

/**
 * How a test card behaves.
 *
 * @since 0.1.0
 */
export type Behaviour =
  | "succeed"
  | "decline"
  | "insufficient"
  | "three_d_secure"
  | "always_authenticate"
  | "later_decline"
  | "later_stolen_card"
  | "later_expired_card"
  | "unknown"
  | "lost_card"
  | "stolen_card"
  | "fraudulent"
  | "expired_card"
  | "processing_error"
  | "velocity"
  | "do_not_honor"
  | "invalid_account"

/**
 * A decline as the sandbox answers it: the code (Stripe's decline code, as the Stripe adapter
 * names a decline), the message and the class.
 *
 * @since 0.1.0
 */
export interface SandboxDecline {
  readonly code: string
  readonly message: string
  readonly decline_class: DunningPolicy.DeclineClass
}

/**
 * The declines of the sandbox by code, each with its class (the Stripe adapter's table for the
 * same codes): what a declining test card, a forced decline (`declineNextOffSession`) and the
 * sandbox's own checks answer.
 *
 * @since 0.1.0
 */
export const declines: Readonly<Record<string, SandboxDecline>> = Object.fromEntries(
  (
    [
      ["card_declined", "Your card was declined.", "soft"],
      ["insufficient_funds", "Your card has insufficient funds.", "soft"],
      ["processing_error", "An error occurred while processing your card. Try again in a little bit.", "soft"],
      ["card_velocity_exceeded", "Your card has exceeded its balance or credit limit.", "soft"],
      ["authentication_required", "Your card was declined. This transaction requires authentication.", "soft"],
      ["lost_card", "Your card was declined.", "hard"],
      ["stolen_card", "Your card was declined.", "hard"],
      ["fraudulent", "Your card was declined.", "hard"],
      ["do_not_honor", "Your card was declined.", "hard"],
      ["invalid_account", "Your card was declined.", "hard"],
      ["incorrect_number", "The card number is incorrect.", "hard"],
      ["incorrect_cvc", "The card's security code is incorrect.", "hard"],
      ["expired_card", "Your card has expired.", "expired_card"]
    ] as const
  ).map(([code, message, decline_class]) => [code, { code, message, decline_class }])
)

/** The sandbox's decline for `code` as a charge outcome (an unknown code is a soft decline). */
const declined = (code: string, message?: string): Ports.ChargeOutcome => {
  const d = declines[code]
  return Ports.ChargeOutcome.Failed({
    code,
    message: message ?? d?.message ?? "Your card was declined.",
    decline_class: d?.decline_class ?? "soft"
  })
}

/** The decline each declining behaviour answers on every charge. */
const declineOf: Partial<Record<Behaviour, string>> = {
  decline: "card_declined",
  insufficient: "insufficient_funds",
  lost_card: "lost_card",
  stolen_card: "stolen_card",
  fraudulent: "fraudulent",
  expired_card: "expired_card",
  processing_error: "processing_error",
  velocity: "card_velocity_exceeded",
  do_not_honor: "do_not_honor",
  invalid_account: "invalid_account"
}

/**
 * The decline each "later" behaviour answers on a saved card's charges (renewals, retries): the
 * card attaches (checkout, a saved card) as Stripe's 4000 0000 0000 0341 does, then declines.
 */
const laterDeclineOf: Partial<Record<Behaviour, string>> = {
  later_decline: "card_declined",
  later_stolen_card: "stolen_card",
  later_expired_card: "expired_card"
}

/**
 * The contract's test cards.
 *
 * @since 0.1.0
 */
export const testCards: Readonly<Record<string, Behaviour>> = {
  "4242424242424242": "succeed",
  "4000000000000002": "decline",
  "4000000000009995": "insufficient",
  "4000000000003220": "three_d_secure",
  // the issuer wants its cardholder every time: 3-D Secure on session, `authentication_required` off session
  "4000002760003184": "always_authenticate",
  // attach fine, then decline every charge of the saved card: soft (Stripe's 0341), and Recur's
  // own per class (Stripe has none), so a renewal can meet a hard or expired-card decline
  "4000000000000341": "later_decline",
  "4000000000000358": "later_stolen_card",
  "4000000000000366": "later_expired_card",
  // the contract's: an unknown outcome (Stripe's 0119 is a processing error; see 4000000000000150)
  "4000000000000119": "unknown",
  // a card per decline class, Stripe's test numbers (docs.stripe.com/testing#declined-payments)
  "4000000000009987": "lost_card",
  "4000000000009979": "stolen_card",
  "4100000000000019": "fraudulent",
  "4000000000000069": "expired_card",
  "4000000000006975": "velocity",
  // Recur's own, where Stripe has none (or its number is the contract's unknown outcome)
  "4000000000000150": "processing_error",
  "4000000000000168": "do_not_honor",
  "4000000000000176": "invalid_account"
}

/**
 * Stripe's test payment methods, as the sandbox answers them (the card each stands for; every
 * one expires 12/2034): a payment method "collected" by a processor's form.
 *
 * @since 0.1.0
 */
export const testPaymentMethods: Readonly<Record<string, string>> = {
  pm_card_visa: "4242424242424242",
  pm_card_mastercard: "5555555555554444",
  pm_card_chargeDeclined: "4000000000000002",
  pm_card_chargeDeclinedInsufficientFunds: "4000000000009995",
  pm_card_chargeDeclinedLostCard: "4000000000009987",
  pm_card_chargeDeclinedStolenCard: "4000000000009979",
  pm_card_radarBlock: "4100000000000019",
  pm_card_chargeDeclinedExpiredCard: "4000000000000069",
  pm_card_chargeDeclinedVelocityLimitExceeded: "4000000000006975",
  pm_card_chargeDeclinedProcessingError: "4000000000000150",
  pm_card_authenticationRequired: "4000000000003220"
}

/** The card a new payment source stands for, or why it is unknown. */
const cardOfSource = (source: Ports.NewPaymentSource): Ports.CardInput | undefined =>
  source._tag === "Card"
    ? source.card
    : testPaymentMethods[source.id] !== undefined
      ? { number: testPaymentMethods[source.id]!, exp_month: 12, exp_year: 2034, cvc: "123" }
      : undefined

const behaviourOf = (number: string): Behaviour => testCards[number.replace(/[\s-]/g, "")] ?? "succeed"

const brandOf = (number: string): string =>
  /^4/.test(number) ? "visa" : /^(5[1-5]|2[2-7])/.test(number) ? "mastercard" : /^3[47]/.test(number) ? "amex" : "card"

interface TradeState {
  readonly outcome: Ports.ChargeOutcome
  readonly amount: Money.Money
  readonly behaviour: Behaviour
  readonly token: string
  readonly brand: string
  readonly last4: string
  readonly refunded: bigint
}

/**
 * Options of the sandbox.
 *
 * @since 0.1.0
 */
export interface Options {
  /** Base of the 3-D Secure challenge URL; the trade id is appended (`/sandbox/3ds/{trade_id}`). */
  readonly challengeBaseUrl?: string
}

const RATE_LIMITED: Ports.UnavailableReason = {
  reason: "processor_unavailable",
  code: "rate_limit",
  message: "The processor is busy: nothing was charged."
}

/** An outcome naming the processor's reference of its charge (an unknown one names none). */
const named = (outcome: Ports.ChargeOutcome, reference: string): Ports.ChargeOutcome => {
  switch (outcome._tag) {
    case "Succeeded":
      return Ports.ChargeOutcome.Succeeded({ ...outcome, reference })
    case "RequiresAction":
      return Ports.ChargeOutcome.RequiresAction({ redirect_url: outcome.redirect_url, reference })
    case "Failed":
      return Ports.ChargeOutcome.Failed({
        code: outcome.code,
        message: outcome.message,
        decline_class: outcome.decline_class,
        reference
      })
    default:
      return outcome
  }
}

const rand = () =>
  [...globalThis.crypto.getRandomValues(new Uint8Array(9))].map((b) => b.toString(36).padStart(2, "0")).join("")

/**
 * Builds a sandbox gateway, with its test controls.
 *
 * @since 0.1.0
 */
export const make = (options: Options = {}) =>
  Effect.gen(function* () {
    // Mutable maps, changed only inside synchronous steps: copying a map per charge made every
    // charge O(charges so far), a quadratic slowdown found by the billing benchmark.
    const trades = new Map<string, TradeState>()
    const refunds = new Map<string, Ports.RefundOutcome>()
    const attempts = new Map<string, number>()
    const seenAttempts = new Map<string, Ports.ChargeOutcome>()
    const forcedDeclines = yield* Ref.make<{ readonly n: number; readonly code: string }>({
      n: 0,
      code: "card_declined"
    })
    const forcedRefundFailures = yield* Ref.make(0)
    const forcedRefundPending = yield* Ref.make(0)
    const forcedUnavailable = yield* Ref.make<{ readonly n: number; readonly outcome?: Ports.UnavailableReason }>({
      n: 0
    })
    /** The next forced unavailability, if one is ordered (`unavailableNext`). */
    const unavailable = Ref.modify(forcedUnavailable, (f) =>
      f.n > 0 && f.outcome !== undefined
        ? ([f.outcome, { n: f.n - 1, outcome: f.outcome }] as const)
        : ([undefined, f] as const)
    )
    /** Card set-ups waiting for their 3-D Secure challenge: the card's outcome once authenticated. */
    const setups = new Map<
      string,
      {
        readonly merchant_id: string
        readonly customer_id: string
        readonly return_url: string
        /** What the set-up answers: RequiresAction until the cardholder answers the challenge. */
        outcome: Ports.SaveCardOutcome
        /** The card's outcome once authenticated. */
        readonly saved: Ports.SaveCardOutcome
      }
    >()
    const forcedRefundUnknown = yield* Ref.make(0)
    const pendingRefunds = new Set<string>()
    const base = options.challengeBaseUrl ?? "/sandbox/3ds"

    /** The expiry a sandbox token carries (`tok_sandbox_<behaviour>_<brand>_<last4>_<month>_<year>_…`). */
    const expiryOf = (token: string) => {
      const parts = token.split("_")
      return { exp_month: Number(parts[5]), exp_year: Number(parts[6]) }
    }

    const record = (tradeId: string, state: TradeState) => Effect.sync(() => void trades.set(tradeId, state))

    const decide = (request: Ports.ChargeRequest, now: number): Omit<TradeState, "refunded"> | Ports.ChargeOutcome => {
      let behaviour: Behaviour
      let token: string
      let brand: string
      let last4: string
      if (request.source._tag !== "Token") {
        const card = cardOfSource(request.source)
        if (card === undefined)
          return Ports.ChargeOutcome.Failed({
            code: "resource_missing",
            message: "No such payment method.",
            decline_class: "hard"
          })
        const digits = card.number.replace(/[\s-]/g, "")
        if (!Ports.luhnValid(digits)) return declined("incorrect_number")
        const expiry = Date.UTC(card.exp_year, card.exp_month, 1)
        if (!Number.isInteger(card.exp_month) || card.exp_month < 1 || card.exp_month > 12 || expiry <= now) {
          return declined("expired_card", "The card has expired.")
        }
        if (!/^\d{3,4}$/.test(card.cvc)) return declined("incorrect_cvc")
        behaviour = behaviourOf(digits)
        brand = brandOf(digits)
        last4 = digits.slice(-4)
        token = `tok_sandbox_${behaviour.replace(/_/g, "-")}_${brand}_${last4}_${card.exp_month}_${card.exp_year}_${rand()}`
      } else {
        const parts = request.source.token.split("_")
        if (parts[0] !== "tok" || parts[1] !== "sandbox" || parts.length < 8) {
          // a saved card the processor does not know can never pay: a new one is needed
          return Ports.ChargeOutcome.Failed({
            code: "invalid_token",
            message: "Unknown payment token.",
            decline_class: "hard"
          })
        }
        behaviour = parts[2]!.replace(/-/g, "_") as Behaviour
        brand = parts[3]!
        last4 = parts[4]!
        token = request.source.token
        if (Date.UTC(Number(parts[6]), Number(parts[5]), 1) <= now)
          return declined("expired_card", "The card has expired.")
      }
      const succeeded = Ports.ChargeOutcome.Succeeded({
        transaction_id: `txn_${rand()}`,
        token: Option.some(token),
        brand,
        last4,
        ...expiryOf(token)
      })
      const outcome = (() => {
        const always = declineOf[behaviour]
        if (always !== undefined) return declined(always)
        switch (behaviour) {
          case "succeed":
            return succeeded
          case "three_d_secure":
            return request.off_session
              ? succeeded
              : Ports.ChargeOutcome.RequiresAction({ redirect_url: `${base}/${request.trade_id}` })
          case "always_authenticate":
            return request.off_session
              ? declined("authentication_required")
              : Ports.ChargeOutcome.RequiresAction({ redirect_url: `${base}/${request.trade_id}` })
          case "later_decline":
          case "later_stolen_card":
          case "later_expired_card":
            return request.source._tag !== "Token" ? succeeded : declined(laterDeclineOf[behaviour]!)
          case "unknown":
            return Ports.ChargeOutcome.Unknown()
          default:
            return declined("card_declined")
        }
      })()
      return { outcome, amount: request.amount, behaviour, token, brand, last4 }
    }

    const gateway = Ports.PaymentGateway.of({
      charge: Effect.fn("SandboxGateway.charge")(function* (request: Ports.ChargeRequest) {
        // Idempotent per (trade, attempt); a newer attempt supersedes an older failed one.
        const key = `${request.trade_id}:${request.attempt ?? 1}`
        const existing = trades.get(request.trade_id)
        if (existing && existing.outcome._tag !== "Failed") return existing.outcome
        const seen = seenAttempts.get(key)
        if (seen) return seen
        // the processor could not take it: nothing recorded, the same attempt may come again
        const down = yield* unavailable
        if (down !== undefined) return Ports.ChargeOutcome.Unavailable(down)
        attempts.set(request.trade_id, (attempts.get(request.trade_id) ?? 0) + 1)
        const forced = request.off_session
          ? yield* Ref.modify(forcedDeclines, (f) =>
              f.n > 0 ? ([f.code, { n: f.n - 1, code: f.code }] as const) : ([undefined, f] as const)
            )
          : undefined
        // a card's expiry is compared with the merchant's clock the engine passes (a sandbox
        // merchant's frozen time), else Effect's Clock
        const decided =
          forced !== undefined ? declined(forced) : decide(request, request.now ?? (yield* Clock.currentTimeMillis))
        // the sandbox's reference of the attempt (a processor's charge id), as a processor names it
        const outcome = named("_tag" in decided ? decided : decided.outcome, `sbx_${key}`)
        if (!("_tag" in decided)) yield* record(request.trade_id, { ...decided, outcome, refunded: 0n })
        seenAttempts.set(key, outcome)
        return outcome
      }),
      retrieve: Effect.fn("SandboxGateway.retrieve")(function* (tradeId: string) {
        const state = trades.get(tradeId)
        if (!state) return Ports.ChargeOutcome.Failed({ code: "no_such_charge", message: "No charge for this trade." })
        if (state.outcome._tag === "Unknown") {
          // The processor did take the payment: reconciliation learns it now.
          const settled = Ports.ChargeOutcome.Succeeded({
            transaction_id: `txn_${rand()}`,
            token: Option.some(state.token),
            brand: state.brand,
            last4: state.last4,
            ...expiryOf(state.token)
          })
          yield* record(tradeId, { ...state, outcome: settled })
          return settled
        }
        return state.outcome
      }),
      cancel: Effect.fn("SandboxGateway.cancel")(function* (tradeId: string) {
        const state = trades.get(tradeId)
        if (state?.outcome._tag !== "RequiresAction") return yield* gateway.retrieve(tradeId)
        const canceled = Ports.ChargeOutcome.Failed({
          code: "payment_canceled",
          message: "The payment was canceled before it was authenticated."
        })
        yield* record(tradeId, { ...state, outcome: canceled })
        return canceled
      }),
      refund: Effect.fn("SandboxGateway.refund")(function* ({
        amount,
        refund_id,
        trade_id,
        reference
      }: {
        readonly refund_id: string
        readonly trade_id: string
        readonly amount: Money.Money
        readonly charges?: Ports.ChargeReferences | undefined
        readonly reference?: string | undefined
      }) {
        // a refund named before is read by its reference; by our refund id otherwise
        const byReference =
          reference !== undefined
            ? [...refunds.values()].find(
                (r) => (r._tag === "Succeeded" || r._tag === "Pending") && r.refund_transaction_id === reference
              )
            : undefined
        if (byReference) return byReference
        const done = refunds.get(refund_id)
        if (done) return done
        // a refund the processor accepts and settles later: pending now, its outcome when asked again
        if (
          !pendingRefunds.has(refund_id) &&
          (yield* Ref.modify(forcedRefundPending, (n) => [n > 0, Math.max(0, n - 1)] as const))
        ) {
          pendingRefunds.add(refund_id)
          return Ports.RefundOutcome.Pending({ refund_transaction_id: `rtx_${refund_id}` })
        }
        const state = trades.get(trade_id)
        const forced = yield* Ref.modify(forcedRefundFailures, (n) => [n > 0, Math.max(0, n - 1)] as const)
        const outcome = forced
          ? Ports.RefundOutcome.Failed({ code: "refund_declined", message: "The processor declined the refund." })
          : // a charge from before a restart is unknown here (the sandbox keeps no books): the engine's
            // own reservation already bounds the amount, so the sandbox refunds it
            state !== undefined && state.outcome._tag !== "Succeeded"
            ? Ports.RefundOutcome.Failed({ code: "charge_not_refundable", message: "The charge did not succeed." })
            : state === undefined
              ? amount.amount > 0n
                ? Ports.RefundOutcome.Succeeded({ refund_transaction_id: `rtx_${rand()}` })
                : Ports.RefundOutcome.Failed({ code: "amount_too_large", message: "Nothing to refund." })
              : amount.currency !== state.amount.currency ||
                  amount.amount <= 0n ||
                  state.refunded + amount.amount > state.amount.amount
                ? Ports.RefundOutcome.Failed({
                    code: "amount_too_large",
                    message: "The refund exceeds what is left to refund."
                  })
                : Ports.RefundOutcome.Succeeded({ refund_transaction_id: `rtx_${rand()}` })
        if (state && outcome._tag === "Succeeded")
          yield* record(trade_id, { ...state, refunded: state.refunded + amount.amount })
        refunds.set(refund_id, outcome)
        // made, but its answer lost on the way back (a timeout): asking again tells it
        if (yield* Ref.modify(forcedRefundUnknown, (n) => [n > 0, Math.max(0, n - 1)] as const))
          return Ports.RefundOutcome.Unknown()
        return outcome
      }),
      saveCard: Effect.fn("SandboxGateway.saveCard")(function* ({
        customer_id,
        merchant_id,
        now: at,
        return_url,
        source
      }: {
        readonly merchant_id: string
        readonly customer_id: string
        readonly source: Ports.NewPaymentSource
        readonly return_url?: string | undefined
        readonly now?: number | undefined
      }) {
        const down = yield* unavailable
        if (down !== undefined) return Ports.SaveCardOutcome.Unavailable(down)
        const now = at ?? (yield* Clock.currentTimeMillis)
        // the card is checked as a first charge checks it, for nothing: a card that declines
        // charges is refused; one that declines only later (…0341, …0358, …0366) is saved, as processors do
        const decided = decide(
          {
            trade_id: "setup",
            merchant_id: "setup",
            amount: { amount: 0n, currency: "USD" } as Money.Money,
            source,
            off_session: false
          },
          now
        )
        if ("_tag" in decided)
          return decided._tag === "Failed"
            ? Ports.SaveCardOutcome.Failed({ code: decided.code, message: decided.message })
            : Ports.SaveCardOutcome.Failed({ code: "card_not_saved", message: "The card could not be saved." })
        if (decided.outcome._tag === "Failed")
          return Ports.SaveCardOutcome.Failed({ code: decided.outcome.code, message: decided.outcome.message })
        const saved = Ports.SaveCardOutcome.Saved({
          token: decided.token,
          brand: decided.brand,
          last4: decided.last4,
          ...expiryOf(decided.token)
        })
        // a card whose issuer wants its cardholder every time is challenged when they are here
        if (decided.behaviour !== "always_authenticate") return saved
        if (return_url === undefined)
          return Ports.SaveCardOutcome.Failed({
            code: "authentication_required",
            message: "The card's issuer asks for authentication (3-D Secure) in the cardholder's browser."
          })
        const setup_id = `seti_sandbox_${rand()}`
        const challenge = Ports.SaveCardOutcome.RequiresAction({ redirect_url: `${base}/${setup_id}`, setup_id })
        setups.set(setup_id, { merchant_id, customer_id, return_url, outcome: challenge, saved })
        return challenge
      }),
      completeSaveCard: Effect.fn("SandboxGateway.completeSaveCard")(function* ({
        customer_id,
        merchant_id,
        setup_id
      }: {
        readonly merchant_id: string
        readonly customer_id: string
        readonly setup_id: string
      }) {
        return yield* Effect.sync(() => {
          const setup = setups.get(setup_id)
          if (setup === undefined || setup.merchant_id !== merchant_id || setup.customer_id !== customer_id)
            return Ports.SaveCardOutcome.Failed({ code: "resource_missing", message: "No such card set-up." })
          return setup.outcome
        })
      }),
      // the test challenge, served by the host at `base` (the controls are defined below)
      challengePage: ChallengePage.make({
        completeChallenge: (tradeId, approve) => controls.completeChallenge(tradeId, approve),
        completeSetupChallenge: (setupId, approve) => controls.completeSetupChallenge(setupId, approve)
      })
    })

    const controls: Controls = {
      /** Completes (or fails) a pending 3-D Secure challenge. */
      completeChallenge: (tradeId: string, approve: boolean) =>
        Effect.gen(function* () {
          const state = trades.get(tradeId)
          if (state?.outcome._tag !== "RequiresAction") return false
          yield* record(tradeId, {
            ...state,
            outcome: approve
              ? Ports.ChargeOutcome.Succeeded({
                  transaction_id: `txn_${rand()}`,
                  token: Option.some(state.token),
                  brand: state.brand,
                  last4: state.last4,
                  ...expiryOf(state.token)
                })
              : Ports.ChargeOutcome.Failed({
                  code: "authentication_failed",
                  message: "3-D Secure authentication failed."
                })
          })
          return true
        }),
      /** Declines the next `n` off-session charges, whatever the card (dunning that recovers). */
      declineNextOffSession: (n: number, code = "card_declined") => Ref.set(forcedDeclines, { n, code }),
      unavailableNext: (n: number, outcome: Ports.UnavailableReason = RATE_LIMITED) =>
        Ref.set(forcedUnavailable, { n, outcome }),
      completeSetupChallenge: (setupId: string, approve: boolean) =>
        Effect.sync(() => {
          const setup = setups.get(setupId)
          if (setup === undefined) return undefined
          if (setup.outcome._tag === "RequiresAction")
            setup.outcome = approve
              ? setup.saved
              : Ports.SaveCardOutcome.Failed({
                  code: "setup_intent_authentication_failure",
                  message: "3-D Secure authentication failed."
                })
          const back = new URL(setup.return_url)
          back.searchParams.set("setup_intent", setupId)
          return back.toString()
        }),
      /** Fails the next `n` refunds (a `v2.refunds.failed` scenario). */
      failNextRefunds: (n: number) => Ref.set(forcedRefundFailures, n),
      /** The next `n` new refunds are accepted pending; each settles when it is asked about again. */
      pendNextRefunds: (n: number) => Ref.set(forcedRefundPending, n),
      /** The next `n` refunds are made but answer Unknown (the answer lost); asking again tells them. */
      unknownNextRefunds: (n: number) => Ref.set(forcedRefundUnknown, n),
      /** How many times the processor was really asked to charge this trade (idempotency proof). */
      chargeAttempts: (tradeId: string) => Effect.sync(() => attempts.get(tradeId) ?? 0),
      /** Total refunded on a trade. */
      refunded: (tradeId: string) => Effect.sync(() => trades.get(tradeId)?.refunded ?? 0n)
    }
    return { gateway, controls } as const
  })

/**
 * The sandbox's test controls (3-D Secure completion, forced declines, charge counts).
 *
 * @since 0.1.0
 */
export interface Controls {
  /** Completes (or fails) a pending 3-D Secure challenge; `false` when none is pending. */
  readonly completeChallenge: (tradeId: string, approve: boolean) => Effect.Effect<boolean>
  /**
   * Declines the next `n` off-session charges, whatever the card (dunning that recovers), with
   * `code` (default `card_declined`, a soft decline; `stolen_card` a hard one, `expired_card`…:
   * see {@link declines}).
   */
  readonly declineNextOffSession: (n: number, code?: string) => Effect.Effect<void>
  /**
   * The next `n` charges and card set-ups find the processor unavailable (`Unavailable`, by
   * default a rate limit): nothing charged or saved.
   */
  readonly unavailableNext: (n: number, outcome?: Ports.UnavailableReason) => Effect.Effect<void>
  /**
   * The cardholder answers a card set-up's 3-D Secure challenge (`seti_sandbox_…`): where they
   * go back to (the set-up's return URL with `setup_intent`), or none when there is no such set-up.
   */
  readonly completeSetupChallenge: (setupId: string, approve: boolean) => Effect.Effect<string | undefined>
  /** Fails the next `n` refunds (a `v2.refunds.failed` scenario). */
  readonly failNextRefunds: (n: number) => Effect.Effect<void>
  /** The next `n` new refunds are accepted pending; each settles when it is asked about again. */
  readonly pendNextRefunds: (n: number) => Effect.Effect<void>
  /** The next `n` refunds are made but answer Unknown (the answer lost); asking again tells them. */
  readonly unknownNextRefunds: (n: number) => Effect.Effect<void>
  /** How many times the processor was really asked to charge this trade (idempotency proof). */
  readonly chargeAttempts: (tradeId: string) => Effect.Effect<number>
  /** Total refunded on a trade. */
  readonly refunded: (tradeId: string) => Effect.Effect<bigint>
}

/**
 * The sandbox's test controls as a service.
 *
 * @since 0.1.0
 */
export class SandboxControls extends Context.Service<SandboxControls, Controls>()(
  "@recur/payment-sandbox/SandboxControls"
) {}

/**
 * The sandbox as the engine's `PaymentGateway`, plus its controls.
 *
 * @since 0.1.0
 */
export const layer = (options: Options = {}): Layer.Layer<Ports.PaymentGateway | SandboxControls> =>
  Layer.effectContext(
    Effect.map(make(options), ({ controls, gateway }) =>
      Context.make(Ports.PaymentGateway, gateway).pipe(Context.add(SandboxControls, controls))
    )
  )
