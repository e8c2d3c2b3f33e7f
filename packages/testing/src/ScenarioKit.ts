/**
 * What the scenario files (engine, subscriptions, discounts, taxes, invoice documents, the
 * portal) share: the whole engine (without taxes, or with the merchants' own tax rates), a
 * sandbox merchant frozen at a start with a product and a monthly price, a paid checkout, a
 * subscription's invoices and an object's events — all through the engine's services, no REST.
 *
 * @since 0.1.0
 */
import {
  Billing,
  Catalog,
  Checkout,
  Common,
  Discounts,
  Engine,
  Entities,
  Merchants,
  Ports,
  type PriceRules,
  SandboxClock,
  Secrets,
  SessionPayments,
  Settings,
  Store,
  TaxRates
} from "@recur/core"
import { Requests } from "@recur/contract"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Effect, Layer, Option } from "effect"
import * as ServicesContract from "./ServicesContract.js"
import * as WebhookRecorder from "./WebhookRecorder.js"

/**
 * The whole engine on a storage layer, with the sandbox gateway.
 *
 * @since 0.1.0
 */
export const engine = <E>(storage: Layer.Layer<Store.Storage, E>) =>
  Engine.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(storage, Secrets.layer(ServicesContract.testMasterKey))),
    Layer.provideMerge(
      Layer.mergeAll(
        SandboxGateway.layer(),
        Ports.fxStatic({ "USD:JPY": "150.5" }),
        Ports.taxNone,
        Settings.layer(),
        WebhookRecorder.layer
      )
    )
  )

/**
 * The services {@link engine} provides, for the scenario files that register their tests in a
 * suite over it.
 *
 * @since 0.1.0
 */
export type Services = Layer.Success<ReturnType<typeof engine<never>>>

/**
 * The whole engine on a storage layer with the sandbox gateway and the merchants' own tax rates
 * (`TaxRates.table`), as the REST adapter and the facade wire it.
 *
 * @since 0.1.0
 */
export const taxedEngine = <E>(storage: Layer.Layer<Store.Storage, E>) =>
  Engine.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        SandboxGateway.layer(),
        Ports.fxStatic({}),
        TaxRates.table(),
        Settings.layer(),
        WebhookRecorder.layer
      )
    ),
    Layer.provideMerge(Layer.mergeAll(storage, Secrets.layer(ServicesContract.testMasterKey)))
  )

/** An instant as Unix milliseconds. */
export const iso = (s: string) => Date.parse(s)

/** The day (YYYY-MM-DD, UTC) of an instant in Unix milliseconds. */
export const day = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/** A decimal amount as minor units ("27.00" → 2700n). */
export const minor = (amount: string) => {
  const negative = amount.startsWith("-")
  const [whole, frac = ""] = (negative ? amount.slice(1) : amount).split(".")
  const units = BigInt(whole!) * 100n + BigInt(frac.padEnd(2, "0"))
  return negative ? -units : units
}

/** A sandbox merchant frozen at `start`, in USD. */
export const merchantAt = (start: string, extra: Partial<Merchants.CreateMerchant> = {}) =>
  Effect.map(
    Merchants.Merchants.use((m) => m.create({ name: "Acme", currency: "USD", frozen_time: iso(start), ...extra })),
    (r) => r.merchant.merchant_id
  )

/** A product of the merchant. */
export const productOf = (merchantId: string, name = "Pro") =>
  Effect.map(
    Catalog.Catalog.use((c) => c.createProduct(merchantId, { product_name: name })),
    (p) => p.product_id
  )

/**
 * A flat monthly price of `productId` at `base` (a decimal amount), as its price version;
 * `extra` overrides its fields.
 */
export const monthlyVersion = (
  merchantId: string,
  productId: string,
  base: string,
  extra: Partial<PriceRules.PriceInput> = {},
  name = `Plan ${base}`
) =>
  Catalog.Catalog.use((c) =>
    c.createPrice(merchantId, {
      name,
      product_id: productId,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", billing_cycle_count: 1, base_price_val: base },
      ...extra
    })
  )

/** A flat monthly price of `productId` at `base` (a decimal amount); `extra` overrides its fields. */
export const monthly = (
  merchantId: string,
  productId: string,
  base: string,
  extra: Partial<PriceRules.PriceInput> = {},
  name = `Plan ${base}`
) => Effect.map(monthlyVersion(merchantId, productId, base, extra, name), (pv) => pv.id)

/**
 * A sandbox merchant frozen at `start` with one product ("Pro") and a flat monthly price at
 * `base` (named `Plan <base>`).
 *
 * @since 0.1.0
 */
export const shopAt = (start: string, base = "30.00") =>
  Effect.gen(function* () {
    const merchantId = yield* merchantAt(start)
    const productId = yield* productOf(merchantId)
    const priceId = yield* monthly(merchantId, productId, base)
    return { merchantId, productId, priceId }
  })

/**
 * A sandbox merchant frozen at `start` with the product "Pro" and its price "Pro monthly" (30.00
 * a month unless `price` says otherwise); `merchant` adds to the merchant's fields.
 *
 * @since 0.1.0
 */
export const setup = (
  start: string,
  price: Partial<PriceRules.PriceInput> = {},
  merchant: Partial<Merchants.CreateMerchant> = {}
) =>
  Effect.gen(function* () {
    const merchantId = yield* merchantAt(start, merchant)
    const pv = yield* monthlyVersion(merchantId, yield* productOf(merchantId), "30.00", price, "Pro monthly")
    return { merchantId, priceId: pv.id, pv }
  })

