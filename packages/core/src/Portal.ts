/**
 * The customer portal: a short-lived, signed link a merchant creates for one of its customers
 * (`POST /api/v1/customer-portal/auth`), and what that link may see and do — that customer's
 * subscriptions, invoices and payment method, nothing of anyone else's. Every action goes
 * through the engine's public operations, so it has the same rules and events as over REST.
 *
 * @since 0.1.0
 */
import { Context, DateTime, Effect, Layer, Option } from "effect"
import * as Entities from "./Entities.js"
import { Flow, PortalSession } from "./PortalSession.js"
import * as Errors from "./Errors.js"
import * as Ids from "./Ids.js"
import { merchantNow } from "./internal/engine.js"
import { timingSafeEqual } from "./internal/records.js"
import type * as Invoice from "./Invoice.js"
import * as Merchants from "./Merchants.js"
import { isRedirectUrl } from "./Requests.js"
import * as Secrets from "./Secrets.js"
import * as Settings from "./Settings.js"
import type * as Store from "./Store.js"
import { Storage } from "./Store.js"
import type * as Subscription from "./Subscription.js"

/**
 * The body of `POST /api/v1/customer-portal/auth`.
 *
 * @since 0.1.0
 */
export interface CreatePortalSession {
  readonly customer_id?: string | undefined
  readonly return_url?: string | undefined
  readonly flow?: string | undefined
}

/** How long a portal link works. */
export const SESSION_MS = 60 * 60 * 1000

/**
 * What a portal page shows: the session, the merchant's name, the customer, and the customer's
 * subscriptions (with their saved card) and invoices — nothing of another customer.
 *
 * @since 0.1.0
 */
export interface PortalView {
  readonly session: PortalSession
  readonly merchantName: string
  readonly customer: { readonly name: string | null; readonly email: string | null }
  readonly subscriptions: ReadonlyArray<{
    readonly subscription: Subscription.Subscription
    readonly payment_method: Entities.PaymentMethod | null
    /** The name of the price the subscription is on. */
    readonly price_name: string
  }>
  readonly invoices: ReadonlyArray<Invoice.Invoice>
}

const invalid = (param: string, reason: string) => new Errors.InvalidParameter({ param, reason })

/**
 * The portal service.
 *
 * @since 0.1.0
 */
export class Portal extends Context.Service<Portal>()("@recur/core/Portal", {
  make: Effect.gen(function* () {
    const storage = yield* Storage
    const merchants = yield* Merchants.Merchants
    const secrets = yield* Secrets.Secrets
    const settings = yield* Settings.Settings
    const sessions = storage.repository(Entities.portalSession)
    const customers = storage.repository(Entities.customer)
    const subs = storage.repository(Entities.subscription)
    const invoices = storage.repository(Entities.invoice)
    const versions = storage.repository(Entities.priceVersion)
    const now = merchantNow(storage)
    const base = settings.publicUrl.replace(/\/+$/, "")
    const signatureOf = (merchantId: string, id: string) => secrets.sign(`portal:${merchantId}:${id}`)

    /** Creates a portal link for one customer of this merchant, working for an hour. */
    const createSession = (merchantId: string, input: CreatePortalSession) =>
      Effect.gen(function* () {
        yield* merchants.get(merchantId)
        if (input.customer_id === undefined) return yield* invalid("customer_id", "is required")
        const customer = yield* Effect.orDie(customers.get(merchantId, input.customer_id))
        if (Option.isNone(customer) || customer.value.value.deleted_at !== null)
          return yield* new Errors.NotFound({ resource: "customer", id: input.customer_id })
        if (input.return_url !== undefined && !isRedirectUrl(input.return_url))
          return yield* invalid("return_url", "must be an absolute http(s) URL of at most 2048 characters")
        if (input.flow !== undefined && !Flow.literals.includes(input.flow as never))
          return yield* invalid("flow", `must be ${Flow.literals.join(" or ")}`)
        const at = yield* now(merchantId)
        const id = yield* Ids.make(Ids.prefixes.portalSession)
        const session = new PortalSession({
          portal_session_id: id,
          merchant_id: merchantId,
          customer_id: input.customer_id,
          return_url: input.return_url ?? null,
          flow: (input.flow as typeof Flow.Type | undefined) ?? null,
          url: `${base}/portal/${id}/${yield* signatureOf(merchantId, id)}`,
          created_at: DateTime.makeUnsafe(at),
          expires_at: DateTime.makeUnsafe(at + SESSION_MS)
        })
        yield* Effect.orDie(sessions.insert(session))
        return session
      }).pipe(Effect.withSpan("Portal.createSession"))

    /**
     * The session a link names, when its signature is right and it has not expired; none
     * otherwise (the three look the same to the visitor).
     */
    const sessionOf = (id: string, token: string) =>
      Effect.gen(function* () {
        if (!/^bps_[0-9a-z]{26}$/.test(id) || token.length > 100) return Option.none<PortalSession>()
        const found = yield* Effect.orDie(sessions.lookup("id", id))
        if (Option.isNone(found)) return Option.none<PortalSession>()
        const session = found.value.value
        const expected = yield* signatureOf(session.merchant_id, id)
        if (!timingSafeEqual(expected, token)) return Option.none<PortalSession>()
        if ((yield* now(session.merchant_id)) >= DateTime.toEpochMillis(session.expires_at))
          return Option.none<PortalSession>()
        return Option.some(session)
      })

    /** What the session's customer sees: their subscriptions and invoices, newest first. */
    const view = (session: PortalSession) =>
      Effect.gen(function* () {
        const m = session.merchant_id
        const merchant = yield* merchants.get(m)
        const customer = Option.getOrUndefined(yield* Effect.orDie(customers.get(m, session.customer_id)))?.value
        const mine: ReadonlyArray<Store.Filter> = [{ column: "customer_id", op: "in", values: [session.customer_id] }]
        const ownSubs = (yield* Effect.orDie(subs.list(m, { limit: 100, filters: mine }))).list
        const ownInvoices = (yield* Effect.orDie(invoices.list(m, { limit: 100, filters: mine }))).list
        const prices = yield* Effect.orDie(
          versions.getMany(m, [...new Set(ownSubs.map((r) => r.subscription.price_version_id))])
        )
        return {
          session,
          merchantName: merchant.name,
          customer: { name: customer?.name ?? null, email: customer?.email ?? null },
          subscriptions: ownSubs.map((r) => ({
            subscription: r.subscription,
            payment_method: r.payment_method,
            price_name: prices.get(r.subscription.price_version_id)?.value.price_name ?? r.subscription.price_id
          })),
          invoices: ownInvoices
        } satisfies PortalView
      })

    /** One of the session customer's subscriptions; another customer's is not found. */
    const ownSubscription = (session: PortalSession, subscriptionId: string) =>
      Effect.gen(function* () {
        const found = yield* Effect.orDie(subs.get(session.merchant_id, subscriptionId))
        if (Option.isNone(found) || found.value.value.subscription.customer_id !== session.customer_id)
          return yield* new Errors.NotFound({ resource: "subscription", id: subscriptionId })
        return found.value.value.subscription
      })

    return { createSession, sessionOf, view, ownSubscription } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
