/**
 * The merchant's discounts: created, listed, read and ended. What a discount is and how long it
 * lasts is in `Discount`. They take domain commands ({@link DiscountCommand}, {@link DiscountRef});
 * what needs the merchant's data — its currency, its products, its clock — is checked here.
 *
 * @since 0.1.0
 */
import { Context, DateTime, Effect, Layer, Option, Result } from "effect"
import type { Metadata } from "../kernel/Common.js"
import * as Discount from "./Discount.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { emitAll, merchantNow, type StorageService } from "../kernel/ServiceSupport.js"
import { maxItems, pageErrors } from "../kernel/Paging.js"
import { discountTerm } from "../subscriptions/SubscriptionTerms.js"
import { fmtMinor } from "../money/Money.js"
import { mustBeLive } from "../subscriptions/SubscriptionStore.js"
import { writes } from "../subscriptions/SubscriptionStore.js"
import { must } from "../kernel/ServiceSupport.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Money from "../money/Money.js"
import * as Catalog from "../catalog/Catalog.js"
import * as Price from "../catalog/Price.js"
import * as Pricing from "../money/Pricing.js"
import type * as Store from "../kernel/Store.js"
import { Storage } from "../kernel/Store.js"

/**
 * Records a redemption: the discount machine's `redeem` counted with the discount's version — a
 * concurrent redemption makes this one fail with `ConcurrentUpdate` and roll back the caller's
 * transaction — a durable {@link Discount.Redemption} (discount, customer, subscription, when)
 * in the same transaction, and `v2.discount.redeemed`.
 *
 * @since 0.1.0
 */
export const redeem = (
  storage: StorageService,
  merchantId: string,
  dv: Store.Versioned<Discount.Discount>,
  by: { readonly customerId: string; readonly subscriptionId: string | null },
  at: number
) =>
  Effect.gen(function* () {
    const moved = Result.getOrThrow(Discount.move(dv.value, "redeem", { times_redeemed: dv.value.times_redeemed + 1 }))
    yield* storage
      .repository(Entities.discount)
      .update(moved.value, dv.version)
      .pipe(
        Effect.catchTag("UniqueViolation", (e) => Effect.die(e)),
        Effect.catchTag("VersionConflict", () =>
          Effect.fail(new Errors.ConcurrentUpdate({ resource: "discount", id: dv.value.discount_id }))
        )
      )
    yield* Effect.orDie(
      storage.repository(Entities.discountRedemption).insert(
        new Discount.Redemption({
          redemption_id: yield* Ids.make(Ids.prefixes.discountRedemption),
          merchant_id: merchantId,
          discount_id: dv.value.discount_id,
          customer_id: by.customerId,
          subscription_id: by.subscriptionId,
          redeemed_at: DateTime.makeUnsafe(at)
        })
      )
    )
    yield* emitAll(storage, moved.events, {
      merchant_id: merchantId,
      business_id: dv.value.discount_id,
      schema: Discount.Discount,
      data: moved.value,
      at
    })
  })

/**
 * How many times this customer redeemed the discount: its redemption records, every page read
 * (removing the discount from a subscription erases none).
 *
 * @since 0.1.0
 */
export const redemptionsBy = (storage: StorageService, merchantId: string, customerId: string, discountId: string) =>
  Effect.gen(function* () {
    const redemptions = storage.repository(Entities.discountRedemption)
    let count = 0
    let after: string | undefined
    for (;;) {
      const page = yield* Effect.orDie(
        redemptions.list(merchantId, {
          limit: 100,
          starting_after: after,
          filters: [
            { column: "discount_id", op: "in", values: [discountId] },
            { column: "customer_id", op: "in", values: [customerId] }
          ]
        })
      )
      count += page.list.length
      const last = page.list.at(-1)
      if (!page.has_more || last === undefined) return count
      after = last.redemption_id
    }
  })

/**
 * Why `discount` cannot be redeemed now on `quantity` × `pv`, settled in `currency`, by
 * `customerId` (null: a customer not created yet), or undefined: `Discount.refusal` on the first
 * paid cycle's price and the customer's earlier redemptions — the one check of a checkout, its
 * payment, its page and a subscription.
 *
 * @since 0.1.0
 */
