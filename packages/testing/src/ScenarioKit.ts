/**
 * What the concept scenario files (discounts, taxes, invoice documents, the portal) share: the
 * whole engine with the merchants' own tax rates, a sandbox merchant frozen at a start, prices,
 * and a paid checkout — all through the engine's services, no REST.
 *
 * @since 0.1.0
 */
import {
  Billing,
  Catalog,
  Checkout,
  Common,
  Engine,
  Merchants,
  Ports,
  type PriceRules,
  SandboxClock,
  Secrets,
  SessionPayments,
  Settings,
  type Store,
  TaxRates
} from "@recur/core"
import { Requests } from "@recur/contract"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Effect, Layer, Option } from "effect"
import * as ServicesContract from "./ServicesContract.js"
import * as WebhookRecorder from "./WebhookRecorder.js"

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

/** A flat monthly price of `productId` at `base` (a decimal amount); `extra` overrides its fields. */
export const monthly = (
  merchantId: string,
  productId: string,
  base: string,
  extra: Partial<PriceRules.PriceInput> = {},
  name = `Plan ${base}`
) =>
  Effect.map(
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
    ),
    (pv) => pv.id
  )

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

const card = (number: string): Ports.CardInput => ({ number, exp_month: 12, exp_year: 2099, cvc: "123" })

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
