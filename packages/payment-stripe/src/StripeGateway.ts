/**
 * Stripe as Recur's `PaymentGateway`, on the official `stripe` SDK.
 *
 * - The card is collected by Stripe (Stripe.js's Payment Element makes a `pm_…` payment method
 *   in the payer's browser); this adapter never receives a card number and refuses one.
 * - A charge is a PaymentIntent created and confirmed at once, with the idempotency key
 *   `recur:<trade id>:<attempt>`: a retried call never charges twice. The first payment saves the
 *   payment method on a Stripe customer mapped 1:1 to ours (`setup_future_usage=off_session`);
 *   renewals, retries and upgrades confirm off session with the saved token.
 * - Outcomes map onto the port's closed union: `succeeded` → Succeeded; `requires_action`
 *   (3-D Secure) → RequiresAction with Stripe's redirect; a card error → Failed with Stripe's
 *   decline code; a timeout, a dropped connection or a 5xx → Unknown, reconciled by
 *   {@link retrieve} (a search of the trade's intents), never re-charged blindly.
 * - Refunds are idempotent by our refund id; a payment method update is a SetupIntent.
 *
 * @since 0.1.0
 */
import { Entities, Money, PaymentSettings, Ports, Secrets, Store } from "@recur/core"
import { Effect, Layer, Option, Result } from "effect"
import Stripe from "stripe"

/**
 * How to reach Stripe: the secret key (`sk_test_…` or `sk_live_…`), and for tests another
 * host (a local fake).
 *
 * @since 0.1.0
 */
export interface Options {
  readonly secretKey: string
  /** Another API base, e.g. `http://127.0.0.1:12111` (tests). Default Stripe's. */
  readonly apiBase?: string | undefined
  /** How long a call may take before its outcome is unknown. Default 30 s. */
  readonly timeoutMs?: number | undefined
}

/** The token of a saved payment method: its Stripe customer and payment method. */
const tokenOf = (customer: string, paymentMethod: string) => `${customer}:${paymentMethod}`
const parseToken = (token: string) => {
  const [customer, paymentMethod] = token.split(":")
  return customer?.startsWith("cus_") && paymentMethod?.startsWith("pm_") ? { customer, paymentMethod } : undefined
}

