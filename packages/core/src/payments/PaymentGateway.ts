/**
 * The payment processor's port: charges, refunds, saved cards, account checks, the challenge
 * page (re-exported by `Ports`); what pays is in `PaymentSources`, the processor's events in
 * `GatewayEvents`.
 */
import { Context, Data, type Effect, type Option, type Result } from "effect"
import type * as Money from "../money/Money.js"
import type { DeclineClass } from "./DunningPolicy.js"
import type { ProcessorEvent } from "./GatewayEvents.js"
import type { NewPaymentSource } from "./PaymentSources.js"

/**
 * The processor's own reference of one attempt of a trade's charge (Stripe's `pi_…`), as the
 * gateway named it in an outcome: the engine keeps it on the trade and hands it back, so the
 * gateway reads the charge by id (never by a search, never by re-sending a create whose
 * idempotency key the processor may have forgotten).
 *
 * @since 0.1.0
 */
export interface ChargeReference {
  readonly attempt: number
  readonly reference: string
}

/**
 * What the engine knows of a trade's charges at the processor: its current attempt and the
 * references of the attempts the gateway named (see {@link ChargeReference}).
 *
 * @since 0.1.0
 */
export interface ChargeReferences {
  readonly attempt: number
  readonly references: ReadonlyArray<ChargeReference>
}

/**
 * What a charge is: keyed by our trade id, which is also the gateway's idempotency key.
 *
 * @since 0.1.0
 */
export interface ChargeRequest {
  readonly trade_id: string
  /**
   * 1 for the first attempt; a customer's retry after a decline is a new attempt. Default 1.
   * The pair (trade_id, attempt) is the idempotency key: the engine sends the same pair again
   * when it does not know whether the first call reached the processor, and the gateway must
   * answer it with the first call's outcome rather than charge again.
   */
  readonly attempt?: number
  readonly merchant_id: string
  /**
   * Our customer, when the charge has one: a processor that keeps customers (Stripe) saves a new
   * payment method on its customer for this one.
   */
  readonly customer_id?: string | undefined
  readonly amount: Money.Money
  /** A new card or collected payment method (first payment) or a saved token (renewals, retries: off-session). */
  readonly source: NewPaymentSource | { readonly _tag: "Token"; readonly token: string }
  readonly off_session: boolean
  readonly return_url?: string
  /**
   * The processor references of this trade's attempts known so far (earlier attempts, and this
   * one's on a re-send). A gateway reads them before it charges: an attempt already made is
   * answered as it is, an earlier one that succeeded answers the charge, and an earlier one still
   * waiting (3-D Secure) is canceled first, so a trade is never paid twice.
   */
  readonly references?: ReadonlyArray<ChargeReference> | undefined
  /**
   * The instant of the charge on the merchant's clock (Unix ms; a sandbox merchant's frozen
   * time): a gateway that checks a card's expiry itself (the sandbox) compares with it. A
   * processor keeps its own clock and ignores it.
   */
  readonly now?: number | undefined
}

/**
 * The outcome of a charge, in the engine's vocabulary (a closed union).
 *
 * @since 0.1.0
 */
export type ChargeOutcome = Data.TaggedEnum<{
  Succeeded: {
    readonly transaction_id: string
    readonly token: Option.Option<string>
    readonly brand: string
    readonly last4: string
    /** The card's expiry when the processor tells it (the portal shows the card on file with it). */
    readonly exp_month?: number | undefined
    readonly exp_year?: number | undefined
    /** The processor's reference of the charge that succeeded (kept on the trade). */
    readonly reference?: string | undefined
  }
  RequiresAction: {
    readonly redirect_url: string
    /** The processor's reference of the charge waiting for the payer (kept on the trade). */
    readonly reference?: string | undefined
  }
  Failed: {
    readonly code: string
    readonly message: string
    /** The processor's reference of the declined charge, when one was made (kept on the trade). */
    readonly reference?: string | undefined
    /**
     * What kind of decline it is, as the gateway classes its processor's code: `hard` (the card
     * can never pay: stolen, lost, fraudulent, closed, do not honor…), `expired_card`, or `soft`
     * (it may pay later: insufficient funds, a processing error…). The merchant's dunning policy
     * says what each does. Absent: `soft`.
     */
    readonly decline_class?: DeclineClass | undefined
  }
  /** The gateway did not answer (timeout): ask again later with `retrieve`. Never a throw. */
  Unknown: {}
  /**
   * Nothing was charged and the payer's card was not asked: the processor could not take the
   * charge now (`processor_unavailable`: a rate limit, a lock timeout) or refuses the merchant's
   * set-up (`merchant_configuration`: a rolled or wrong key, a restricted key without the
   * permission, an amount under the processor's minimum). Never a decline: the engine does not
   * dun, tries again later with backoff and tells the operator. `code` is the processor's.
   */
  Unavailable: UnavailableReason
}>

