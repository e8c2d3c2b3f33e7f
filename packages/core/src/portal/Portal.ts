/**
 * The customer portal: a short-lived, signed link a merchant creates for one of its customers
 * (`Portal.createSession`), and what that link may see and do — that customer's
 * subscriptions, invoices and payment method, nothing of anyone else's. Every action goes
 * through the engine's public operations, so it has the same rules and events as over REST.
 *
 * @since 0.1.0
 */
import { Context, DateTime, Effect, Layer, Option, Result } from "effect"
import * as Catalog from "../catalog/Catalog.js"
import type { Locale } from "../checkout/CheckoutSession.js"
import * as Entities from "../kernel/Entities.js"
import { defaultPortalSettings, type Flow, PortalSession, PortalSettings, type QuantityRule } from "./PortalSession.js"
import * as PortalInvoices from "./PortalInvoices.js"
import * as PortalQuantities from "./PortalQuantities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { merchantNow } from "../kernel/ServiceSupport.js"
import type * as Invoice from "../invoices/Invoice.js"
import * as Merchants from "../tenants/Merchants.js"
import * as PaymentSettings from "../payments/PaymentSettings.js"
import type * as Price from "../catalog/Price.js"
import * as IntervalSwitch from "../subscriptions/IntervalSwitch.js"
import * as PriceChanges from "../subscriptions/PriceChanges.js"
import * as Renewals from "../subscriptions/Renewals.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"
import * as PortalUsage from "./PortalUsage.js"
import * as Store from "../kernel/Store.js"
import type * as Subscription from "../subscriptions/Subscription.js"

/**
 * A new portal link: the customer it is for, where its return link leads, the flow it opens on
 * and its language (decoded from the merchant API's body by the contract's
 * `Requests.portalSessionCommand`).
 *
 * @since 0.1.0
 */
export interface SessionCommand {
  readonly customerId: Ids.CustomerId
  /** An absolute http(s) URL (`CheckoutSession.isRedirectUrl`). */
  readonly returnUrl: Option.Option<string>
  readonly flow: Option.Option<typeof Flow.Type>
  readonly locale: Option.Option<typeof Locale.Type>
}

/**
 * A change of the merchant's portal settings: `reset` returns to the server's default;
 * otherwise the settings given change and the others keep their value. Every price to switch
 * between must be one of the merchant's active recurring prices, each listed once (decoded from
 * the merchant API's body by the contract's `Requests.portalSettingsCommand`).
 *
 * @since 0.1.0
 */
export type SettingsCommand =
  | { readonly reset: true }
  | {
      readonly reset: false
      readonly paymentMethodUpdate: Option.Option<boolean>
      readonly cancel: Option.Option<boolean>
      readonly invoiceHistory: Option.Option<boolean>
      readonly switchPrices: Option.Option<ReadonlyArray<Ids.PriceId>>
      /** The prices whose quantity customers may change, with bounds (absent: unchanged). */
      readonly adjustQuantities?: ReadonlyArray<QuantityRule> | undefined
    }

/**
 * Portal settings as configured (a server's `RECUR_PORTAL_SETTINGS`, the facade's `portal`
 * option): the settings given, the others the default.
 *
 * @since 0.1.0
 */
export interface ConfiguredSettings {
  readonly payment_method_update?: boolean | undefined
  readonly cancel?: boolean | undefined
  readonly invoice_history?: boolean | undefined
  readonly switch_prices?: ReadonlyArray<string> | undefined
  readonly adjust_quantities?: ReadonlyArray<QuantityRule> | undefined
}

/** The most prices a merchant may list for switching in the portal. */
export const MAX_SWITCH_PRICES = 20

/**
 * A price a subscription may switch to in the portal: its name, and for a flat price what a
 * cycle costs.
 *
 * @since 0.1.0
 */
export interface SwitchOption {
  readonly price_id: string
  readonly name: string
  /** A flat price's amount per cycle (a decimal string); null for prices billed by quantity or usage. */
  readonly amount: string | null
  readonly currency: string
  readonly interval: { readonly unit: string; readonly count: number } | null
}

const invalid = (param: string, reason: string) => new Errors.InvalidParameter({ param, reason })