const quote = (value: string) => value.replace(/[\\']/g, (c) => `\\${c}`)

/** A Stripe client for the options. */
const client = (options: Options): Stripe => {
  const base = options.apiBase ? new URL(options.apiBase) : undefined
  return new Stripe(options.secretKey, {
    maxNetworkRetries: 0,
    timeout: options.timeoutMs ?? 30_000,
    telemetry: false,
    ...(base
      ? {
          host: base.hostname,
          port: base.port || (base.protocol === "https:" ? 443 : 80),
          protocol: base.protocol.replace(":", "") as "http" | "https"
        }
      : {})
  })
}

/** Whether an SDK error leaves the outcome unknown (nothing answered, or Stripe failed). */
const isUnknown = (e: unknown) =>
  e instanceof Stripe.errors.StripeConnectionError ||
  e instanceof Stripe.errors.StripeAPIError ||
  (e instanceof Stripe.errors.StripeError && (e.statusCode ?? 0) >= 500) ||
  !(e instanceof Stripe.errors.StripeError)

/** The code of a card error: the decline code when it says more than "generic". */
const codeOf = (
  e: { readonly decline_code?: string | undefined; readonly code?: string | undefined; readonly type: string },
  fallback = e.type
) => (e.decline_code !== undefined && e.decline_code !== "generic_decline" ? e.decline_code : (e.code ?? fallback))

/** How many of a customer's newest intents are read to find one whose answer was lost. */
const SCAN_LIMIT = 300

/** The port's outcome of a Stripe refund. */
const refundOutcomeOf = (refund: Stripe.Refund) =>
  refund.status === "failed" || refund.status === "canceled"
    ? Ports.RefundOutcome.Failed({ code: refund.failure_reason ?? "refund_failed", message: "The refund failed." })
    : refund.status === "succeeded"
      ? Ports.RefundOutcome.Succeeded({ refund_transaction_id: refund.id })
      : Ports.RefundOutcome.Pending({ refund_transaction_id: refund.id })

/**
 * The gateway on one Stripe account.
 *
 * @example
 * const gateway = StripeGateway.make({ secretKey: process.env.STRIPE_SECRET_KEY! })
 * @since 0.1.0
 */
export const make = (options: Options): Ports.PaymentGateway["Service"] => gatewayOn(client(options))

/** Whose a trade is: the merchant and our customer (their Stripe customer holds its intents). */
interface Owner {
  readonly merchantId: string
  readonly customerId: string
}

const gatewayOn = (stripe: Stripe, ownerOf?: (tradeId: string) => Effect.Effect<Owner | undefined>) => {
  const call = <A>(f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: (e) => e })

  /** The Stripe customer of one of our customers (found by its metadata, else created once). */
  const customerOf = (merchantId: string, customerId: string | undefined, fallbackKey: string) =>
    Effect.gen(function* () {
      const ours = customerId !== undefined ? `${merchantId}/${customerId}` : undefined
      if (ours !== undefined) {
        const found = yield* call(() =>
          stripe.customers.search({ query: `metadata['recur_customer']:'${quote(ours)}'`, limit: 1 })
        )
        if (found.data[0] !== undefined) return found.data[0].id
      }
      const created = yield* call(() =>
        stripe.customers.create(
          { metadata: { recur_merchant_id: merchantId, ...(ours !== undefined ? { recur_customer: ours } : {}) } },
          { idempotencyKey: `recur:customer:${ours ?? fallbackKey}` }
        )
      )
      return created.id
    })

  /** The port's outcome of a PaymentIntent. */
  const outcomeOf = (intent: Stripe.PaymentIntent) =>
    Effect.gen(function* () {
      switch (intent.status) {
        case "succeeded": {
          const pmId = typeof intent.payment_method === "string" ? intent.payment_method : intent.payment_method?.id
          const pm = pmId ? yield* call(() => stripe.paymentMethods.retrieve(pmId)) : undefined
          const customer = typeof intent.customer === "string" ? intent.customer : (intent.customer?.id ?? null)
          return Ports.ChargeOutcome.Succeeded({
            reference: intent.id,
            transaction_id: typeof intent.latest_charge === "string" ? intent.latest_charge : intent.id,
            token:
              customer !== null && pmId !== undefined && intent.setup_future_usage !== null
                ? Option.some(tokenOf(customer, pmId))
                : customer !== null && pmId !== undefined && pm?.customer === customer
                  ? Option.some(tokenOf(customer, pmId))
                  : Option.none(),
            brand: pm?.card?.brand ?? "card",
            last4: pm?.card?.last4 ?? "",
            ...(pm?.card ? { exp_month: pm.card.exp_month, exp_year: pm.card.exp_year } : {})
          })
        }
        case "requires_action": {
          const url = intent.next_action?.redirect_to_url?.url
          return url
            ? Ports.ChargeOutcome.RequiresAction({ redirect_url: url, reference: intent.id })
            : Ports.ChargeOutcome.Failed({
                code: "authentication_required",
                message: "The payment needs authentication in the payer's browser.",
                reference: intent.id
              })
        }
        case "requires_payment_method": {
          const error = intent.last_payment_error
          return Ports.ChargeOutcome.Failed({
            code: error ? codeOf(error, "card_declined") : "card_declined",
            message: error?.message ?? "The payment failed.",
            reference: intent.id
          })
        }
        case "processing":
        case "requires_confirmation":
        case "requires_capture":
          return Ports.ChargeOutcome.Unknown()
        case "canceled":
          return Ports.ChargeOutcome.Failed({
            code: "canceled",
            message: "The payment was canceled.",
            reference: intent.id
          })
        default:
          return Ports.ChargeOutcome.Unknown()
      }
    })

  /**
   * The intents of a trade, by their metadata. With the trade's owner known, from a list of the
   * owner's Stripe customer's intents, which is consistent at once; else by search, which Stripe
   * makes consistent within about a minute. Undefined when the owner's Stripe customer cannot be
   * found yet: nothing can be told.
   */
  const intentsOf = (tradeId: string, owner: Owner | undefined) =>
    Effect.gen(function* () {
      if (owner !== undefined) {
        // the owner's Stripe customer: by search once Stripe's index has it, else by the key that
        // made it (Stripe answers the same customer while it keeps the key, i.e. within a day, by
        // when search has long caught up)
        const customer = yield* customerOf(owner.merchantId, owner.customerId, `owner:${tradeId}`)
        return yield* call(async () => {
          const found: Array<Stripe.PaymentIntent> = []
          let seen = 0
          for await (const intent of stripe.paymentIntents.list({ customer, limit: 100 })) {
            if (intent.metadata.recur_trade_id === tradeId) found.push(intent)
            if (++seen >= SCAN_LIMIT) break
          }
          return found
        })
      }
      const found = yield* call(() =>
        stripe.paymentIntents.search({ query: `metadata['recur_trade_id']:'${quote(tradeId)}'`, limit: 100 })
      )
      return found.data
    })

  /** The latest of a trade's intents (of one attempt when given). */
  const latest = (intents: ReadonlyArray<Stripe.PaymentIntent>, attempt?: number) =>
    [...intents]
      .filter((i) => attempt === undefined || i.metadata.recur_attempt === String(attempt))
      .sort(
        (a, b) => Number(b.metadata.recur_attempt ?? 0) - Number(a.metadata.recur_attempt ?? 0) || b.created - a.created
      )[0]

  /** The trade's intents the engine named, read by id (consistent at once; no search, no list). */
  const intentsById = (references: ReadonlyArray<Ports.ChargeReference>) =>
    Effect.forEach(references, (r) =>
      Effect.map(
        call(() => stripe.paymentIntents.retrieve(r.reference)),
        (intent) => ({ attempt: r.attempt, intent })
      )
    )

  /** The Stripe customer of a trade's intents (the first that names one). */
  const customerIn = (intents: ReadonlyArray<{ readonly intent: Stripe.PaymentIntent }>) =>
    intents
      .map(({ intent }) => (typeof intent.customer === "string" ? intent.customer : intent.customer?.id))
      .find((c) => c !== undefined)

  /**
   * The intent of one attempt whose answer was lost (no reference came back: a timeout, a crash
   * before the outcome was recorded), from its Stripe customer's list of intents — a list is
   * consistent at once, and reading it never depends on an idempotency key Stripe prunes after
   * 24 hours. The newest first; the attempt is among the customer's latest intents.
   */
  const attemptIn = (customer: string, tradeId: string, attempt: number) =>
    call(async () => {
      let seen = 0
      for await (const intent of stripe.paymentIntents.list({ customer, limit: 100 })) {
        if (intent.metadata.recur_trade_id === tradeId && intent.metadata.recur_attempt === String(attempt))
          return intent
        if (++seen >= SCAN_LIMIT) break
      }
      return undefined
    })

  /**
   * A second intent of one trade that also succeeded (a race the checks before each attempt make
   * all but impossible): the trade is paid once, by the first; the extra payment is refunded in
   * full at Stripe (idempotent by the intent, and only what is left of it), with a warning log
   * line (`event=recur.payment.extra_refunded`) naming both intents. Recur's books never counted
   * it, so no refund record is made.
   */
  const refundExtra = (kept: Stripe.PaymentIntent, extra: Stripe.PaymentIntent) =>
    Effect.gen(function* () {
      const refunded = yield* call(async () => {
        let sum = 0
        for await (const r of stripe.refunds.list({ payment_intent: extra.id, limit: 100 }))
          if (r.status !== "failed" && r.status !== "canceled") sum += r.amount
        return sum
      })
      if (refunded >= extra.amount_received) return
      yield* call(() =>
        stripe.refunds.create(
          {
            payment_intent: extra.id,
            metadata: {
              recur_trade_id: extra.metadata.recur_trade_id ?? "",
              recur_duplicate_of: kept.id
            }
          },
          { idempotencyKey: `recur:extra:${extra.id}` }
        )
      )
      yield* Effect.logWarning("a trade was paid twice at Stripe: the extra payment is refunded").pipe(
        Effect.annotateLogs({
          event: "recur.payment.extra_refunded",
          trade_id: extra.metadata.recur_trade_id ?? "",
          kept: kept.id,
          refunded: extra.id
        })
      )
    }).pipe(Effect.ignore)

  /** Whether an intent still waits (for the payer, a confirmation or a method): it can be canceled. */
  const waiting = (intent: Stripe.PaymentIntent) =>
    intent.status === "requires_action" ||
    intent.status === "requires_confirmation" ||
    intent.status === "requires_payment_method"

  /**
   * What the trade's intents named by the engine say: paid when any of them succeeded (the first
   * that did); else the current attempt's outcome when it is among them; else undefined.
   */
  const verdictOf = (
    intents: ReadonlyArray<{ readonly attempt: number; readonly intent: Stripe.PaymentIntent }>,
    attempt: number
  ) =>
    Effect.gen(function* () {
      const paid = intents.filter((i) => i.intent.status === "succeeded")
      if (paid[0] !== undefined) {
        for (const extra of paid.slice(1)) yield* refundExtra(paid[0].intent, extra.intent)
        return yield* outcomeOf(paid[0].intent)
      }
      const current = intents.filter((i) => i.attempt === attempt).at(-1)
      return current !== undefined ? yield* outcomeOf(current.intent) : undefined
    })

  /**
   * A trade's outcome from the references the engine kept: read by id; an attempt without one
   * (its answer was lost) is looked for in its customer's list. Undefined without references
   * (a record written before they were kept): the caller falls back to finding the intents.
   */
  const byReference = (tradeId: string, known: Ports.ChargeReferences | undefined) =>
    Effect.gen(function* () {
      if (known === undefined || known.references.length === 0) return undefined
      const intents = yield* intentsById(known.references)
      const verdict = yield* verdictOf(intents, known.attempt)
      if (verdict !== undefined) return verdict
      const customer = customerIn(intents)
      const lost = customer !== undefined ? yield* attemptIn(customer, tradeId, known.attempt) : undefined
      if (lost !== undefined) return yield* outcomeOf(lost)
      // the current attempt was never made at Stripe: the latest attempt made tells the trade
      const made = [...intents].sort((a, b) => b.attempt - a.attempt)[0]!
      return yield* outcomeOf(made.intent)
    })

  const retrieve = (tradeId: string, known?: Ports.ChargeReferences) =>
    Effect.gen(function* () {
      const read = yield* byReference(tradeId, known)
      if (read !== undefined) return read
      const intents = yield* intentsOf(tradeId, ownerOf ? yield* ownerOf(tradeId) : undefined)
      // the customer is not visible yet: too early to say the charge does not exist
      if (intents === undefined) return Ports.ChargeOutcome.Unknown()
      const intent = latest(intents)
      if (intent === undefined)
        return Ports.ChargeOutcome.Failed({ code: "no_such_charge", message: "No charge for this trade." })
      return yield* outcomeOf(intent)
    }).pipe(Effect.catch(() => Effect.succeed(Ports.ChargeOutcome.Unknown())))

  /** Cancels the trade's latest intent while it still waits (for the payer, or a new method). */
  const cancel = (tradeId: string, known?: Ports.ChargeReferences) =>
    Effect.gen(function* () {
      if (known !== undefined && known.references.length > 0) {
        // every intent of the trade that still waits is canceled; one that succeeded pays it
        const intents = yield* intentsById(known.references)
        for (const { intent } of intents)
          if (waiting(intent)) yield* Effect.ignore(call(() => stripe.paymentIntents.cancel(intent.id)))
        return yield* retrieve(tradeId, known)
      }
      const intents = yield* intentsOf(tradeId, ownerOf ? yield* ownerOf(tradeId) : undefined)
      if (intents === undefined) return Ports.ChargeOutcome.Unknown()
      const intent = latest(intents)
      if (intent === undefined)
        return Ports.ChargeOutcome.Failed({ code: "no_such_charge", message: "No charge for this trade." })
      if (
        intent.status !== "requires_action" &&
        intent.status !== "requires_payment_method" &&
        intent.status !== "requires_confirmation"
      )
        return yield* outcomeOf(intent)
      // a payer finishing at this very moment wins: Stripe refuses to cancel a succeeded intent
      const canceled = yield* Effect.result(call(() => stripe.paymentIntents.cancel(intent.id)))
      return canceled._tag === "Success" ? yield* outcomeOf(canceled.success) : yield* retrieve(tradeId, known)
    }).pipe(Effect.catch(() => Effect.succeed(Ports.ChargeOutcome.Unknown())))

  const charge = (request: Ports.ChargeRequest) =>
    Effect.gen(function* () {
      const attempt = request.attempt ?? 1
      if (request.source._tag === "Card")
        return Ports.ChargeOutcome.Failed({
          code: "card_not_accepted",
          message: "Card numbers are collected by Stripe in the payer's browser, never sent to this server."
        })
      const saved = request.source._tag === "Token" ? parseToken(request.source.token) : undefined
      if (request.source._tag === "Token" && saved === undefined)
        return Ports.ChargeOutcome.Failed({ code: "invalid_token", message: "Unknown payment token." })
      // before any new attempt or re-send, what the trade's intents did: a trade is paid once
      const references = request.references ?? []
      const earlier = yield* intentsById(references)
      if (earlier.some((i) => i.intent.status === "succeeded"))
        return (yield* verdictOf(earlier, attempt)) ?? Ports.ChargeOutcome.Unknown()
      const same = earlier.filter((i) => i.attempt === attempt).at(-1)
      if (same !== undefined) return yield* outcomeOf(same.intent)
      // an earlier attempt still being processed may yet succeed: no second charge beside it
      if (earlier.some((i) => i.intent.status === "processing")) return Ports.ChargeOutcome.Unknown()
      for (const { intent } of earlier) {
        if (!waiting(intent)) continue
        // it can no longer succeed once canceled; a payer who finished first wins (Stripe refuses)
        const canceled = yield* Effect.result(call(() => stripe.paymentIntents.cancel(intent.id)))
        if (canceled._tag === "Failure") {
          const now = yield* call(() => stripe.paymentIntents.retrieve(intent.id))
          if (now.status === "succeeded") return yield* outcomeOf(now)
          if (waiting(now) || now.status === "processing") return Ports.ChargeOutcome.Unknown()
        }
      }
      const existing = saved?.customer ?? customerIn(earlier)
      const customer =
        existing ?? (yield* customerOf(request.merchant_id, request.customer_id, `${request.trade_id}:${attempt}`))
      // an attempt made before whose answer was lost (a crash, a timeout) is answered as it is,
      // read from the customer's list — never created again with a key Stripe may have forgotten
      if (existing !== undefined) {
        const lost = yield* attemptIn(existing, request.trade_id, attempt)
        if (lost !== undefined) return yield* outcomeOf(lost)
      }
      const created = yield* Effect.result(
        call(() =>
          stripe.paymentIntents.create(
            {
              amount: Number(request.amount.amount),
              currency: request.amount.currency.toLowerCase(),
              customer,
              payment_method: saved?.paymentMethod ?? (request.source as Ports.CollectedPaymentMethod).id,
              // cards only (and no method that leaves the page): 3-D Secure still returns to `return_url`
              automatic_payment_methods: { enabled: true, allow_redirects: "never" },
              confirm: true,
              ...(request.off_session
                ? { off_session: true }
                : {
                    setup_future_usage: "off_session" as const,
                    ...(request.return_url ? { return_url: request.return_url } : {})
                  }),
              metadata: {
                recur_trade_id: request.trade_id,
                recur_attempt: String(attempt),
                recur_merchant_id: request.merchant_id
              }
            },
            { idempotencyKey: `recur:${request.trade_id}:${attempt}` }
          )
        )
      )
      if (created._tag === "Success") return yield* outcomeOf(created.success)
      const e = created.failure
      // the same key with other parameters: the attempt was made; answer what it did
      if (e instanceof Stripe.errors.StripeIdempotencyError) {
        const owner =
          request.customer_id !== undefined
            ? { merchantId: request.merchant_id, customerId: request.customer_id }
            : undefined
        const first = latest((yield* intentsOf(request.trade_id, owner)) ?? [], attempt)
        return first ? yield* outcomeOf(first) : Ports.ChargeOutcome.Unknown()
      }
      if (e instanceof Stripe.errors.StripeCardError)
        return Ports.ChargeOutcome.Failed({
          code: codeOf(e),
          message: e.message,
          // the declined intent, read by id from then on
          ...(e.payment_intent?.id !== undefined ? { reference: e.payment_intent.id } : {})
        })
      if (isUnknown(e)) return Ports.ChargeOutcome.Unknown()
      const se = e as Stripe.errors.StripeError
      return Ports.ChargeOutcome.Failed({ code: se.code ?? se.type, message: se.message })
    }).pipe(Effect.catch(() => Effect.succeed(Ports.ChargeOutcome.Unknown())))

  const refund = (request: {
    readonly refund_id: string
    readonly trade_id: string
    readonly amount: { readonly amount: bigint }
    readonly charges?: Ports.ChargeReferences | undefined
    readonly reference?: string | undefined
  }) =>
    Effect.gen(function* () {
      // a refund Stripe named before is read by its id: never made a second time
      if (request.reference !== undefined)
        return refundOutcomeOf(yield* call(() => stripe.refunds.retrieve(request.reference!)))
      const known = request.charges?.references ?? []
      const intents =
        known.length > 0
          ? (yield* intentsById(known)).map((i) => i.intent)
          : yield* intentsOf(request.trade_id, ownerOf ? yield* ownerOf(request.trade_id) : undefined)
      const paid = (intents ?? []).find((i) => i.status === "succeeded")
      if (paid === undefined)
        return Ports.RefundOutcome.Failed({ code: "charge_not_refundable", message: "The charge did not succeed." })
      // a refund made before whose answer was lost is found among the intent's refunds (a list,
      // consistent at once), so a re-send after Stripe forgot its key (24 hours) never refunds twice
      const made = yield* call(async () => {
        for await (const r of stripe.refunds.list({ payment_intent: paid.id, limit: 100 }))
          if (r.metadata?.recur_refund_id === request.refund_id) return r
        return undefined
      })
      if (made !== undefined) return refundOutcomeOf(made)
      const done = yield* Effect.result(
        call(() =>
          stripe.refunds.create(
            {
              payment_intent: paid.id,
              amount: Number(request.amount.amount),
              metadata: { recur_refund_id: request.refund_id, recur_trade_id: request.trade_id }
            },
            { idempotencyKey: `recur:refund:${request.refund_id}` }
          )
        )
      )
      if (done._tag === "Failure") {
        const e = done.failure
        // no answer, or Stripe failed (a timeout, a 5xx): the refund may have been made — Unknown,
        // settled later by reading it, never a failure that gives the reserved amount back
        return e instanceof Stripe.errors.StripeError && !isUnknown(e)
          ? Ports.RefundOutcome.Failed({ code: e.code ?? e.type, message: e.message })
          : Ports.RefundOutcome.Unknown()
      }
      // an idempotent replay answers the refund as it was first made: ask for it as it is now
      const current =
        done.success.status === "pending" || done.success.status === "requires_action"
          ? yield* call(() => stripe.refunds.retrieve(done.success.id))
          : done.success
      return refundOutcomeOf(current)
    }).pipe(Effect.catch(() => Effect.succeed(Ports.RefundOutcome.Unknown())))

  const saveCard = (request: {
    readonly merchant_id: string
    readonly customer_id: string
    readonly source: Ports.NewPaymentSource
  }) =>
    Effect.gen(function* () {
      if (request.source._tag === "Card")
        return Ports.SaveCardOutcome.Failed({
          code: "card_not_accepted",
          message: "Card numbers are collected by Stripe in the payer's browser, never sent to this server."
        })
      const pmRef = request.source.id
      const customer = yield* customerOf(request.merchant_id, request.customer_id, `setup:${pmRef}`)
      const setup = yield* Effect.result(
        call(() =>
          stripe.setupIntents.create({
            customer,
            payment_method: pmRef,
            automatic_payment_methods: { enabled: true, allow_redirects: "never" },
            usage: "off_session",
            confirm: true,
            metadata: { recur_merchant_id: request.merchant_id, recur_customer_id: request.customer_id }
          })
        )
      )
      if (setup._tag === "Failure") {
        const e = setup.failure
        return e instanceof Stripe.errors.StripeError && !isUnknown(e)
          ? Ports.SaveCardOutcome.Failed({ code: codeOf(e), message: e.message })
          : Ports.SaveCardOutcome.Failed({
              code: "processor_unavailable",
              message: "Stripe did not answer; try again."
            })
      }
      const pmId =
        typeof setup.success.payment_method === "string"
          ? setup.success.payment_method
          : setup.success.payment_method?.id
      if (setup.success.status !== "succeeded" || pmId === undefined)
        return Ports.SaveCardOutcome.Failed({ code: "card_not_saved", message: "The card could not be saved." })
      const pm = yield* call(() => stripe.paymentMethods.retrieve(pmId))
      if (pm.card === undefined || pm.card === null)
        return Ports.SaveCardOutcome.Failed({ code: "card_not_saved", message: "Only cards are accepted." })
      return Ports.SaveCardOutcome.Saved({
        token: tokenOf(customer, pmId),
        brand: pm.card.brand,
        last4: pm.card.last4,
        exp_month: pm.card.exp_month,
        exp_year: pm.card.exp_year
      })
    }).pipe(
      Effect.catch(() =>
        Effect.succeed(
          Ports.SaveCardOutcome.Failed({ code: "processor_unavailable", message: "Stripe did not answer; try again." })
        )
      )
    )

  return Ports.PaymentGateway.of({ charge, retrieve, cancel, refund, saveCard })
}

/** The owner of a trade, read from its record through the storage port. */
const ownerFrom = (storage: Store.Storage["Service"]) => {
  const trades = storage.repository(Entities.trade)
  return (tradeId: string) =>
    Effect.map(Effect.orDie(trades.lookup("id", tradeId)), (t) =>
      Option.isSome(t)
        ? { merchantId: t.value.value.trade.merchant_id, customerId: t.value.value.trade.customer_id }
        : undefined
    )
}

/**
 * The gateway on one Stripe account as a Layer. It reads a trade's owner through the storage
 * port, so a trade's intents are found in its customer's list (consistent at once) rather than
 * by search.
 *
 * @example
 * const payments = StripeGateway.layer({ secretKey: process.env.STRIPE_SECRET_KEY! })
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<Ports.PaymentGateway, never, Store.Storage> =>
  Layer.effect(
    Ports.PaymentGateway,
    Effect.gen(function* () {
      return gatewayOn(client(options), ownerFrom(yield* Store.Storage))
    })
  )

const PAYMENT_EVENTS = new Set([
  "payment_intent.succeeded",
  "payment_intent.payment_failed",
  "payment_intent.processing",
  "payment_intent.requires_action",
  "payment_intent.canceled"
])

/**
 * What a Stripe webhook means, once its signature is checked with `secret` (the SDK's
 * `constructEvent`): a payment of a trade changed (`payment_intent.*`), a charge was refunded
 * (`charge.refunded`), a charge was disputed (`charge.dispute.*`: the dispute's intent names the
 * trade), or something the engine does not follow. A bad signature or body is a failure.
 */
const readWebhook = (stripe: Stripe, secret: string, body: string, signature: string | undefined) =>
  Effect.gen(function* () {
    let event: Stripe.Event
    try {
      event = stripe.webhooks.constructEvent(body, signature ?? "", secret)
    } catch (e) {
      return Result.fail(`the Stripe-Signature does not verify: ${(e as Error).message}`)
    }
    const object = event.data.object as unknown as Record<string, unknown>
    const tradeOfIntent = (intent: unknown) =>
      Effect.gen(function* () {
        if (typeof intent !== "string") return undefined
        const found = yield* Effect.option(Effect.tryPromise(() => stripe.paymentIntents.retrieve(intent)))
        return Option.isSome(found) ? found.value.metadata.recur_trade_id : undefined
      })
    const ignored = Ports.ProcessorEvent.Ignored({ event_id: event.id, type: event.type })
    if (PAYMENT_EVENTS.has(event.type)) {
      const trade = (object.metadata as Record<string, string> | undefined)?.recur_trade_id
      return Result.succeed(
        trade ? Ports.ProcessorEvent.PaymentUpdated({ event_id: event.id, trade_id: trade }) : ignored
      )
    }
    if (event.type === "charge.refunded") {
      const trade =
        (object.metadata as Record<string, string> | undefined)?.recur_trade_id ??
        (yield* tradeOfIntent(object.payment_intent))
      return Result.succeed(trade ? Ports.ProcessorEvent.Refunded({ event_id: event.id, trade_id: trade }) : ignored)
    }
    if (event.type === "charge.refund.updated" || event.type === "refund.updated" || event.type === "refund.failed") {
      const refund = (object.metadata as Record<string, string> | undefined)?.recur_refund_id
      return Result.succeed(
        refund ? Ports.ProcessorEvent.RefundUpdated({ event_id: event.id, refund_id: refund }) : ignored
      )
    }
    if (event.type.startsWith("charge.dispute.")) {
      const trade = yield* tradeOfIntent(object.payment_intent)
      if (!trade) return Result.succeed(ignored)
      const status = String(object.status)
      return Result.succeed(
        Ports.ProcessorEvent.Disputed({
          event_id: event.id,
          trade_id: trade,
          dispute_id: String(object.id),
          amount: Money.make(BigInt(Number(object.amount)), String(object.currency).toUpperCase()),
          reason: String(object.reason ?? "general"),
          status: status === "won" ? "won" : status === "lost" ? "lost" : "open"
        })
      )
    }
    return Result.succeed(ignored)
  })

/**
 * Each merchant's own Stripe account (`POST /api/v1/payment_settings`), the gateway beneath
 * (the sandbox) for merchants without one. A merchant's keys are read from its record and
 * decrypted with the master key; its client is kept until the key changes. A trade's retrieval
 * and refund go to the processor of the trade's merchant.
 *
 * @example
 * const billing = await createBilling({ payments: StripeGateway.perMerchant() })
 * @since 0.1.0
 */
export const perMerchant = (options: Omit<Options, "secretKey"> = {}) =>
  Layer.effect(
    Ports.PaymentGateway,
    Effect.gen(function* () {
      const fallback = yield* Ports.PaymentGateway
      const storage = yield* Store.Storage
      const secrets = yield* Secrets.Secrets
      const merchants = storage.repository(Entities.merchant)
      interface Kept {
        readonly key: string
        readonly stripe: Stripe
        readonly gateway: Ports.PaymentGateway["Service"]
        readonly webhookSecret: string | null
      }
      const clients = new Map<string, Kept>()
      /** The merchant's Stripe client and gateway, or none when it has no Stripe account. */
      const stripeOf = (merchantId: string) =>
        Effect.gen(function* () {
          const found = yield* Effect.orDie(merchants.get(merchantId, merchantId))
          const processor = Option.isSome(found) ? found.value.value.payment_processor : null
          if (processor === null || processor.provider !== "stripe") return undefined
          const key = `${processor.secret_key_ciphertext}/${processor.webhook_secret_ciphertext ?? ""}`
          const kept = clients.get(merchantId)
          if (kept !== undefined && kept.key === key) return kept
          const credentials = yield* Effect.provideService(
            PaymentSettings.credentialsOf(processor),
            Secrets.Secrets,
            secrets
          )
          const stripe = client({ ...options, secretKey: credentials.secret_key })
          const made: Kept = {
            key,
            stripe,
            gateway: gatewayOn(stripe, ownerOf),
            webhookSecret: credentials.webhook_secret
          }
          clients.set(merchantId, made)
          return made
        })
      const gatewayOf = (merchantId: string) => Effect.map(stripeOf(merchantId), (kept) => kept?.gateway ?? fallback)
      const ownerOf = ownerFrom(storage)
      const ofTrade = (tradeId: string) =>
        Effect.flatMap(ownerOf(tradeId), (owner) =>
          owner !== undefined ? gatewayOf(owner.merchantId) : Effect.succeed(fallback)
        )
      return Ports.PaymentGateway.of({
        charge: (request) => Effect.flatMap(gatewayOf(request.merchant_id), (g) => g.charge(request)),
        retrieve: (tradeId, known) => Effect.flatMap(ofTrade(tradeId), (g) => g.retrieve(tradeId, known)),
        cancel: (tradeId, known) =>
          Effect.flatMap(ofTrade(tradeId), (g) => (g.cancel ? g.cancel(tradeId, known) : g.retrieve(tradeId, known))),
        refund: (request) => Effect.flatMap(ofTrade(request.trade_id), (g) => g.refund(request)),
        saveCard: (request) => Effect.flatMap(gatewayOf(request.merchant_id), (g) => g.saveCard(request)),
        webhook: (request) =>
          Effect.gen(function* () {
            if (request.provider !== "stripe") return Result.fail(`no ${request.provider} webhooks here`)
            const kept = yield* stripeOf(request.merchant_id)
            if (kept === undefined) return Result.fail("this merchant does not take payments with Stripe")
            if (kept.webhookSecret === null) return Result.fail("no webhook signing secret is set for this merchant")
            return yield* readWebhook(
              kept.stripe,
              kept.webhookSecret,
              request.body,
              request.headers["stripe-signature"]
            )
          })
      })
    })
  )