/**
 * Why a processor could not take a call that is not the payer's fault (see
 * `ChargeOutcome.Unavailable`): the reason, the processor's code and a message without secrets.
 *
 * @since 0.1.0
 */
export interface UnavailableReason {
  readonly reason: "processor_unavailable" | "merchant_configuration"
  readonly code: string
  readonly message: string
  /**
   * The processor refused the amount as under its minimum charge (Stripe's `amount_too_small`
   * from an account settling in another currency, where the minimum is the settlement
   * currency's, at the day's rate): the engine carries an off-session invoice's amount to the
   * next invoice, as one under `minimumCharge`, instead of trying again.
   */
  readonly below_minimum?: boolean | undefined
}

/**
 * Constructors of {@link ChargeOutcome}.
 *
 * @since 0.1.0
 */
export const ChargeOutcome = Data.taggedEnum<ChargeOutcome>()

/**
 * The outcome of a refund.
 *
 * @since 0.1.0
 */
export type RefundOutcome = Data.TaggedEnum<{
  Succeeded: { readonly refund_transaction_id: string }
  Failed: { readonly code: string; readonly message: string }
  /** Accepted, not settled yet (some processors settle refunds later): asked again later. */
  Pending: { readonly refund_transaction_id: string }
  /**
   * The processor did not answer (a timeout, a 5xx): the refund may have been made. The amount
   * stays reserved and the refund is asked about again later (by its reference, never by a
   * second create); never a failure.
   */
  Unknown: {}
}>

/**
 * Constructors of {@link RefundOutcome}.
 *
 * @since 0.1.0
 */
export const RefundOutcome = Data.taggedEnum<RefundOutcome>()

/**
 * The outcome of saving a card for later charges (a payment method update, the processor's
 * "setup"): the token to charge and what may be shown of the card, or why it was refused.
 *
 * @since 0.1.0
 */
export type SaveCardOutcome = Data.TaggedEnum<{
  Saved: {
    readonly token: string
    readonly brand: string
    readonly last4: string
    readonly exp_month: number
    readonly exp_year: number
  }
  Failed: { readonly code: string; readonly message: string }
  /**
   * The card's issuer wants the cardholder to authenticate (3-D Secure) before the card can be
   * saved: send them to `redirect_url`; they come back to the request's `return_url`, and
   * `completeSaveCard` with `setup_id` then answers the outcome. Only when a `return_url` was given.
   */
  RequiresAction: { readonly redirect_url: string; readonly setup_id: string }
  /** Nothing was checked: the processor is unavailable or refuses the merchant's set-up (see `ChargeOutcome.Unavailable`). */
  Unavailable: UnavailableReason
}>

/**
 * Constructors of {@link SaveCardOutcome}.
 *
 * @since 0.1.0
 */
export const SaveCardOutcome = Data.taggedEnum<SaveCardOutcome>()

/**
 * The keys a merchant gives for its own processor account, to verify before they are saved: the
 * secret and the publishable key, and the mode they must be of (a live merchant's live keys, a
 * sandbox merchant's test keys).
 *
 * @since 0.1.0
 */
export interface AccountKeys {
  readonly merchant_id: string
  readonly mode: "test" | "live"
  readonly secret_key: string
  readonly publishable_key: string
}

