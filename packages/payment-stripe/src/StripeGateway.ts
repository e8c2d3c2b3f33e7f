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
 *   {@link retrieve} (a search of the trade's intents), never re-charged blindly; a rate limit, a
 *   `lock_timeout`, a refused or restricted key (401/403) or an amount under Stripe's minimum →
 *   Unavailable ({@link unavailableOf}): nothing charged, never a decline. The SDK re-sends
 *   dropped connections, 409s and 5xx itself (`maxNetworkRetries: 2`, the same idempotency key).
 * - Refunds are idempotent by our refund id; a payment method update is a SetupIntent, challenged
 *   (3-D Secure, `RequiresAction`) when the caller gives a `return_url` and finished by
 *   `completeSaveCard`.
 *
 * @since 0.1.0
 */
import { Entities, PaymentSettings, Ports, Secrets, Store, StripeCurrency } from "@recur/core"
import { Clock, Effect, Layer, Option, Result } from "effect"
import Stripe from "stripe"
import * as StripeDeclines from "./StripeDeclines.js"

/** A charge that failed, classed for dunning by its code (see `StripeDeclines`). */
const declined = (failure: {
  readonly code: string
  readonly message: string
  readonly reference?: string | undefined
}): Ports.ChargeOutcome =>
  Ports.ChargeOutcome.Failed({ ...failure, decline_class: StripeDeclines.classOf(failure.code) })

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
  /**
   * The signing secret (`whsec_…`) of the account's webhook endpoint: with it, the gateway reads
   * Stripe's webhooks (`POST /webhooks/stripe/:merchant_id`), each acted on for the merchant its
   * PaymentIntent names (one endpoint serves every merchant of the account). Without it, webhooks
   * are refused (400) and the worker's reconciliation settles payments.
   */
  readonly webhookSecret?: string | undefined
}

/** The token of a saved payment method: its Stripe customer and payment method. */
const tokenOf = (customer: string, paymentMethod: string) => `${customer}:${paymentMethod}`
const parseToken = (token: string) => {
  const [customer, paymentMethod] = token.split(":")
  return customer?.startsWith("cus_") && paymentMethod?.startsWith("pm_") ? { customer, paymentMethod } : undefined
}