export const refusalFor = (
  storage: StorageService,
  merchantId: string,
  discount: Discount.Discount,
  purchase: {
    readonly at: number
    readonly pv: Price.PriceVersion
    readonly quantity: bigint
    readonly currency: string
    readonly customerId: string | null
    /**
     * The products of the subscription's other items: a discount limited to some products is
     * applied to the whole invoice, so it is redeemed only when it covers every item's product.
     */
    readonly otherProducts?: ReadonlyArray<string> | undefined
  }
) =>
  Effect.map(
    purchase.customerId !== null
      ? redemptionsBy(storage, merchantId, purchase.customerId, discount.discount_id)
      : Effect.succeed(0),
    (byCustomer) =>
      Discount.refusal(discount, {
        at: purchase.at,
        productId: purchase.pv.product_id,
        amount: {
          minor: Pricing.rate(Price.modelOf(purchase.pv, 0), purchase.quantity, purchase.pv.currency).amount.amount,
          currency: purchase.currency
        },
        byCustomer
      }) ??
      ((purchase.otherProducts ?? []).some((product) => !Discount.covers(discount, product))
        ? "is limited to products that not every item of the subscription is: it would discount them all"
        : undefined)
  )

/**
 * A subscription's discount terms split by a product: those whose discount covers it (kept) and
 * those outside its scope (`ending`: they stop applying from a change to that product on). A
 * term whose discount is gone is kept, as it was.
 *
 * @since 0.1.0
 */
export const scopeOn = (
  storage: StorageService,
  merchantId: string,
  terms: ReadonlyArray<Entities.DiscountTerm>,
  productId: string
) =>
  Effect.gen(function* () {
    const kept: Array<Entities.DiscountTerm> = []
    const ending: Array<Entities.DiscountTerm> = []
    for (const term of terms) {
      const found = yield* storage.repository(Entities.discount).get(merchantId, term.discount_id)
      if (Option.isSome(found) && !Discount.covers(found.value.value, productId)) ending.push(term)
      else kept.push(term)
    }
    return { kept, ending } as const
  })

/**
 * A new discount (decoded from the merchant API's body by the contract's
 * `Requests.discountCommand`): what it takes off — a whole percentage from 1 to 100, or an
 * amount in the merchant's currency — how many paid cycles it lasts, which products it is
 * limited to (none: every product), how often it may be redeemed, the smallest purchase it
 * applies to, and when it may be redeemed (from `startsAt`, default now, until `expiresAt`).
 *
 * @since 0.1.0
 */
export interface DiscountCommand {
  /** 1 to 255 characters, trimmed. */
  readonly name: string
  /** The customer-facing code ({@link Discount.CODE_PATTERN}); none for a discount applied by id only. */
  readonly code: Option.Option<string>
  readonly off:
    | { readonly type: "percentage"; readonly percent: number }
    /** A decimal amount, exact in the merchant's currency (which the engine checks): "5.00". */
    | { readonly type: "fixed_amount"; readonly amount: string }
  /** `repeating` lasts `cycles` paid cycles (1 to 120). */
  readonly duration:
    | { readonly type: "once" }
    | { readonly type: "forever" }
    | { readonly type: "repeating"; readonly cycles: number }
  /** Each once. */
  readonly productIds: ReadonlyArray<Ids.ProductId>
  readonly maxRedemptions: Option.Option<number>
  readonly maxRedemptionsPerCustomer: Option.Option<number>
  /** A decimal amount in the merchant's currency (0 allowed). */
  readonly minAmount: Option.Option<string>
  /** Unix ms. */
  readonly startsAt: Option.Option<number>
  /** Unix ms, after `startsAt` (or now). */
  readonly expiresAt: Option.Option<number>
  readonly metadata: Metadata
}

/**
 * A discount command for code, not for requests: `name`, what it takes `off`, and every other
 * part as the API's body defaults it (once, every product, no limits, from now on, no code)
 * unless given in `parts`.
 *
 * @example
 * yield* discounts.create(merchantId, Discounts.discountOf("Launch", { type: "percentage", percent: 20 }, { code: Option.some("LAUNCH") }))
 * @since 0.1.0
 */