/**
 * What the processor said of a merchant's keys: `Verified` (both keys answer, of the mode asked,
 * and belong to the same account `account_id`); `Refused` (a key is wrong: `param` names it,
 * `reason` says why, never the key); `Unreachable` (the processor did not answer: nothing can be
 * told, try again).
 *
 * @since 0.1.0
 */
export type AccountCheck = Data.TaggedEnum<{
  Verified: { readonly account_id: string }
  Refused: { readonly param: "secret_key" | "publishable_key"; readonly reason: string }
  Unreachable: { readonly message: string }
}>

/**
 * Constructors of {@link AccountCheck}.
 *
 * @since 0.1.0
 */
export const AccountCheck = Data.taggedEnum<AccountCheck>()

/**
 * What a gateway's own challenge page shows (see {@link ChallengePage}): its title and the body
 * of the page as HTML, which the host serves inside its own page.
 *
 * @since 0.1.0
 */
export interface ChallengeContent {
  readonly title: string
  readonly html: string
}

/**
 * What a payer's answer on a gateway's own challenge page leads to.
 *
 * @since 0.1.0
 */
export type ChallengeAnswer = Data.TaggedEnum<{
  /** A card set-up's challenge was answered: the cardholder goes back to `url` (the set-up's `return_url`). */
  ReturnTo: { readonly url: string }
  /**
   * A charge's challenge was answered (or was not waiting any more): the engine asks about the
   * trade now (`Reconciliation.reconcileTrade`) and the payer sees where their payment stands.
   */
  Charge: { readonly trade_id: string }
  /** No such challenge: the page says so. */
  Unknown: { readonly content: ChallengeContent }
}>

/**
 * Constructors of {@link ChallengeAnswer}.
 *
 * @since 0.1.0
 */
export const ChallengeAnswer = Data.taggedEnum<ChallengeAnswer>()

/**
 * A 3-D Secure challenge page the gateway serves through the engine's host, for a gateway with
 * no processor page of its own (the sandbox's test challenge): the host mounts it where the
 * gateway's `redirect_url`s point, shows {@link ChallengePage.show} and hands the payer's form
 * to {@link ChallengePage.answer}. A processor with its own page (Stripe) has none.
 *
 * @since 0.1.0
 */
export interface ChallengePage {
  /** The page of a challenge (a trade id or a card set-up id, the last part of its `redirect_url`). */
  readonly show: (challengeId: string) => Effect.Effect<ChallengeContent>
  /** The payer's answer: the fields of the page's form. */
  readonly answer: (
    challengeId: string,
    form: Readonly<Record<string, string | undefined>>
  ) => Effect.Effect<ChallengeAnswer>
}

/**
 * A payment processor. Calls are idempotent by (trade id, attempt) for charges and by refund id
 * for refunds: calling twice never charges or refunds twice (the port's contract suite checks it).
 *
 * @example
 * const gateway = yield* PaymentGateway
 * const outcome = yield* gateway.charge({ trade_id, merchant_id, amount, source: { _tag: "Token", token }, off_session: true })
 * @since 0.1.0
 */