const quote = (value: string) => value.replace(/[\\']/g, (c) => `\\${c}`)

/**
 * The Stripe API version every request is made with: the one the `stripe` SDK in use is typed
 * for (its `LatestApiVersion`, so an SDK of another version fails to compile until this moves
 * with it). Pinned, so a change of the account's default version in Stripe's dashboard changes
 * nothing here.
 *
 * @since 0.1.0
 */
export const API_VERSION = "2026-10-28.endive" satisfies Stripe.LatestApiVersion

/** A Stripe client for the options. */
const client = (options: Options): Stripe => {
  const base = options.apiBase ? new URL(options.apiBase) : undefined
  return new Stripe(options.secretKey, {
    apiVersion: API_VERSION,
    // the SDK re-sends a request that met a dropped connection, a 409 (a lock), a 5xx or Stripe's
    // `Stripe-Should-Retry: true`, with the same idempotency key and a growing delay
    maxNetworkRetries: 2,
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

/** Stripe's codes of a request it refused for the merchant's set-up, not for the card. */
const MERCHANT_CODES = new Set([
  "amount_too_small",
  "api_key_expired",
  "platform_api_key_expired",
  "secret_key_required",
  "testmode_charges_only",
  "account_invalid"
])

/**
 * What an SDK error means when it is no decline and nothing was done: Stripe could not take the
 * request now (a 429 rate limit, a `lock_timeout`) or refuses the merchant's set-up (a 401 rolled
 * or wrong key, a 403 restricted key without the permission, an amount under Stripe's minimum).
 * The message is ours: Stripe's names part of the key for a 401 or a 403.
 *
 * @since 0.1.0
 */
export const unavailableOf = (e: unknown): Ports.UnavailableReason | undefined => {
  if (!(e instanceof Stripe.errors.StripeError)) return undefined
  if (e instanceof Stripe.errors.StripeRateLimitError || e.code === "lock_timeout" || e.code === "rate_limit")
    return {
      reason: "processor_unavailable",
      code: e.code ?? "rate_limit",
      message: "Stripe is busy (rate limit or lock timeout): nothing was charged."
    }
  if (e instanceof Stripe.errors.StripeAuthenticationError)
    return {
      reason: "merchant_configuration",
      code: e.code ?? "invalid_api_key",
      message: "Stripe refused the merchant's secret key (rolled, revoked or wrong): nothing was charged."
    }
  if (e instanceof Stripe.errors.StripePermissionError)
    return {
      reason: "merchant_configuration",
      code: e.code ?? "permission_denied",
      message: "The merchant's restricted Stripe key lacks a permission this call needs: nothing was charged."
    }
  if (e.code === "amount_too_small")
    // the amount passed the table's minimum of its own currency: the account settles in another
    // currency, whose minimum (at the day's rate) it does not reach
    return {
      reason: "merchant_configuration",
      code: e.code,
      message:
        "Stripe refused the amount as under its minimum charge in the account's settlement currency: nothing was charged.",
      below_minimum: true
    }
  if (e.code !== undefined && MERCHANT_CODES.has(e.code))
    return {
      reason: "merchant_configuration",
      code: e.code,
      message: `Stripe refused the request for the merchant's set-up (${e.code}): nothing was charged.`
    }
  return undefined
}

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
export const make = (options: Options): Ports.PaymentGateway["Service"] => {
  // no storage: what this process learnt (each trade's owner, each customer's Stripe customer) is
  // kept in memory, so a lost answer or a later charge reads by id and lists instead of searching
  const owners = new Map<string, Owner>()
  return gatewayOn(client(options), {
    ownerOf: (tradeId) => Effect.sync(() => owners.get(tradeId)),
    noteOwner: (tradeId, owner) => Effect.sync(() => void owners.set(tradeId, owner)),
    book: memoryBook(),
    webhookSecret: options.webhookSecret
  })
}

/** Whose a trade is: the merchant and our customer (their Stripe customer holds its intents). */
interface Owner {
  readonly merchantId: string
  readonly customerId: string
}

/**
 * Where the Stripe customer (`cus_…`) of each of our customers is kept once Stripe made it, to be
 * read back by id: never searched for again (Stripe's search lags), never made twice.
 */
interface CustomerBook {
  readonly get: (merchantId: string, customerId: string) => Effect.Effect<string | undefined>
  /** Keeps it (the first kept stays). */
  readonly put: (merchantId: string, customerId: string, reference: string) => Effect.Effect<void>
  /**
   * Keeps `reference` in place of `gone` (a Stripe customer deleted since it was kept); a record
   * naming another one already (a concurrent replacement) stays.
   */
  readonly replace: (merchantId: string, customerId: string, gone: string, reference: string) => Effect.Effect<void>
}

/** A book in this process's memory (`make`, without storage). */
const memoryBook = (): CustomerBook => {
  const kept = new Map<string, string>()
  return {
    get: (merchantId, customerId) => Effect.sync(() => kept.get(`${merchantId}/${customerId}`)),
    put: (merchantId, customerId, reference) =>
      Effect.sync(() => {
        if (!kept.has(`${merchantId}/${customerId}`)) kept.set(`${merchantId}/${customerId}`, reference)
      }),
    replace: (merchantId, customerId, gone, reference) =>
      Effect.sync(() => {
        const at = `${merchantId}/${customerId}`
        if (!kept.has(at) || kept.get(at) === gone) kept.set(at, reference)
      })
  }
}

/**
 * The book in storage (`Entities.processorCustomer`), per Stripe account: a customer kept for one
 * account is never used with another's keys. Without the account (Stripe did not say it yet)
 * nothing is read or kept.
 */
const storedBook = (storage: Store.Storage["Service"], accountOf: Effect.Effect<string | undefined>): CustomerBook => {
  const rows = storage.repository(Entities.processorCustomer)
  return {
    get: (merchantId, customerId) =>
      Effect.gen(function* () {
        const account = yield* accountOf
        if (account === undefined) return undefined
        const found = yield* rows.get(merchantId, Entities.processorCustomerId("stripe", account, customerId))
        return Option.isSome(found) ? found.value.value.reference : undefined
      }),
    put: (merchantId, customerId, reference) =>
      Effect.gen(function* () {
        const account = yield* accountOf
        if (account === undefined) return
        // a concurrent first payment kept the same customer (Stripe's idempotency): the first stays
        yield* rows.insertMany([
          {
            id: Entities.processorCustomerId("stripe", account, customerId),
            merchant_id: merchantId,
            provider: "stripe",
            account_id: account,
            customer_id: customerId,
            reference,
            created_at: yield* Clock.currentTimeMillis
          }
        ])
      }),
    replace: (merchantId, customerId, gone, reference) =>
      Effect.gen(function* () {
        const account = yield* accountOf
        if (account === undefined) return
        const id = Entities.processorCustomerId("stripe", account, customerId)
        const found = yield* rows.get(merchantId, id)
        if (Option.isNone(found)) {
          yield* rows.insertMany([
            {
              id,
              merchant_id: merchantId,
              provider: "stripe",
              account_id: account,
              customer_id: customerId,
              reference,
              created_at: yield* Clock.currentTimeMillis
            }
          ])
          return
        }
        if (found.value.value.reference !== gone) return
        // a concurrent replacement made the same customer (its key names the one gone): either stays
        yield* rows.update({ ...found.value.value, reference }, found.value.version).pipe(Effect.ignore)
      })
  }
}

/**
 * The id of the account a client's key belongs to (`GET /v1/account`), asked once and kept. A
 * restricted key that may not read its account has none (its customers are not kept: found by
 * search as before); a failure to answer is asked again next time.
 */
const accountOfClient = (stripe: Stripe, known?: string | null): Effect.Effect<string | undefined> => {
  let kept: string | null | undefined = known ?? undefined
  return Effect.suspend(() =>
    kept !== undefined
      ? Effect.succeed(kept ?? undefined)
      : Effect.tryPromise({ try: () => stripe.accounts.retrieveCurrent(), catch: (e) => e }).pipe(
          Effect.map((account) => {
            kept = account.id
            return account.id
          }),
          Effect.catch((e) => {
            if (e instanceof Stripe.errors.StripePermissionError) kept = null
            return Effect.succeed(undefined)
          })
        )
  )
}

/** What a gateway on one client knows beside Stripe: trades' owners and customers' Stripe customers. */
interface Known {
  readonly ownerOf?: ((tradeId: string) => Effect.Effect<Owner | undefined>) | undefined
  /** Notes a charged trade's owner (`make`, which has no storage to read it from). */
  readonly noteOwner?: ((tradeId: string, owner: Owner) => Effect.Effect<void>) | undefined
  readonly book: CustomerBook
  readonly webhookSecret?: string | undefined
}

const gatewayOn = (stripe: Stripe, known: Known) => {
  const { ownerOf, book, webhookSecret } = known
  const call = <A>(f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: (e) => e })

  /**
   * The Stripe customer of one of our customers: the one kept when Stripe made it, read back by
   * id; else (a customer made before they were kept) found by its metadata, which Stripe's search
   * shows only after about a minute; else created, idempotently by our customer — within the
   * search's lag the key answers the customer made before (Stripe keeps it for 24 hours, by when
   * search has long caught up). Kept once known.
   *
   * `gone`: the kept customer, which Stripe says no longer exists (deleted in the dashboard): one
   * found by search or made in its place (by a key naming the one gone, since the key that made
   * it would answer it again within the day) is kept instead.
   */
  const customerOf = (merchantId: string, customerId: string | undefined, fallbackKey: string, gone?: string) =>
    Effect.gen(function* () {
      const ours = customerId !== undefined ? `${merchantId}/${customerId}` : undefined
      const keep = (reference: string) =>
        customerId === undefined
          ? Effect.void
          : gone !== undefined
            ? book.replace(merchantId, customerId, gone, reference)
            : book.put(merchantId, customerId, reference)
      if (customerId !== undefined) {
        const kept = gone === undefined ? yield* book.get(merchantId, customerId) : undefined
        if (kept !== undefined) return kept
        const found = yield* call(() =>
          stripe.customers.search({ query: `metadata['recur_customer']:'${quote(ours!)}'`, limit: 1 })
        )
        if (found.data[0] !== undefined && found.data[0].id !== gone) {
          yield* keep(found.data[0].id)
          return found.data[0].id
        }
      }
      const created = yield* call(() =>
        stripe.customers.create(
          { metadata: { recur_merchant_id: merchantId, ...(ours !== undefined ? { recur_customer: ours } : {}) } },
          { idempotencyKey: `recur:customer:${ours ?? fallbackKey}${gone !== undefined ? `:after:${gone}` : ""}` }
        )
      )
      yield* keep(created.id)
      return created.id
    })

  /** Stripe says the customer a call named does not exist (deleted in the dashboard since kept). */
  const customerGone = (e: unknown) =>
    e instanceof Stripe.errors.StripeInvalidRequestError && e.code === "resource_missing" && e.param === "customer"

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
            : declined({
                code: "authentication_required",
                message: "The payment needs authentication in the payer's browser.",
                reference: intent.id
              })
        }
        case "requires_payment_method": {
          const error = intent.last_payment_error
          return declined({
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
          return declined({
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

  const retrieve = Effect.fn("StripeGateway.retrieve")(function* (tradeId: string, known?: Ports.ChargeReferences) {
    return yield* Effect.gen(function* () {
      const read = yield* byReference(tradeId, known)
      if (read !== undefined) return read
      const intents = yield* intentsOf(tradeId, ownerOf ? yield* ownerOf(tradeId) : undefined)
      // the customer is not visible yet: too early to say the charge does not exist
      if (intents === undefined) return Ports.ChargeOutcome.Unknown()
      const intent = latest(intents)
      if (intent === undefined) return declined({ code: "no_such_charge", message: "No charge for this trade." })
      return yield* outcomeOf(intent)
    }).pipe(Effect.catch(() => Effect.succeed(Ports.ChargeOutcome.Unknown())))
  })

  /** Cancels the trade's latest intent while it still waits (for the payer, or a new method). */
  const cancel = Effect.fn("StripeGateway.cancel")(function* (tradeId: string, known?: Ports.ChargeReferences) {
    return yield* Effect.gen(function* () {
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
      if (intent === undefined) return declined({ code: "no_such_charge", message: "No charge for this trade." })
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
  })

  /**
   * A charge of 0 (in Stripe's units) with a new payment method: a SetupIntent saves it on the
   * Stripe customer for off-session charges, charging nothing, idempotent by trade and attempt.
   * Succeeded carries the token as a first payment's does; a card that needs 3-D Secure to be
   * saved is refused (`authentication_required`) — its challenge is not followed here.
   */
  const setupFor = (request: Ports.ChargeRequest, customer: string, paymentMethod: string, attempt: number) =>
    Effect.gen(function* () {
      const setup = yield* Effect.result(
        call(() =>
          stripe.setupIntents.create(
            {
              customer,
              payment_method: paymentMethod,
              automatic_payment_methods: { enabled: true, allow_redirects: "never" },
              usage: "off_session",
              confirm: true,
              metadata: {
                recur_trade_id: request.trade_id,
                recur_attempt: String(attempt),
                recur_merchant_id: request.merchant_id
              }
            },
            { idempotencyKey: `recur:setup:${request.trade_id}:${attempt}` }
          )
        )
      )
      if (setup._tag === "Failure") {
        const e = setup.failure
        if (e instanceof Stripe.errors.StripeError && !isUnknown(e))
          return declined({ code: codeOf(e), message: e.message })
        return Ports.ChargeOutcome.Unknown()
      }
      const seti = setup.success
      const pmId = typeof seti.payment_method === "string" ? seti.payment_method : seti.payment_method?.id
      if (seti.status === "requires_action")
        return declined({
          code: "authentication_required",
          message: "Saving this card needs authentication in the payer's browser."
        })
      if (seti.status !== "succeeded" || pmId === undefined)
        return declined({
          code: seti.last_setup_error ? codeOf(seti.last_setup_error, "card_declined") : "card_not_saved",
          message: seti.last_setup_error?.message ?? "The card could not be saved."
        })
      const pm = yield* call(() => stripe.paymentMethods.retrieve(pmId))
      return Ports.ChargeOutcome.Succeeded({
        transaction_id: seti.id,
        token: Option.some(tokenOf(customer, pmId)),
        brand: pm.card?.brand ?? "card",
        last4: pm.card?.last4 ?? "",
        ...(pm.card ? { exp_month: pm.card.exp_month, exp_year: pm.card.exp_year } : {})
      })
    })

  const charge = Effect.fn("StripeGateway.charge")(function* (request: Ports.ChargeRequest) {
    return yield* Effect.suspend(() => {
      // whether the PaymentIntent's creation was sent: a refused key or a rate limit before it
      // (reading the trade's earlier intents, its customer) charged nothing — Unavailable; after
      // it, an error leaves the charge's outcome Unknown
      let sent = false
      return Effect.gen(function* () {
        const attempt = request.attempt ?? 1
        if (request.source._tag === "Card")
          return declined({
            code: "card_not_accepted",
            message: "Card numbers are collected by Stripe in the payer's browser, never sent to this server."
          })
        const saved = request.source._tag === "Token" ? parseToken(request.source.token) : undefined
        if (request.source._tag === "Token" && saved === undefined)
          return declined({ code: "invalid_token", message: "Unknown payment token." })
        if (request.customer_id !== undefined && known.noteOwner !== undefined)
          yield* known.noteOwner(request.trade_id, { merchantId: request.merchant_id, customerId: request.customer_id })
        // Stripe's units (ISK ×100, MGA ÷10, three-decimal to a multiple of 10), rounded down
        const units = StripeCurrency.toStripe(request.amount)
        if (units.amount === 0n && saved !== undefined)
          return declined({
            code: "amount_too_small",
            message: `Nothing to charge: ${request.amount.amount} in ${request.amount.currency}'s minor units is 0 in Stripe's.`
          })
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
        let customer = existing
        if (customer === undefined) {
          const found = yield* Effect.result(
            customerOf(request.merchant_id, request.customer_id, `${request.trade_id}:${attempt}`)
          )
          // no intent was created yet: a refused key or a rate limit here charged nothing
          const down = found._tag === "Failure" ? unavailableOf(found.failure) : undefined
          if (down !== undefined) return Ports.ChargeOutcome.Unavailable(down)
          if (found._tag === "Failure") return yield* Effect.fail(found.failure)
          customer = found.success
        }
        // an attempt made before whose answer was lost (a crash, a timeout) is answered as it is,
        // read from the customer's list — never created again with a key Stripe may have forgotten
        if (existing !== undefined) {
          const lost = yield* attemptIn(existing, request.trade_id, attempt)
          if (lost !== undefined) return yield* outcomeOf(lost)
        }
        if (units.amount === 0n) {
          // a free trial or a 100 %-off first invoice: Stripe refuses a PaymentIntent of 0, so the
          // card is saved with a SetupIntent, charging nothing
          return yield* setupFor(request, customer, (request.source as Ports.CollectedPaymentMethod).id, attempt)
        }
        sent = true
        const create = (customer: string, idempotencyKey: string) =>
          call(() =>
            stripe.paymentIntents.create(
              {
                amount: Number(units.amount),
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
              { idempotencyKey }
            )
          )
        let created = yield* Effect.result(create(customer, `recur:${request.trade_id}:${attempt}`))
        // the kept Stripe customer was deleted at Stripe (nothing was charged): charged on one made
        // in its place, under a key of its own (the first key's answer names the one gone)
        if (
          created._tag === "Failure" &&
          existing === undefined &&
          request.customer_id !== undefined &&
          customerGone(created.failure)
        ) {
          const replaced = yield* Effect.result(
            customerOf(request.merchant_id, request.customer_id, `${request.trade_id}:${attempt}`, customer)
          )
          // Stripe silent or refusing while the new one is made: nothing was charged either way
          if (replaced._tag === "Failure")
            return Ports.ChargeOutcome.Unavailable(
              unavailableOf(replaced.failure) ?? {
                reason: "processor_unavailable",
                code: "processor_unavailable",
                message: "Stripe did not answer while the customer was made again: nothing was charged."
              }
            )
          customer = replaced.success
          created = yield* Effect.result(create(customer, `recur:${request.trade_id}:${attempt}:${customer}`))
        }
        if (created._tag === "Success") {
          // a saved card's customer that Stripe charged is this account's: kept (a customer made
          // before customers were kept is read by id from now on)
          if (saved !== undefined && request.customer_id !== undefined)
            yield* book.put(request.merchant_id, request.customer_id, saved.customer)
          return yield* outcomeOf(created.success)
        }
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
          return declined({
            code: codeOf(e),
            message: e.message,
            // the declined intent, read by id from then on
            ...(e.payment_intent?.id !== undefined ? { reference: e.payment_intent.id } : {})
          })
        const down = unavailableOf(e)
        if (down !== undefined) return Ports.ChargeOutcome.Unavailable(down)
        if (isUnknown(e)) return Ports.ChargeOutcome.Unknown()
        const se = e as Stripe.errors.StripeError
        return declined({ code: se.code ?? se.type, message: se.message })
      }).pipe(
        Effect.catch((e) => {
          const down = sent ? undefined : unavailableOf(e)
          return Effect.succeed(
            down !== undefined ? Ports.ChargeOutcome.Unavailable(down) : Ports.ChargeOutcome.Unknown()
          )
        })
      )
    })
  })

  const refund = Effect.fn("StripeGateway.refund")(function* (request: {
    readonly refund_id: string
    readonly trade_id: string
    readonly amount: { readonly amount: bigint; readonly currency: string }
    readonly charges?: Ports.ChargeReferences | undefined
    readonly reference?: string | undefined
  }) {
    return yield* Effect.gen(function* () {
      // a refund Stripe named before is read by its id: never made a second time
      if (request.reference !== undefined)
        return refundOutcomeOf(yield* call(() => stripe.refunds.retrieve(request.reference!)))
      // never more than asked: rounded down to an amount Stripe takes
      const units = StripeCurrency.toStripe(request.amount)
      if (units.amount === 0n)
        return Ports.RefundOutcome.Failed({
          code: "amount_too_small",
          message: `The refund is 0 in Stripe's units of ${request.amount.currency}.`
        })
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
              amount: Number(units.amount),
              metadata: { recur_refund_id: request.refund_id, recur_trade_id: request.trade_id }
            },
            { idempotencyKey: `recur:refund:${request.refund_id}` }
          )
        )
      )
      if (done._tag === "Failure") {
        const e = done.failure
        // no answer, or Stripe failed (a timeout, a 5xx): the refund may have been made — Unknown,
        // settled later by reading it, never a failure that gives the reserved amount back; Stripe
        // busy (a 429, a lock timeout) refused nothing: Unknown too, asked again later
        if (unavailableOf(e)?.reason === "processor_unavailable") return Ports.RefundOutcome.Unknown()
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
  })

  /** The port's outcome of a SetupIntent of `customer`. */
  const setupOutcomeOf = (customer: string, setup: Stripe.SetupIntent) =>
    Effect.gen(function* () {
      const pmId = typeof setup.payment_method === "string" ? setup.payment_method : setup.payment_method?.id
      if (setup.status === "requires_action") {
        const url = setup.next_action?.redirect_to_url?.url
        return url
          ? Ports.SaveCardOutcome.RequiresAction({ redirect_url: url, setup_id: setup.id })
          : Ports.SaveCardOutcome.Failed({
              code: "authentication_required",
              message: "The card's issuer asks for authentication (3-D Secure) in the cardholder's browser."
            })
      }
      if (setup.status === "requires_payment_method" && setup.last_setup_error)
        return Ports.SaveCardOutcome.Failed({
          code: codeOf(setup.last_setup_error, "card_declined"),
          message: setup.last_setup_error.message ?? "The card could not be saved."
        })
      if (setup.status !== "succeeded" || pmId === undefined)
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
    })

  /** A SetupIntent that waited for 3-D Secure, asked again: only one made for this merchant's customer. */
  const completeSaveCard = Effect.fn("StripeGateway.completeSaveCard")(function* (request: {
    readonly merchant_id: string
    readonly customer_id: string
    readonly setup_id: string
  }) {
    return yield* Effect.gen(function* () {
      if (!/^seti_[A-Za-z0-9_]{1,200}$/.test(request.setup_id))
        return Ports.SaveCardOutcome.Failed({ code: "resource_missing", message: "No such card set-up." })
      const found = yield* Effect.result(call(() => stripe.setupIntents.retrieve(request.setup_id)))
      if (found._tag === "Failure") {
        const down = unavailableOf(found.failure)
        if (down !== undefined) return Ports.SaveCardOutcome.Unavailable(down)
        const e = found.failure
        return e instanceof Stripe.errors.StripeError && !isUnknown(e)
          ? Ports.SaveCardOutcome.Failed({ code: e.code ?? "resource_missing", message: "No such card set-up." })
          : Ports.SaveCardOutcome.Failed({
              code: "processor_unavailable",
              message: "Stripe did not answer; try again."
            })
      }
      const setup = found.success
      const customer = typeof setup.customer === "string" ? setup.customer : setup.customer?.id
      if (
        setup.metadata?.recur_merchant_id !== request.merchant_id ||
        setup.metadata?.recur_customer_id !== request.customer_id ||
        customer === undefined
      )
        return Ports.SaveCardOutcome.Failed({ code: "resource_missing", message: "No such card set-up." })
      return yield* setupOutcomeOf(customer, setup)
    }).pipe(
      Effect.catch(() =>
        Effect.succeed(
          Ports.SaveCardOutcome.Failed({ code: "processor_unavailable", message: "Stripe did not answer; try again." })
        )
      )
    )
  })

  const saveCard = Effect.fn("StripeGateway.saveCard")(function* (request: {
    readonly merchant_id: string
    readonly customer_id: string
    readonly source: Ports.NewPaymentSource
    readonly return_url?: string | undefined
  }) {
    return yield* Effect.gen(function* () {
      if (request.source._tag === "Card")
        return Ports.SaveCardOutcome.Failed({
          code: "card_not_accepted",
          message: "Card numbers are collected by Stripe in the payer's browser, never sent to this server."
        })
      const pmRef = request.source.id
      const found = yield* Effect.result(customerOf(request.merchant_id, request.customer_id, `setup:${pmRef}`))
      const unreachable = found._tag === "Failure" ? unavailableOf(found.failure) : undefined
      if (unreachable !== undefined) return Ports.SaveCardOutcome.Unavailable(unreachable)
      if (found._tag === "Failure") return yield* Effect.fail(found.failure)
      let customer = found.success
      const create = (customer: string) =>
        call(() =>
          stripe.setupIntents.create({
            customer,
            payment_method: pmRef,
            automatic_payment_methods: { enabled: true, allow_redirects: "never" },
            usage: "off_session",
            confirm: true,
            // the cardholder is on our page: a 3-D Secure challenge sends them back there
            ...(request.return_url !== undefined ? { return_url: request.return_url } : {}),
            metadata: { recur_merchant_id: request.merchant_id, recur_customer_id: request.customer_id }
          })
        )
      let setup = yield* Effect.result(create(customer))
      // the kept Stripe customer was deleted at Stripe: the card is saved to one made in its place
      if (setup._tag === "Failure" && customerGone(setup.failure)) {
        customer = yield* customerOf(request.merchant_id, request.customer_id, `setup:${pmRef}`, customer)
        setup = yield* Effect.result(create(customer))
      }
      if (setup._tag === "Failure") {
        const e = setup.failure
        const down = unavailableOf(e)
        if (down !== undefined) return Ports.SaveCardOutcome.Unavailable(down)
        return e instanceof Stripe.errors.StripeError && !isUnknown(e)
          ? Ports.SaveCardOutcome.Failed({ code: codeOf(e), message: e.message })
          : Ports.SaveCardOutcome.Failed({
              code: "processor_unavailable",
              message: "Stripe did not answer; try again."
            })
      }
      return yield* setupOutcomeOf(customer, setup.success)
    }).pipe(
      Effect.catch(() =>
        Effect.succeed(
          Ports.SaveCardOutcome.Failed({ code: "processor_unavailable", message: "Stripe did not answer; try again." })
        )
      )
    )
  })

  /** Stripe's minimum charge in the currency, from the table (none where Stripe publishes none). */
  const minimumCharge = Effect.fn("StripeGateway.minimumCharge")(function* (request: { readonly currency: string }) {
    return yield* Effect.succeed(Option.fromNullishOr(StripeCurrency.minimumCharge(request.currency)))
  })

  /** The account's webhooks, when its signing secret is given (one account serves every merchant). */
  const webhook = Effect.fn("StripeGateway.webhook")(function* (
    request: Parameters<NonNullable<Ports.PaymentGateway["Service"]["webhook"]>>[0]
  ) {
    return yield* request.provider !== "stripe"
      ? Effect.succeed(Result.fail(`no ${request.provider} webhooks here`))
      : webhookSecret === undefined || webhookSecret === ""
        ? Effect.succeed(Result.fail("no webhook signing secret is set for this Stripe account"))
        : readWebhook(stripe, webhookSecret, request.body, request.headers["stripe-signature"], true)
  })

  return Ports.PaymentGateway.of({
    charge,
    retrieve,
    cancel,
    refund,
    saveCard,
    completeSaveCard,
    minimumCharge,
    webhook
  })
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
 * const payments = StripeGateway.layer({
 *   secretKey: process.env.STRIPE_SECRET_KEY!,
 *   webhookSecret: process.env.STRIPE_WEBHOOK_SECRET // optional: Stripe's webhooks at /webhooks/stripe/:merchant_id
 * })
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<Ports.PaymentGateway, never, Store.Storage> =>
  Layer.effect(
    Ports.PaymentGateway,
    Effect.gen(function* () {
      const storage = yield* Store.Storage
      const stripe = client(options)
      return gatewayOn(stripe, {
        ownerOf: ownerFrom(storage),
        book: storedBook(storage, accountOfClient(stripe)),
        webhookSecret: options.webhookSecret
      })
    })
  )

const PAYMENT_EVENTS = new Set([
  "payment_intent.succeeded",
  "payment_intent.payment_failed",
  "payment_intent.processing",
  "payment_intent.requires_action",
  "payment_intent.canceled"
])

/** The payment events that say the intent reached an outcome the engine can read at once. */
const SETTLED_EVENTS = new Set([
  "payment_intent.succeeded",
  "payment_intent.payment_failed",
  "payment_intent.requires_action",
  "payment_intent.canceled"
])

/**
 * An amount as Stripe states it (an integer in Stripe's units of the currency) as Recur's money,
 * at the ISO 4217 exponent (`StripeCurrency.fromStripe`: ISK ÷100, MGA ×10, rounded down).
 */
const moneyOf = (amount: unknown, currency: unknown): ReturnType<typeof StripeCurrency.fromStripe> =>
  StripeCurrency.fromStripe(Number(amount), String(currency))

/**
 * Stripe's dispute statuses as the engine's: the inquiry (`warning_needs_response`,
 * `warning_under_review`) and chargeback (`needs_response`, `under_review`) statuses are open;
 * `won`, `lost`, `warning_closed` and `prevented` end it as they say; `charge_refunded` (the
 * disputed charge was refunded, so the payer has the money back) ends it as `lost`. An unknown
 * status is open (its closing event says how it ended).
 */
const disputeStatusOf = (status: string): Ports.DisputeStatus =>
  status === "won" || status === "lost" || status === "warning_closed" || status === "prevented"
    ? status
    : status === "charge_refunded"
      ? "lost"
      : "open"

/** A read that could not be made now: the event is answered "retry" (503). */
class Unreadable {
  readonly _tag = "Unreadable"
  constructor(readonly reason: string) {}
}

/**
 * A Stripe read made while handling a webhook: a missing object (404, e.g. an object of another
 * account) is none; any other failure (a timeout, a 5xx, a 429, a rolled key) cannot tell what
 * the event is about, and fails with {@link Unreadable}.
 */
const readOr404 = <A>(what: string, f: () => Promise<A>) =>
  Effect.tryPromise({ try: f, catch: (e) => e }).pipe(
    Effect.map(Option.some),
    Effect.catch((e) =>
      e instanceof Stripe.errors.StripeError && e.statusCode === 404 && e.code === "resource_missing"
        ? Effect.succeed(Option.none<A>())
        : Effect.fail(
            new Unreadable(
              `Stripe did not answer reading the event's ${what}${e instanceof Stripe.errors.StripeError && e.statusCode ? ` (${e.statusCode})` : ""}`
            )
          )
    )
  )

/**
 * What a Stripe webhook means, once its signature is checked with `secret` (the SDK's
 * `constructEvent`): a payment of a trade changed (`payment_intent.*`), a charge was refunded
 * (`charge.refunded`, and a refund without our metadata changed: with the charge's succeeded
 * refunds made outside Recur, e.g. in the dashboard), a charge was disputed (`charge.dispute.*`:
 * the dispute's intent names the trade; its status, amount and evidence deadline), or something
 * the engine does not follow. A bad signature or body is a failure; an event whose object could
 * not be read from Stripe now is `Retry` (answered 503: Stripe sends it again).
 */
const readWebhook = (stripe: Stripe, secret: string, body: string, signature: string | undefined, shared = false) =>
  Effect.gen(function* () {
    let event: Stripe.Event
    try {
      event = stripe.webhooks.constructEvent(body, signature ?? "", secret)
    } catch (e) {
      return Result.fail(`the Stripe-Signature does not verify: ${(e as Error).message}`)
    }
    const object = event.data.object as unknown as Record<string, unknown>
    const metadata = (object.metadata as Record<string, string> | undefined | null) ?? {}
    /** On an account shared by several merchants, the merchant named by our metadata. */
    const merchantOf = (of: Record<string, string> | undefined | null) =>
      shared && of?.recur_merchant_id ? { merchant_id: of.recur_merchant_id } : {}
    const intentOf = (intent: unknown) =>
      Effect.gen(function* () {
        if (typeof intent !== "string") return undefined
        const found = yield* readOr404("payment intent", () => stripe.paymentIntents.retrieve(intent))
        return Option.isSome(found) ? found.value : undefined
      })
    /**
     * The intent's succeeded refunds that Recur did not make (no `recur_refund_id`), but for the
     * adapter's own refund of an extra payment (`recur_duplicate_of`): Recur's books never counted
     * that payment, so its refund is no refund of the trade.
     */
    const madeOutside = (intent: unknown) =>
      Effect.gen(function* () {
        if (typeof intent !== "string") return []
        const listed = yield* readOr404("refunds", () => stripe.refunds.list({ payment_intent: intent, limit: 100 }))
        return Option.isSome(listed)
          ? listed.value.data
              .filter(
                (r) => r.status === "succeeded" && !r.metadata?.recur_refund_id && !r.metadata?.recur_duplicate_of
              )
              .map(
                (r): Ports.ProcessorRefund => ({
                  refund_id: r.id,
                  amount: moneyOf(r.amount, r.currency),
                  reason: r.reason ?? null
                })
              )
          : []
      })
    const ignored = Ports.ProcessorEvent.Ignored({ event_id: event.id, type: event.type })
    const refunded = (intent: unknown, trade: string | undefined, charge: unknown) =>
      Effect.gen(function* () {
        const read = trade === undefined ? yield* intentOf(intent) : undefined
        const tradeId = trade ?? read?.metadata.recur_trade_id
        if (!tradeId) return ignored
        // the refunded charge and its intent: the engine records only the refunds of the one that paid
        const ids = [charge, intent].filter((i): i is string => typeof i === "string")
        return Ports.ProcessorEvent.Refunded({
          event_id: event.id,
          trade_id: tradeId,
          processor_refunds: yield* madeOutside(intent),
          ...(ids.length > 0 ? { charge_ids: ids } : {}),
          ...merchantOf(read?.metadata ?? metadata)
        })
      })
    const meaning = Effect.gen(function* () {
      if (PAYMENT_EVENTS.has(event.type)) {
        const trade = metadata.recur_trade_id
        return trade
          ? Ports.ProcessorEvent.PaymentUpdated({
              event_id: event.id,
              trade_id: trade,
              settled: SETTLED_EVENTS.has(event.type),
              ...merchantOf(metadata)
            })
          : ignored
      }
      if (event.type === "charge.refunded")
        return yield* refunded(object.payment_intent, metadata.recur_trade_id, object.id)
      if (event.type === "charge.refund.updated" || event.type === "refund.updated" || event.type === "refund.failed") {
        const refund = metadata.recur_refund_id
        if (refund) return Ports.ProcessorEvent.RefundUpdated({ event_id: event.id, refund_id: refund })
        // a refund made outside Recur that settled: recorded as the charge's refunds are
        return object.status === "succeeded"
          ? yield* refunded(object.payment_intent, undefined, object.charge)
          : ignored
      }
      if (event.type.startsWith("charge.dispute.")) {
        const intent = yield* intentOf(object.payment_intent)
        const trade = intent?.metadata.recur_trade_id
        if (!trade) return ignored
        const status = String(object.status)
        const due = (object.evidence_details as { due_by?: number | null } | undefined)?.due_by
        return Ports.ProcessorEvent.Disputed({
          event_id: event.id,
          trade_id: trade,
          dispute_id: String(object.id),
          amount: moneyOf(object.amount, object.currency),
          reason: String(object.reason ?? "general"),
          status: disputeStatusOf(status),
          processor_status: status,
          // 0: the bank takes no response for this dispute
          evidence_due_by: typeof due === "number" && due > 0 ? due * 1000 : null,
          ...merchantOf(intent?.metadata)
        })
      }
      return ignored
    })
    return Result.succeed(
      yield* meaning.pipe(
        Effect.catch((e: Unreadable) =>
          Effect.succeed(Ports.ProcessorEvent.Retry({ event_id: event.id, reason: e.reason }))
        )
      )
    )
  })

/** Whether an SDK error means Stripe did not answer (nothing can be told of the keys). */
const unanswered = (e: unknown) =>
  !(e instanceof Stripe.errors.StripeError) ||
  e instanceof Stripe.errors.StripeConnectionError ||
  e instanceof Stripe.errors.StripeAPIError ||
  e instanceof Stripe.errors.StripeRateLimitError ||
  (e.statusCode ?? 0) >= 500

/**
 * Verifies a merchant's keys with Stripe: the secret key reads its account (`GET /v1/account`);
 * the publishable key makes a token (`POST /v1/tokens`, a `pii` token of no one — what a
 * publishable key may do) of the mode asked; the secret key reads that token back
 * (`GET /v1/tokens/:id`), which Stripe answers only for a token of the same account. No message
 * of Stripe's is passed on (it quotes part of the key).
 */
const verifyKeys = (options: Omit<Options, "secretKey">, keys: Ports.AccountKeys) =>
  Effect.gen(function* () {
    const call = <A>(f: () => Promise<A>) => Effect.result(Effect.tryPromise({ try: f, catch: (e) => e }))
    const refused = (param: "secret_key" | "publishable_key", reason: string) =>
      Ports.AccountCheck.Refused({ param, reason })
    const unreachable = () => Ports.AccountCheck.Unreachable({ message: "no answer from Stripe" })
    const secret = client({ ...options, secretKey: keys.secret_key })
    const account = yield* call(() => secret.accounts.retrieveCurrent())
    if (account._tag === "Failure") {
      const e = account.failure
      if (unanswered(e)) return unreachable()
      if (e instanceof Stripe.errors.StripePermissionError)
        return refused("secret_key", "this restricted key may not read its Stripe account: give it read access to it")
      return refused("secret_key", "Stripe does not accept this secret key (rolled, deleted or mistyped)")
    }
    const publishable = client({ ...options, secretKey: keys.publishable_key })
    const token = yield* call(() => publishable.tokens.create({ pii: { id_number: "000000000" } }))
    if (token._tag === "Failure") {
      const e = token.failure
      if (unanswered(e)) return unreachable()
      return refused("publishable_key", "Stripe does not accept this publishable key (rolled, deleted or mistyped)")
    }
    if (token.success.livemode !== (keys.mode === "live"))
      return refused("publishable_key", `must be a ${keys.mode} mode key`)
    const back = yield* call(() => secret.tokens.retrieve(token.success.id))
    if (back._tag === "Failure") {
      const e = back.failure
      if (unanswered(e)) return unreachable()
      if (e instanceof Stripe.errors.StripePermissionError)
        return refused("secret_key", "this restricted key may not read tokens: give it read access to them")
      return refused("publishable_key", `belongs to another Stripe account than the secret key (${account.success.id})`)
    }
    return Ports.AccountCheck.Verified({ account_id: account.success.id })
  })

/**
 * Verifies a merchant's Stripe keys as `perMerchant`'s `verifyAccount` does before they are saved:
 * the secret key reads its account, the publishable key makes a token of the mode asked, and the
 * secret key reads that token back (the same account). Never fails: Stripe's silence is
 * `Unreachable`.
 *
 * @example
 * const check = yield* StripeGateway.verifyAccount({ merchant_id, mode: "test", secret_key, publishable_key })
 * @since 0.1.0
 */
export const verifyAccount = (
  keys: Ports.AccountKeys,
  options: Omit<Options, "secretKey"> = {}
): Effect.Effect<Ports.AccountCheck> =>
  verifyKeys(options, keys).pipe(
    Effect.catchCause(() => Effect.succeed(Ports.AccountCheck.Unreachable({ message: "the check of the keys failed" })))
  )

/** The subscriptions that may still charge their saved card. */
const RENEWING = ["trial", "active", "past_due", "unpaid", "paused"]

/**
 * Why a merchant's keys may not move from Stripe account `from` to `to`: a subscription that may
 * still charge its saved card (trial, active, past due, unpaid, paused) holds a card of a Stripe
 * customer kept for another account than `to` — or, for a customer not kept yet (made before
 * customers were kept), the merchant's current account is known and is not `to`. Stripe holds a
 * customer and its cards in one account: the new keys could not charge them, and every renewal
 * would be refused. None when no such card is found.
 */
const savedCardsElsewhere = (
  storage: Store.Storage["Service"],
  request: { readonly merchant_id: string; readonly from: string | null; readonly to: string }
) =>
  Effect.gen(function* () {
    if (request.from === request.to) return Option.none<string>()
    const subscriptions = storage.repository(Entities.subscription)
    const kept = storage.repository(Entities.processorCustomer)
    let after: string | undefined
    for (;;) {
      const page = yield* Effect.orDie(
        subscriptions.list(request.merchant_id, {
          limit: 100,
          filters: [{ column: "status", op: "in", values: RENEWING }],
          ...(after !== undefined ? { starting_after: after } : {})
        })
      )
      const carded = page.list.flatMap((s) => {
        const token = s.payment_token !== null ? parseToken(s.payment_token) : undefined
        return token !== undefined ? [{ id: s.subscription.id, customer: token.customer }] : []
      })
      if (carded.length > 0) {
        const rows = yield* Effect.orDie(
          kept.list(request.merchant_id, {
            limit: 100,
            filters: [{ column: "reference", op: "in", values: [...new Set(carded.map((c) => c.customer))] }]
          })
        )
        const accountOf = new Map(rows.list.map((r) => [r.reference, r.account_id]))
        const elsewhere = carded.filter((c) => {
          const account = accountOf.get(c.customer)
          return account !== undefined ? account !== request.to : request.from !== null
        })
        if (elsewhere[0] !== undefined)
          return Option.some(
            `subscription ${elsewhere[0].id}${elsewhere.length > 1 || page.has_more ? " and others" : ""} renew${elsewhere.length > 1 || page.has_more ? "" : "s"} with a card saved in the current account (Stripe customer ${elsewhere[0].customer}), which another account's keys cannot charge; use keys of the same account (a rolled key is accepted): Recur does not move saved cards between Stripe accounts`
          )
      }
      if (!page.has_more || page.list.length === 0) return Option.none<string>()
      after = page.list.at(-1)!.subscription.id
    }
  })

/**
 * Each merchant's own Stripe account (`POST /api/v1/payment_settings`), the gateway beneath
 * (the sandbox) for sandbox merchants without one. A live merchant without one takes no payments
 * (`PaymentSettings.paymentsRefusal`): its charges and card saves are refused
 * (`processor_not_configured`), never sent to the sandbox, and `refusal` tells the engine (no
 * checkout session opens) and the server (a line at start). Keys are verified with Stripe before
 * they are saved (`verifyAccount`). A merchant's keys are read from its record and
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
            gateway: gatewayOn(stripe, {
              ownerOf,
              book: storedBook(storage, accountOfClient(stripe, processor.account_id))
            }),
            webhookSecret: credentials.webhook_secret
          }
          clients.set(merchantId, made)
          return made
        })
      /** Why the merchant's payments go nowhere (a live merchant without its Stripe account), if they do. */
      const refusalOf = (merchantId: string) =>
        Effect.map(Effect.orDie(merchants.get(merchantId, merchantId)), (found) =>
          Option.isSome(found) ? PaymentSettings.paymentsRefusal(found.value.value) : Option.none<string>()
        )
      const gatewayOf = (merchantId: string) => Effect.map(stripeOf(merchantId), (kept) => kept?.gateway ?? fallback)
      /** The gateway that may charge the merchant: its Stripe account, the sandbox, or none (the reason). */
      const chargerOf = (merchantId: string) =>
        Effect.gen(function* () {
          const kept = yield* stripeOf(merchantId)
          if (kept !== undefined) return Result.succeed(kept.gateway)
          const refused = yield* refusalOf(merchantId)
          return Option.isSome(refused) ? Result.fail(refused.value) : Result.succeed(fallback)
        })
      // a live merchant without its own processor: the merchant's configuration, never a decline
      const notConfigured = (reason: string) => ({
        reason: "merchant_configuration" as const,
        code: "processor_not_configured",
        message: reason
      })
      const ownerOf = ownerFrom(storage)
      const ofTrade = (tradeId: string) =>
        Effect.flatMap(ownerOf(tradeId), (owner) =>
          owner !== undefined ? gatewayOf(owner.merchantId) : Effect.succeed(fallback)
        )
      return Ports.PaymentGateway.of({
        charge: (request) =>
          Effect.flatMap(chargerOf(request.merchant_id), (g) =>
            Result.isSuccess(g)
              ? g.success.charge(request)
              : Effect.succeed(Ports.ChargeOutcome.Unavailable(notConfigured(g.failure)))
          ),
        retrieve: (tradeId, known) => Effect.flatMap(ofTrade(tradeId), (g) => g.retrieve(tradeId, known)),
        cancel: (tradeId, known) =>
          Effect.flatMap(ofTrade(tradeId), (g) => (g.cancel ? g.cancel(tradeId, known) : g.retrieve(tradeId, known))),
        refund: (request) => Effect.flatMap(ofTrade(request.trade_id), (g) => g.refund(request)),
        saveCard: (request) =>
          Effect.flatMap(chargerOf(request.merchant_id), (g) =>
            Result.isSuccess(g)
              ? g.success.saveCard(request)
              : Effect.succeed(Ports.SaveCardOutcome.Unavailable(notConfigured(g.failure)))
          ),
        completeSaveCard: (request) =>
          Effect.flatMap(chargerOf(request.merchant_id), (g) =>
            Result.isSuccess(g)
              ? g.success.completeSaveCard
                ? g.success.completeSaveCard(request)
                : Effect.succeed(
                    Ports.SaveCardOutcome.Failed({ code: "resource_missing", message: "No such card set-up." })
                  )
              : Effect.succeed(Ports.SaveCardOutcome.Unavailable(notConfigured(g.failure)))
          ),
        refusal: refusalOf,
        // sandbox merchants' 3-D Secure challenges are the gateway beneath's (Stripe serves its own)
        ...(fallback.challengePage !== undefined ? { challengePage: fallback.challengePage } : {}),
        verifyAccount: (keys) => verifyAccount(keys, options),
        accountChange: (request) =>
          Effect.gen(function* () {
            // keys saved before their account was kept: the current key tells it (its customers
            // not kept yet are then known to live there); a key that no longer answers tells nothing
            if (request.from !== null) return yield* savedCardsElsewhere(storage, request)
            const current = yield* stripeOf(request.merchant_id)
            const from =
              current === undefined
                ? undefined
                : yield* Effect.tryPromise(() => current.stripe.accounts.retrieveCurrent()).pipe(
                    Effect.map((account) => account.id),
                    Effect.orElseSucceed(() => undefined)
                  )
            return yield* savedCardsElsewhere(storage, { ...request, from: from ?? null })
          }),
        minimumCharge: (request) =>
          Effect.flatMap(gatewayOf(request.merchant_id), (g) =>
            g.minimumCharge ? g.minimumCharge(request) : Effect.succeed(Option.none())
          ),
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