export const discountOf = (
  name: string,
  off: DiscountCommand["off"],
  parts: Partial<Omit<DiscountCommand, "name" | "off">> = {}
): DiscountCommand => ({
  name,
  off,
  code: Option.none(),
  duration: { type: "once" },
  productIds: [],
  maxRedemptions: Option.none(),
  maxRedemptionsPerCustomer: Option.none(),
  minAmount: Option.none(),
  startsAt: Option.none(),
  expiresAt: Option.none(),
  metadata: {},
  ...parts
})

/**
 * Which discount a subscription is to take: by its id, or by its customer-facing code (decoded
 * from the merchant API's body by the contract's `Requests.discountRef`).
 *
 * @since 0.1.0
 */
export type DiscountRef = { readonly discountId: string } | { readonly code: string }

/**
 * Discount list filters.
 *
 * @since 0.1.0
 */
export interface ListDiscounts {
  readonly status?: ReadonlyArray<Lifecycle.DiscountStatus>
  readonly codes?: ReadonlyArray<string>
  readonly created?: Store.CreatedRange | undefined
  readonly limit?: number | undefined
  readonly starting_after?: string | undefined
  readonly ending_before?: string | undefined
}

/**
 * Most redemptions one discount may allow, in all and per customer.
 *
 * @since 0.1.0
 */
export const MAX_REDEMPTIONS = 1_000_000_000

/**
 * Most paid cycles a repeating discount may last.
 *
 * @since 0.1.0
 */
export const MAX_CYCLES = 120

/**
 * Most products one discount may be limited to.
 *
 * @since 0.1.0
 */
export const MAX_PRODUCTS = 100

/** A part of a discount command the engine refuses, by the rule that needs the merchant's data. */
const refused = (
  part: "discountProduct" | "discountAmountOff" | "discountMinAmount" | "discountExpiry",
  detail: string,
  entry?: { readonly index: number; readonly id: string; readonly missing?: true }
) => new Errors.CommandRefused({ part, detail, ...entry })

/** An amount in the merchant's currency: exact to its minor unit, within the engine's bounds. */
const amountIn = (
  part: "discountAmountOff" | "discountMinAmount",
  text: string | undefined,
  currency: string,
  allowZero: boolean
) => {
  if (text === undefined) return Effect.succeed(null)
  const parsed = Money.parse(text, currency)
  if (Result.isFailure(parsed))
    return Effect.fail(refused(part, `must be an amount in ${currency} with at most its minor-unit digits`))
  const m = parsed.success
  if (!allowZero && m.amount === 0n) return Effect.fail(refused(part, "must be more than 0"))
  if (!Money.isWithinBounds(m))
    return Effect.fail(refused(part, `must be at most ${fmtMinor(Money.MAX_AMOUNT_MINOR, currency)}`))
  return Effect.succeed(Money.format(m))
}

/**
 * The discounts service.
 *
 * @since 0.1.0
 */