export class PaymentGateway extends Context.Service<
  PaymentGateway,
  {
    readonly charge: (request: ChargeRequest) => Effect.Effect<ChargeOutcome>
    /**
     * Asks again about a charge whose outcome was unknown or pending an action. With `known`, the
     * charges are read by their references; the trade is paid if any of its attempts succeeded.
     */
    readonly retrieve: (tradeId: string, known?: ChargeReferences) => Effect.Effect<ChargeOutcome>
    /**
     * Gives up a charge that waits for the payer (3-D Secure): afterwards it can no longer
     * succeed. Answers the charge's outcome then — `Failed` once canceled, `Succeeded` when the
     * payer finished first. Absent: the engine only asks (`retrieve`) before it ends a checkout.
     */
    readonly cancel?: (tradeId: string, known?: ChargeReferences) => Effect.Effect<ChargeOutcome>
    /**
     * Refunds part of a trade's payment, idempotent by `refund_id`. `charges`: the trade's charge
     * references (the refund goes to the one that succeeded); `reference`: the processor's id of
     * this refund when an earlier call named it — the refund is then read by it, never made again.
     */
    readonly refund: (request: {
      readonly refund_id: string
      readonly trade_id: string
      readonly amount: Money.Money
      readonly charges?: ChargeReferences | undefined
      readonly reference?: string | undefined
    }) => Effect.Effect<RefundOutcome>
    /**
     * Checks a card with the processor and saves it for off-session charges, charging nothing:
     * a declined or invalid card is `Failed`.
     */
    readonly saveCard: (request: {
      readonly merchant_id: string
      readonly customer_id: string
      readonly source: NewPaymentSource
      /**
       * Where a 3-D Secure challenge sends the cardholder back (a page of ours, the payer present):
       * with it, a card whose issuer asks for authentication is `RequiresAction`; without it, `Failed`.
       */
      readonly return_url?: string | undefined
      /** The instant on the merchant's clock, as {@link ChargeRequest}'s `now`. */
      readonly now?: number | undefined
    }) => Effect.Effect<SaveCardOutcome>
    /**
     * The outcome of a card saving that waited for 3-D Secure (`SaveCardOutcome.RequiresAction`),
     * asked again once the cardholder is back: `Saved`, `Failed`, or still `RequiresAction`. A
     * `setup_id` not made for this merchant's customer is `Failed`. Absent: no gateway challenges.
     */
    readonly completeSaveCard?: (request: {
      readonly merchant_id: string
      readonly customer_id: string
      readonly setup_id: string
    }) => Effect.Effect<SaveCardOutcome>
    /**
     * The smallest charge the merchant's processor takes in a currency (Stripe: 0.50 USD,
     * 0.30 GBP, 50 JPY…), none when it has no minimum. The engine never sends a charge under it:
     * such an invoice is settled by carrying its amount to the customer's next invoice. Absent:
     * no minimum.
     */
    readonly minimumCharge?: (request: {
      readonly merchant_id: string
      readonly currency: string
    }) => Effect.Effect<Option.Option<Money.Money>>
    /**
     * Reads a webhook the processor sent for a merchant (its body, headers and the merchant):
     * checks its signature with the merchant's webhook secret and says what it means; a bad
     * signature or body is a failure with the reason. Absent for a gateway without webhooks.
     */
    readonly webhook?: (request: {
      readonly provider: string
      readonly merchant_id: string
      readonly body: string
      readonly headers: Readonly<Record<string, string | undefined>>
    }) => Effect.Effect<Result.Result<ProcessorEvent, string>>
    /**
     * Asks the processor whether a merchant's own account keys work before they are saved
     * (`PaymentSettings.set`). Absent: the gateway takes no merchant's own account, and keys for
     * one are refused.
     */
    readonly verifyAccount?: (keys: AccountKeys) => Effect.Effect<AccountCheck>
    /**
     * Why the gateway cannot take a merchant's payments now (a live merchant without a working
     * processor account: `PaymentSettings.paymentsRefusal`), or none when it can. Asked before a
     * checkout session opens and when the server starts; a charge for such a merchant is refused
     * by the gateway itself. Absent: it takes every merchant's payments.
     */
    readonly refusal?: (merchantId: string) => Effect.Effect<Option.Option<string>>
    /**
     * Why a merchant's processor keys may not move from account `from` (`null`: not known, keys
     * saved before the account was kept) to account `to` now, or none when they may: its customers'
     * saved cards live in the old account, where the new keys cannot charge them. Asked by
     * `PaymentSettings.set` once the new keys are verified; a reason refuses the change (`StateConflict`).
     * Absent: every change is allowed.
     */
    readonly accountChange?: (request: {
      readonly merchant_id: string
      readonly from: string | null
      readonly to: string
    }) => Effect.Effect<Option.Option<string>>
    /**
     * The gateway's own 3-D Secure challenge page, served by the host (see {@link ChallengePage}).
     * Absent: the processor serves its challenges itself.
     */
    readonly challengePage?: ChallengePage
  }
>()("@recur/core/PaymentGateway") {}