/**
 * Portal settings given as configuration (a server's `RECUR_PORTAL_SETTINGS`, the facade's
 * `portal` option), checked for their shape: the fields left out keep the default. The prices
 * are checked per merchant when a portal lists them (another merchant's are ignored).
 *
 * @since 0.1.0
 */
export const configured = (input: ConfiguredSettings): Result.Result<PortalSettings, Errors.InvalidParameter> => {
  const flags = ["payment_method_update", "cancel", "invoice_history"] as const
  for (const flag of flags)
    if (input[flag] !== undefined && typeof input[flag] !== "boolean")
      return Result.fail(invalid(flag, "must be true or false"))
  const prices = input.switch_prices ?? []
  if (!Array.isArray(prices) || prices.some((p) => typeof p !== "string" || p.length === 0 || p.length > 64))
    return Result.fail(invalid("switch_prices", "must be an array of price ids"))
  if (prices.length > MAX_SWITCH_PRICES)
    return Result.fail(invalid("switch_prices", `may list at most ${MAX_SWITCH_PRICES} prices`))
  const rules = input.adjust_quantities ?? []
  if (!Array.isArray(rules) || rules.some((r) => typeof r !== "object" || r === null || typeof r.price_id !== "string"))
    return Result.fail(invalid("adjust_quantities", "must be an array of { price_id, min, max }"))
  const badRule = PortalQuantities.ruleRefusal(rules)
  if (badRule) return Result.fail(badRule)
  return Result.succeed(
    new PortalSettings({
      payment_method_update: input.payment_method_update ?? defaultPortalSettings.payment_method_update,
      cancel: input.cancel ?? defaultPortalSettings.cancel,
      invoice_history: input.invoice_history ?? defaultPortalSettings.invoice_history,
      switch_prices: [...new Set(prices)],
      adjust_quantities: rules.map((r) => ({ price_id: r.price_id, min: r.min, max: r.max }))
    })
  )
}

/** What a portal may do: replace the card, cancel (and revoke), see invoices, switch price, change a quantity. */
export type Feature = "payment_method_update" | "cancel" | "invoice_history" | "switch_price" | "adjust_quantity"

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
    /**
     * Its items when it has several (the base item first): each price's name and quantity, and
     * whether it is billed by usage (`metered`); empty for a subscription of one item (its price
     * is `price_name`).
     */
    readonly items: ReadonlyArray<{ readonly name: string; readonly quantity: string; readonly metered: boolean }>
    /** What its next renewal will bill, when it will renew. */
    readonly upcoming: Invoice.UpcomingInvoice | null
    readonly usage: PortalUsage.PortalUsage | null
    /** The prices the merchant lets it switch to (empty when switching is off for it). */
    readonly switch_options: ReadonlyArray<SwitchOption>
    /** Its items whose quantity the merchant lets the customer change (empty: none). */
    readonly quantity_options: ReadonlyArray<PortalQuantities.QuantityOption>
  }>
  /** Empty when the merchant's settings hide the invoice history. */
  readonly invoices: ReadonlyArray<Invoice.Invoice>
  /** The invoices to pay now and the balance, shown whatever the invoice history setting. */
  readonly account: PortalInvoices.Account
  /** What the merchant lets its customers do here. */
  readonly settings: PortalSettings
  /** How the card form takes a payment method: the sandbox's fields or Stripe's Payment Element. */
  readonly payments: PaymentSettings.PageMode
  /** The merchant's currency (a Payment Element in setup mode needs one). */
  readonly currency: string
}

/**
 * The portal service.
 *
 * @since 0.1.0
 */