export class Discounts extends Context.Service<Discounts>()("@recur/core/Discounts", {
  make: Effect.gen(function* () {
    const storage = yield* Storage
    const merchants = yield* Merchants.Merchants
    const catalog = yield* Catalog.Catalog
    const discounts = storage.repository(Entities.discount)
    const now = merchantNow(storage)

    const getRecord = (merchantId: string, discountId: string) =>
      Effect.flatMap(discounts.get(merchantId, discountId), (o) =>
        o._tag === "Some"
          ? Effect.succeed(o.value)
          : Effect.fail(new Errors.NotFound({ resource: "discount", id: discountId }))
      )

    /**
     * Creates a discount in the merchant's currency; emits `v2.discount.created`. Its amounts must
     * be exact in that currency, its products the merchant's, its end after its start
     * (`CommandRefused`); a code already in use is a `DuplicateResource`.
     */
    const create = Effect.fn("Discounts.create")(function* (merchantId: string, command: DiscountCommand) {
      const merchant = yield* merchants.get(merchantId)
      const currency = merchant.currency
      const amount_off =
        command.off.type === "fixed_amount"
          ? yield* amountIn("discountAmountOff", command.off.amount, currency, false)
          : null
      for (const [index, id] of command.productIds.entries()) {
        yield* Effect.catchTag(catalog.getProduct(merchantId, id), "NotFound", () =>
          Effect.fail(refused("discountProduct", "no such product", { index, id, missing: true }))
        )
      }
      const min_amount = yield* amountIn("discountMinAmount", Option.getOrUndefined(command.minAmount), currency, true)
      const at = yield* now(merchantId)
      const starts = Option.getOrElse(command.startsAt, () => at)
      const expires = Option.getOrNull(command.expiresAt)
      if (expires !== null && expires <= starts)
        return yield* refused("discountExpiry", "must be after the discount starts")
      const discount = new Discount.Discount({
        discount_id: yield* Ids.make(Ids.prefixes.discount),
        merchant_id: merchantId,
        name: command.name,
        code: Option.getOrNull(command.code),
        discount_type: command.off.type,
        percent_off: command.off.type === "percentage" ? command.off.percent : null,
        amount_off,
        currency,
        duration: command.duration.type,
        duration_cycles: command.duration.type === "repeating" ? command.duration.cycles : null,
        product_ids: [...command.productIds],
        max_redemptions: Option.getOrNull(command.maxRedemptions),
        max_redemptions_per_customer: Option.getOrNull(command.maxRedemptionsPerCustomer),
        min_amount,
        starts_at: DateTime.makeUnsafe(starts),
        expires_at: expires !== null ? DateTime.makeUnsafe(expires) : null,
        status: Lifecycle.discount.initial,
        times_redeemed: 0,
        metadata: command.metadata,
        created_at: DateTime.makeUnsafe(at),
        ended_at: null
      })
      yield* storage.withTransaction(
        Effect.gen(function* () {
          yield* Effect.catchTag(discounts.insert(discount), "UniqueViolation", () =>
            Effect.fail(new Errors.DuplicateResource({ resource: "discount", param: "code" }))
          )
          yield* emitAll(storage, Lifecycle.discount.createEvents, {
            merchant_id: merchantId,
            business_id: discount.discount_id,
            schema: Discount.Discount,
            data: discount,
            at
          })
        })
      )
      return discount
    })

    /** One discount of this merchant. */
    const get = Effect.fn("Discounts.get")(function* (merchantId: string, discountId: string) {
      return yield* Effect.map(getRecord(merchantId, discountId), (v) => v.value)
    })

    /** The merchant's discounts, newest first, by status and code. */
    const list = Effect.fn("Discounts.list")(function* (merchantId: string, q: ListDiscounts) {
      yield* maxItems("code", q.codes, 100)
      const filters: Array<Store.Filter> = []
      if (q.status?.length) filters.push({ column: "status", op: "in", values: q.status })
      if (q.codes?.length) filters.push({ column: "code", op: "in", values: q.codes })
      return yield* pageErrors(
        discounts.list(merchantId, {
          filters,
          limit: q.limit ?? 10,
          starting_after: q.starting_after,
          ending_before: q.ending_before,
          ...(q.created ? { created: q.created } : {})
        })
      )
    })

    /** Ends a discount: no new redemption from now on; emits `v2.discount.ended`. Ending twice is a `StateConflict`. */
    const end = Effect.fn("Discounts.end")(function* (merchantId: string, discountId: string) {
      const current = yield* getRecord(merchantId, discountId)
      const at = yield* now(merchantId)
      const moved = Discount.move(current.value, "end", { ended_at: DateTime.makeUnsafe(at) })
      if (Result.isFailure(moved))
        return yield* new Errors.StateConflict({
          resource: "discount",
          id: discountId,
          state: current.value.status,
          reason: "it has already ended"
        })
      yield* storage.withTransaction(
        Effect.gen(function* () {
          yield* discounts.update(moved.success.value, current.version).pipe(
            Effect.catchTag("UniqueViolation", (e) => Effect.die(e)),
            Effect.catchTag("VersionConflict", () =>
              Effect.fail(new Errors.ConcurrentUpdate({ resource: "discount", id: discountId }))
            )
          )
          yield* emitAll(storage, moved.success.events, {
            merchant_id: merchantId,
            business_id: discountId,
            schema: Discount.Discount,
            data: moved.success.value,
            at
          })
        })
      )
      return moved.success.value
    })

    const subs = storage.repository(Entities.subscription)
    const versions = storage.repository(Entities.priceVersion)
    const { saveSub } = writes(storage)

    /** The discounts a subscription carries, as the API shows them. */
    const termsOf = (rec: Entities.SubscriptionRecord) => ({
      subscription_id: rec.subscription.id,
      discounts: rec.discounts.map((t) => ({
        discount_id: t.discount_id,
        discount_code: t.discount_code,
        first_cycle: t.first_cycle,
        cycles: t.cycles
      }))
    })

    /**
     * Applies a discount (by its id or its code) to a live subscription from its next cycle on,
     * for the discount's duration: checked as a checkout checks it, counted as a redemption, in
     * one transaction with the subscription's version. A discount not found or not redeemable on
     * it is a `CommandRefused` naming the id or code.
     */
    const applyToSubscription = Effect.fn("Discounts.applyToSubscription")(function* (
      merchantId: string,
      subscriptionId: string,
      ref: DiscountRef
    ) {
      const byId = "discountId" in ref
      const refusedRef = (detail: string, missing?: true) =>
        new Errors.CommandRefused({
          part: byId ? "discountId" : "discountCode",
          id: byId ? ref.discountId : ref.code,
          detail,
          ...(missing ? { missing } : {})
        })
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* now(merchantId)
          const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
            must(o, "subscription", subscriptionId)
          )
          const rec = sv.value
          yield* mustBeLive(rec, "take a discount")
          const found = byId
            ? yield* discounts.get(merchantId, ref.discountId)
            : yield* discounts.findBy(merchantId, "code", ref.code)
          if (found._tag === "None") return yield* refusedRef(byId ? "no such discount" : "no such discount code", true)
          const dv = found.value
          const d = dv.value
          if (rec.discounts.some((t) => t.discount_id === d.discount_id))
            return yield* new Errors.StateConflict({
              resource: "subscription",
              id: subscriptionId,
              state: rec.subscription.status,
              reason: "it already carries this discount"
            })
          const pv = Option.getOrThrow(
            Option.map(yield* versions.get(merchantId, rec.subscription.price_version_id), (v) => v.value)
          )
          const why = yield* refusalFor(storage, merchantId, d, {
            at,
            pv,
            quantity: BigInt(rec.subscription.quantity),
            currency: rec.currency,
            customerId: rec.subscription.customer_id,
            otherProducts: rec.extra_items.map((x) => x.version.product_id)
          })
          if (why !== undefined) return yield* refusedRef(why)
          const next = { ...rec, discounts: [...rec.discounts, discountTerm(d, rec.subscription.cycle_index + 1)] }
          yield* saveSub(next, sv.version, at)
          yield* redeem(
            storage,
            merchantId,
            dv,
            { customerId: rec.subscription.customer_id, subscriptionId: rec.subscription.id },
            at
          )
          return termsOf(next)
        })
      )
    })

    /** Removes a discount from a subscription: its next cycles are billed without it. */
    const removeFromSubscription = Effect.fn("Discounts.removeFromSubscription")(function* (
      merchantId: string,
      subscriptionId: string,
      discountId: string
    ) {
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* now(merchantId)
          const sv = yield* Effect.flatMap(subs.get(merchantId, subscriptionId), (o) =>
            must(o, "subscription", subscriptionId)
          )
          if (!sv.value.discounts.some((t) => t.discount_id === discountId))
            return yield* new Errors.NotFound({
              resource: "subscription discount",
              id: discountId,
              param: "discount_id"
            })
          const next = { ...sv.value, discounts: sv.value.discounts.filter((t) => t.discount_id !== discountId) }
          yield* saveSub(next, sv.version, at)
          return termsOf(next)
        })
      )
    })

    return { create, get, list, end, applyToSubscription, removeFromSubscription } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