/** A flat monthly price at `base` of the merchant's first product (named `Plan <base>`). */
export const monthlyOfFirstProduct = (merchantId: string, base: string) =>
  Effect.flatMap(
    Catalog.Catalog.use((c) => c.listProducts(merchantId, {})),
    (products) => monthly(merchantId, products.list[0]!.product_id, base)
  )

/** The subscription a paid checkout made (it made one). */
export const subscriptionOf = (result: Billing.PaymentResult) => Option.getOrThrow(result.subscription)

/** A billing address by country (and region). */
export const address = (country_code: string, province_code?: string) =>
  new Common.BillingAddress(province_code === undefined ? { country_code } : { country_code, province_code })

/** A test card with the `number`, valid until 2099. */
export const card = (number: string): Ports.CardInput => ({ number, exp_month: 12, exp_year: 2099, cvc: "123" })

/**
 * A checkout session opened from a REST-shaped body, decoded as the REST adapter and the facade
 * decode it (`@recur/contract`'s `Requests.sessionCommand`).
 */
export const openSession = (merchantId: string, body: Requests.SessionRequest) =>
  Effect.flatMap(Requests.sessionCommand(body), (command) =>
    Checkout.Checkout.use((checkout) => checkout.createSession(merchantId, command))
  )

/**
 * A checkout session opened with `input` and paid with the card `number`: the session as opened,
 * and the subscription, trade and customer it made.
 */
export const checkout = (merchantId: string, input: Requests.SessionRequest, number = "4242424242424242") =>
  Effect.gen(function* () {
    const billing = yield* Billing.Billing
    const opened = yield* openSession(merchantId, {
      ...(input.customer_id === undefined ? { payer_id: `payer-${Math.random().toString(36).slice(2)}` } : {}),
      return_url: "https://shop.example/done",
      ...input
    })
    const result = yield* (yield* SessionPayments.SessionPayments).paySession(
      merchantId,
      opened.session_id,
      card(number)
    )
    const session = yield* (yield* Checkout.Checkout).getSession(merchantId, opened.session_id)
    const trade = session.trade_id !== null ? yield* billing.getTrade(merchantId, session.trade_id) : undefined
    return {
      opened,
      session,
      result,
      subscriptionId: Option.match(result.subscription, { onNone: () => "", onSome: (s) => s.id }),
      customerId: session.customer_id ?? "",
      trade
    }
  })

/**
 * Checkout: a session for the price opened for a new payer, paid with the card `number`.
 *
 * @since 0.1.0
 */
export const subscribe = (
  merchantId: string,
  priceId: string,
  number = "4242424242424242",
  extra: Partial<Requests.SessionRequest> = {}
) =>
  Effect.gen(function* () {
    const _billing = yield* Billing.Billing
    const sessionPayments = yield* SessionPayments.SessionPayments
    const session = yield* openSession(merchantId, {
      payer_id: `payer-${Math.random().toString(36).slice(2)}`,
      line_items: [{ price_id: priceId }],
      return_url: "https://shop.example/done",
      ...extra
    })
    const result = yield* sessionPayments.paySession(merchantId, session.session_id, card(number))
    return { session, result }
  })

/**
 * Every invoice of a subscription, oldest first.
 *
 * @since 0.1.0
 */
export const invoicesOf = (merchantId: string, subscriptionId: string) =>
  Effect.map(
    Billing.Billing.use((b) =>
      b.listInvoices(merchantId, {
        limit: 100,
        filters: [{ column: "subscription_id", op: "in", values: [subscriptionId] }]
      })
    ),
    (p) => [...p.list].reverse()
  )

/**
 * Event types written for an object, in order.
 *
 * @since 0.1.0
 */
export const eventsOf = (merchantId: string, businessId: string) =>
  Effect.gen(function* () {
    const page = yield* Effect.orDie(
      (yield* Store.Storage)
        .repository(Entities.webhookEvent)
        .list(merchantId, { limit: 100, filters: [{ column: "business_id", op: "in", values: [businessId] }] })
    )
    return [...page.list].sort((a, b) => a.sequence - b.sequence).map((e) => e.type)
  })

/** A checkout of one price, paid. */
export const subscribeTo = (
  merchantId: string,
  priceId: string,
  extra: Partial<Requests.SessionRequest> = {},
  number = "4242424242424242"
) => checkout(merchantId, { line_items: [{ price_id: priceId }], ...extra }, number)

/** Moves the merchant's frozen clock to `to`, running everything due on the way. */
export const advance = (merchantId: string, to: string) =>
  SandboxClock.SandboxClock.use((c) => c.advanceClock(merchantId, iso(to)))

/**
 * The discounts service taking the merchant API's bodies, decoded as the REST adapter decodes
 * them (`create`, `applyToSubscription`); its other methods as the service has them.
 *
 * @since 0.1.0
 */
export const discountsByRequest = Effect.gen(function* () {
  const discounts = yield* Discounts.Discounts
  return {
    ...discounts,
    create: (merchantId: string, body: Requests.DiscountRequest) =>
      Effect.flatMap(Requests.discountCommand(body), (command) =>
        Requests.refusedAsParameter(discounts.create(merchantId, command))
      ),
    applyToSubscription: (
      merchantId: string,
      subscriptionId: string,
      body: { readonly discount_id?: string | undefined; readonly discount_code?: string | undefined }
    ) =>
      Effect.flatMap(Requests.discountRef(body), (ref) =>
        Requests.refusedAsParameter(discounts.applyToSubscription(merchantId, subscriptionId, ref))
      )
  }
})