export class Portal extends Context.Service<Portal>()("@recur/core/Portal", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const secrets = yield* Secrets.Secrets
    const settings = yield* Settings.Settings
    const catalog = yield* Catalog.Catalog
    const priceChanges = yield* PriceChanges.PriceChanges
    const renewals = yield* Renewals.Renewals
    const accountOf = yield* PortalInvoices.account
    const sessions = storage.repository(Entities.portalSession)
    const customers = storage.repository(Entities.customer)
    const subs = storage.repository(Entities.subscription)
    const invoices = storage.repository(Entities.invoice)
    const versions = storage.repository(Entities.priceVersion)
    const now = merchantNow(storage)
    const base = settings.publicUrl.replace(/\/+$/, "")
    const signatureOf = (merchantId: string, id: string) => secrets.sign(`portal:${merchantId}:${id}`)

    /** The merchant's own portal settings, else the server's default. */
    const effective = (merchant: { readonly portal_settings: PortalSettings | null }) =>
      merchant.portal_settings ?? settings.portal

    /** The portal settings in force for a merchant. */
    const settingsOf = Effect.fn("Portal.settingsOf")(function* (merchantId: string) {
      return yield* Effect.map(merchants.get(merchantId), effective)
    })

    /**
     * Changes the merchant's portal settings: the settings given (the others keep their value);
     * `reset` returns to the server's default. Every price to switch between must be one of the
     * merchant's active recurring prices, listed once: a `CommandRefused` names the entry's index
     * and price otherwise.
     */
    const setSettings = Effect.fn("Portal.setSettings")(function* (merchantId: string, command: SettingsCommand) {
      if (command.reset) {
        yield* merchants.setPortalSettings(merchantId, null)
        return settings.portal
      }
      const base = yield* settingsOf(merchantId)
      const prices = Option.getOrElse(command.switchPrices, () => base.switch_prices)
      const refused = (detail: string, index?: number, id?: string, missing?: true) =>
        new Errors.CommandRefused({
          part: index === undefined ? "switchPrices" : "switchPrice",
          ...(index !== undefined ? { index } : {}),
          ...(id !== undefined ? { id } : {}),
          detail,
          ...(missing ? { missing } : {})
        })
      if (prices.length > MAX_SWITCH_PRICES) return yield* refused(`may list at most ${MAX_SWITCH_PRICES} prices`)
      if (Option.isSome(command.switchPrices))
        for (const [i, id] of command.switchPrices.value.entries()) {
          if (command.switchPrices.value.indexOf(id) !== i) return yield* refused("is listed twice", i, id)
          const version = yield* catalog.sellableVersion(merchantId, id).pipe(
            Effect.catchTags({
              PriceNotFound: () => refused("is not a price of this merchant", i, id, true),
              StateConflict: () => refused("is not an active price", i, id)
            })
          )
          if (version.billing_type !== "recurring" || version.price_plan === null)
            return yield* refused("is not a recurring price", i, id)
        }
      const rules = command.adjustQuantities ?? base.adjust_quantities
      if (command.adjustQuantities !== undefined) {
        const bad = PortalQuantities.ruleRefusal(rules)
        if (bad) return yield* bad
        for (const [i, r] of rules.entries()) {
          // the entry's price, named by the adapter from the list and the entry
          const param = "adjust_quantities"
          const entry = { index: i, field: "price_id" }
          const wrong = (reason: string) => new Errors.InvalidParameter({ param, entry, reason })
          const version = yield* catalog.sellableVersion(merchantId, r.price_id).pipe(
            Effect.catchTags({
              PriceNotFound: () =>
                Effect.fail(new Errors.NotFound({ resource: "price", id: r.price_id, param, entry })),
              StateConflict: () => Effect.fail(wrong("is not an active price"))
            })
          )
          if (version.billing_type !== "recurring" || version.billing_dimension !== "quantity")
            return yield* wrong("is not a recurring price billed by quantity")
        }
      }
      const next = new PortalSettings({
        payment_method_update: Option.getOrElse(command.paymentMethodUpdate, () => base.payment_method_update),
        cancel: Option.getOrElse(command.cancel, () => base.cancel),
        invoice_history: Option.getOrElse(command.invoiceHistory, () => base.invoice_history),
        switch_prices: [...prices],
        adjust_quantities: rules.map((r) => ({ price_id: r.price_id, min: r.min, max: r.max }))
      })
      yield* merchants.setPortalSettings(merchantId, next)
      return next
    })

    /**
     * The prices a subscription may switch to: when it is on one of the listed prices and live
     * (trial or active), the other listed prices that are still sold and bill like it (currency,
     * dimension — the rules of a price change); a price of another interval only when the engine
     * would switch to it now (`IntervalSwitch.refusal`: one item, no fixed term, no pending lines…).
     */
    const switchOptions = (
      merchantId: string,
      allowed: PortalSettings,
      rec: Entities.SubscriptionRecord,
      current: Price.PriceVersion
    ) =>
      Effect.gen(function* () {
        const sub = rec.subscription
        if ((sub.status !== "active" && sub.status !== "trial") || !allowed.switch_prices.includes(sub.price_id))
          return [] as ReadonlyArray<SwitchOption>
        const options: Array<SwitchOption> = []
        for (const id of allowed.switch_prices) {
          if (id === sub.price_id) continue
          // another customer's private price is never offered
          const found = yield* Effect.option(catalog.sellableVersion(merchantId, id, sub.customer_id))
          if (Option.isNone(found)) continue
          const v = found.value
          const [from, to] = [current.price_plan, v.price_plan]
          if (
            v.billing_type !== "recurring" ||
            from === null ||
            to === null ||
            v.currency !== current.currency ||
            v.billing_dimension !== current.billing_dimension ||
            (IntervalSwitch.switchesInterval(current, v) &&
              IntervalSwitch.refusal(sub.id, rec, v, { effective: "immediate" }) !== undefined)
          )
            continue
          options.push({
            price_id: v.id,
            name: v.price_name,
            amount: v.price_type === "flat_price" ? to.base_price_val : null,
            currency: v.currency,
            interval: { unit: to.billing_cycle_unit, count: to.billing_cycle_count }
          })
        }
        return options as ReadonlyArray<SwitchOption>
      })

    /**
     * Creates a portal link for one customer of this merchant, working for an hour; a flow the
     * merchant's settings turned off is a `CommandRefused`.
     */
    const createSession = Effect.fn("Portal.createSession")(function* (merchantId: string, command: SessionCommand) {
      yield* merchants.get(merchantId)
      const customer = yield* Effect.orDie(customers.get(merchantId, command.customerId))
      if (Option.isNone(customer) || customer.value.value.deleted_at !== null)
        return yield* new Errors.NotFound({ resource: "customer", id: command.customerId })
      if (Option.isSome(command.flow) && command.flow.value === "payment_method_update") {
        if (!(yield* settingsOf(merchantId)).payment_method_update)
          return yield* new Errors.CommandRefused({
            part: "portalFlow",
            id: command.flow.value,
            detail: "payment_method_update is turned off in the portal settings"
          })
      }
      const at = yield* now(merchantId)
      const id = yield* Ids.make(Ids.prefixes.portalSession)
      const session = new PortalSession({
        portal_session_id: id,
        merchant_id: merchantId,
        customer_id: command.customerId,
        return_url: Option.getOrNull(command.returnUrl),
        flow: Option.getOrNull(command.flow),
        locale: Option.getOrNull(command.locale),
        url: `${base}/portal/${id}/${yield* signatureOf(merchantId, id)}`,
        created_at: DateTime.makeUnsafe(at),
        expires_at: DateTime.makeUnsafe(at + SESSION_MS),
        revoked_at: null
      })
      yield* Effect.orDie(sessions.insert(session))
      return session
    })

    /**
     * The session a link names, when its signature is right, it has not expired, it was not
     * revoked and its customer was not deleted; none otherwise (all look the same to the
     * visitor). Every portal route asks this first, so a revocation or a deletion takes effect
     * on the next request.
     */
    const sessionOf = Effect.fn("Portal.sessionOf")(function* (id: string, token: string) {
      if (!/^bps_[0-9a-z]{26}$/.test(id) || token.length > 100) return Option.none<PortalSession>()
      const found = yield* Effect.orDie(sessions.lookup("id", id))
      if (Option.isNone(found)) return Option.none<PortalSession>()
      const session = found.value.value
      if (!(yield* secrets.verify(`portal:${session.merchant_id}:${id}`, token))) return Option.none<PortalSession>()
      if (session.revoked_at !== null) return Option.none<PortalSession>()
      if ((yield* now(session.merchant_id)) >= DateTime.toEpochMillis(session.expires_at))
        return Option.none<PortalSession>()
      const customer = yield* Effect.orDie(customers.get(session.merchant_id, session.customer_id))
      if (Option.isNone(customer) || customer.value.value.deleted_at !== null) return Option.none<PortalSession>()
      return Option.some(session)
    })

    /**
     * Revokes one of the merchant's portal links: from now on it answers as an unknown link.
     * Revoking a revoked link changes nothing; another merchant's is not found.
     */
    const revokeSession = Effect.fn("Portal.revokeSession")(function* (merchantId: string, sessionId: string) {
      for (;;) {
        const found = yield* Effect.orDie(sessions.get(merchantId, sessionId))
        if (Option.isNone(found)) return yield* new Errors.NotFound({ resource: "portal_session", id: sessionId })
        const current = found.value.value
        if (current.revoked_at !== null) return current
        const revoked = new PortalSession({ ...current, revoked_at: DateTime.makeUnsafe(yield* now(merchantId)) })
        // a concurrent revocation won the write: read it again (it is revoked either way)
        const written = yield* sessions.update(revoked, found.value.version).pipe(
          Effect.as(true),
          Effect.catchTag("VersionConflict", () => Effect.succeed(false)),
          Effect.orDie
        )
        if (written) return revoked
      }
    })

    /** What the session's customer sees: their subscriptions and invoices, newest first. */
    const view = Effect.fn("Portal.view")(function* (session: PortalSession) {
      const m = session.merchant_id
      const merchant = yield* merchants.get(m)
      const allowed = effective(merchant)
      const customer = Option.getOrUndefined(yield* Effect.orDie(customers.get(m, session.customer_id)))?.value
      const mine: ReadonlyArray<Store.Filter> = [{ column: "customer_id", op: "in", values: [session.customer_id] }]
      const ownSubs = (yield* Effect.orDie(subs.list(m, { limit: 100, filters: mine }))).list
      // issued documents only: a checkout's draft (not paid yet) or voided invoice has no number and no page
      const ownInvoices = allowed.invoice_history
        ? (yield* Effect.orDie(invoices.list(m, { limit: 100, filters: mine }))).list.filter(
            (i) => i.number !== null || (i.biz_status !== "pending" && i.biz_status !== "void")
          )
        : []
      const prices = yield* Effect.orDie(
        versions.getMany(m, [...new Set(ownSubs.map((r) => r.subscription.price_version_id))])
      )
      const subscriptions = yield* Effect.forEach(ownSubs, (r) =>
        Effect.gen(function* () {
          const current = prices.get(r.subscription.price_version_id)?.value
          const priceName = current?.price_name ?? r.subscription.price_id
          return {
            subscription: r.subscription,
            payment_method: r.payment_method,
            price_name: priceName,
            items:
              r.extra_items.length > 0
                ? [
                    {
                      name: priceName,
                      quantity: r.subscription.quantity,
                      metered: r.subscription.billing_dimension === "usage"
                    },
                    ...r.extra_items.map((x) => ({
                      name: x.version.price_name,
                      quantity: x.quantity,
                      metered: x.version.billing_dimension === "usage"
                    }))
                  ]
                : [],
            upcoming: Option.getOrNull(yield* renewals.upcoming(m, r.subscription.id)),
            usage: yield* PortalUsage.of(storage)(m, r),
            switch_options: current ? yield* switchOptions(m, allowed, r, current) : [],
            quantity_options: PortalQuantities.quantityOptions(allowed, r, priceName)
          }
        })
      )
      return {
        session,
        merchantName: merchant.name,
        customer: { name: customer?.name ?? null, email: customer?.email ?? null },
        subscriptions,
        invoices: ownInvoices,
        account: yield* accountOf(m, session.customer_id, PortalInvoices.balanceCurrency(ownSubs, merchant.currency)),
        settings: allowed,
        payments: PaymentSettings.pageModeOf(merchant.payment_processor, settings.stripeJsUrl),
        currency: merchant.currency
      } satisfies PortalView
    })

    /** The record of one of the session customer's subscriptions; another customer's is not found. */
    const ownRecord = (session: PortalSession, subscriptionId: string) =>
      Effect.gen(function* () {
        const found = yield* Effect.orDie(subs.get(session.merchant_id, subscriptionId))
        if (Option.isNone(found) || found.value.value.subscription.customer_id !== session.customer_id)
          return yield* new Errors.NotFound({ resource: "subscription", id: subscriptionId })
        return found.value.value
      })

    /** One of the session customer's subscriptions; another customer's is not found. */
    const ownSubscription = Effect.fn("Portal.ownSubscription")(function* (
      session: PortalSession,
      subscriptionId: string
    ) {
      return (yield* ownRecord(session, subscriptionId)).subscription
    })

    /** Whether the merchant lets its customers do `feature` in the portal. */
    const allows = Effect.fn("Portal.allows")(function* (session: PortalSession, feature: Feature) {
      return yield* Effect.map(settingsOf(session.merchant_id), (allowed) =>
        feature === "switch_price"
          ? allowed.switch_prices.length > 0
          : feature === "adjust_quantity"
            ? allowed.adjust_quantities.length > 0
            : allowed[feature]
      )
    })

    /** A price the session customer's subscription may switch to, or a refusal naming `price_id`. */
    const switchTarget = (session: PortalSession, subscriptionId: string, priceId: string) =>
      Effect.gen(function* () {
        const rec = yield* ownRecord(session, subscriptionId)
        const merchant = yield* merchants.get(session.merchant_id)
        const current = yield* Effect.orDie(versions.get(session.merchant_id, rec.subscription.price_version_id))
        const options = Option.isSome(current)
          ? yield* switchOptions(session.merchant_id, effective(merchant), rec, current.value.value)
          : []
        const option = options.find((o) => o.price_id === priceId)
        if (option === undefined || Option.isNone(current))
          return yield* invalid("price_id", "is not a price this subscription may switch to")
        return { option, from: current.value.value.price_name }
      })

    /**
     * What switching one of the session customer's subscriptions to an allowed price will charge
     * or credit now: the engine's quote, prorated at once, with the price switched to and the
     * name of the current one. {@link switchPrice} with its `quote_id` commits exactly these numbers.
     */
    const previewSwitch = Effect.fn("Portal.previewSwitch")(function* (
      session: PortalSession,
      subscriptionId: string,
      priceId: string
    ) {
      const target = yield* switchTarget(session, subscriptionId, priceId)
      const quote = yield* priceChanges.previewChange(
        session.merchant_id,
        PriceChanges.change(subscriptionId, { priceId })
      )
      return { ...target, quote }
    })

    /** Switches the subscription as quoted by {@link previewSwitch}; anything moved since is a refusal. */
    const switchPrice = Effect.fn("Portal.switchPrice")(function* (
      session: PortalSession,
      subscriptionId: string,
      priceId: string,
      quoteId: string
    ) {
      yield* switchTarget(session, subscriptionId, priceId)
      return yield* priceChanges.changePrice(
        session.merchant_id,
        PriceChanges.change(subscriptionId, { priceId, quoteId })
      )
    })

    /** The session customer's subscription, its storage version and its items whose quantity may change. */
    const quantityOptionsOf = (merchantId: string, customerId: string, subscriptionId: string) =>
      Effect.gen(function* () {
        const found = yield* Effect.orDie(subs.get(merchantId, subscriptionId))
        if (Option.isNone(found) || found.value.value.subscription.customer_id !== customerId)
          return yield* new Errors.NotFound({ resource: "subscription", id: subscriptionId })
        const rec = found.value.value
        const pv = yield* Effect.orDie(versions.get(merchantId, rec.subscription.price_version_id))
        const name = Option.isSome(pv) ? pv.value.value.price_name : rec.subscription.price_id
        const allowed = effective(yield* merchants.get(merchantId))
        return { rec, version: found.value.version, options: PortalQuantities.quantityOptions(allowed, rec, name) }
      })
    const quantities = PortalQuantities.quantityChanges({
      storage,
      merchants,
      renewals,
      priceChanges,
      options: quantityOptionsOf
    })

    /**
     * What changing the quantity of an item of the session customer's subscription will do: from
     * the next cycle, the next invoice before and after. Only items at a price the merchant lists
     * in `adjust_quantities`, within its bounds.
     */
    const previewQuantity = Effect.fn("Portal.previewQuantity")(function* (
      session: PortalSession,
      subscriptionId: string,
      itemId: string,
      quantity: string
    ) {
      return yield* quantities.preview(session.merchant_id, session.customer_id, subscriptionId, itemId, quantity)
    })

    /** Changes the item's quantity from its next cycle, as {@link previewQuantity} showed. */
    const adjustQuantity = Effect.fn("Portal.adjustQuantity")(function* (
      session: PortalSession,
      subscriptionId: string,
      itemId: string,
      quantity: string
    ) {
      return yield* quantities.adjust(session.merchant_id, session.customer_id, subscriptionId, itemId, quantity)
    })

    return {
      previewQuantity,
      adjustQuantity,
      createSession,
      revokeSession,
      sessionOf,
      view,
      ownSubscription,
      settingsOf,
      setSettings,
      allows,
      previewSwitch,
      switchPrice
    } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
