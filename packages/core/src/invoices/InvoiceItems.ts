/**
 * Invoice items: a merchant's one-off charges for a customer — an amount and a quantity, or a
 * catalog price charged once — pending until a one-off invoice bills them
 * (`OneOffInvoices.create`), or deleted before that.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Catalog from "../catalog/Catalog.js"
import type { Metadata } from "../kernel/Common.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import { pageErrors } from "../kernel/Paging.js"
import { dt, must, nowOf } from "../kernel/ServiceSupport.js"
import * as Store from "../kernel/Store.js"
import * as Money from "../money/Money.js"
import { dueNow, isOneTime } from "../checkout/SessionAmounts.js"
import * as Merchants from "../tenants/Merchants.js"
import * as InvoiceItem from "./InvoiceItem.js"

/**
 * What a new invoice item is: `unit_amount` in `currency` (a decimal string, not negative), or a
 * one-time catalog price (`price_id`, its currency and amount); `quantity` 1 by default.
 *
 * @since 0.1.0
 */
export interface CreateInvoiceItem {
  readonly customer_id: string
  /** The subscription whose next renewal invoice bills it (the customer's; in its currency). */
  readonly subscription_id?: string | undefined
  readonly currency?: string | undefined
  readonly unit_amount?: string | undefined
  readonly price_id?: string | undefined
  readonly quantity?: number | undefined
  readonly description?: string | undefined
  readonly metadata?: Metadata | undefined
}

/**
 * A list of a merchant's items: by customer, only pending ones, a page.
 *
 * @since 0.1.0
 */
export interface ListInvoiceItems {
  readonly customer_id?: string | undefined
  readonly pending?: boolean | undefined
  readonly limit?: number | undefined
  readonly starting_after?: string | undefined
  readonly ending_before?: string | undefined
  readonly created?: Store.CreatedRange | undefined
}

/**
 * The amount of `quantity` units of `unit`, or why it cannot be an item's: a quantity outside
 * 1..{@link InvoiceItem.MAX_QUANTITY}, or a product over `Money.MAX_AMOUNT_MINOR`.
 *
 * @example
 * lineAmount(Money.make(1250n, "USD"), 3) // Result.succeed(37.50 USD)
 * @since 0.1.0
 */
export const lineAmount = (
  unit: Money.Money,
  quantity: number
): Result.Result<Money.Money, Errors.InvalidParameter> => {
  if (!Number.isSafeInteger(quantity) || quantity < 1 || quantity > InvoiceItem.MAX_QUANTITY)
    return Result.fail(
      new Errors.InvalidParameter({
        param: "quantity",
        reason: `must be a whole number from 1 to ${InvoiceItem.MAX_QUANTITY}`
      })
    )
  if (unit.amount < 0n)
    return Result.fail(new Errors.InvalidParameter({ param: "unit_amount", reason: "must not be negative" }))
  const amount = Money.times(unit, BigInt(quantity))
  return Money.isWithinBounds(amount)
    ? Result.succeed(amount)
    : Result.fail(
        new Errors.InvalidParameter({
          param: "unit_amount",
          reason: `quantity × unit_amount exceeds the largest amount an invoice carries (${Money.format(Money.make(Money.MAX_AMOUNT_MINOR, unit.currency))} ${unit.currency})`
        })
      )
}

const MAX_DESCRIPTION = 500

/**
 * The invoice items service.
 *
 * @since 0.1.0
 */
export class InvoiceItems extends Context.Service<InvoiceItems>()("@recur/core/InvoiceItems", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const catalog = yield* Catalog.Catalog
    const items = storage.repository(Entities.invoiceItem)
    const customers = storage.repository(Entities.customer)
    const subs = storage.repository(Entities.subscription)

    /** The customer's subscription that will renew, and its settlement currency. */
    const renewingOf = (merchantId: string, customerId: string, subscriptionId: string) =>
      Effect.gen(function* () {
        const found = Option.getOrUndefined(yield* Effect.orDie(subs.get(merchantId, subscriptionId)))
        if (found === undefined || found.value.subscription.customer_id !== customerId)
          return yield* new Errors.NotFound({ resource: "subscription", id: subscriptionId, param: "subscription_id" })
        const s = found.value.subscription
        if ((s.status !== "active" && s.status !== "trial" && s.status !== "past_due") || s.next_invoice_date === null)
          return yield* new Errors.StateConflict({
            resource: "subscription",
            id: subscriptionId,
            state: s.status,
            reason: "only a subscription that renews (trial, active, past_due) has a next invoice to add an item to"
          })
        return found.value
      })

    const customerOf = (merchantId: string, customerId: string) =>
      Effect.flatMap(Effect.orDie(customers.get(merchantId, customerId)), (o) =>
        Option.isSome(o) && o.value.value.deleted_at === null
          ? Effect.succeed(o.value.value)
          : Effect.fail(new Errors.NotFound({ resource: "customer", id: customerId, param: "customer_id" }))
      )

    /**
     * A new pending item for a customer. Refused, with nothing written: an unknown customer or
     * price, a price that is not a one-time price, both or neither of `unit_amount` and
     * `price_id`, an amount or quantity out of bounds, a currency unknown or other than the one of
     * the customer's other pending items.
     */
    const create = Effect.fn("InvoiceItems.create")(function* (merchantId: string, command: CreateInvoiceItem) {
      const merchant = yield* merchants.get(merchantId)
      yield* customerOf(merchantId, command.customer_id)
      const sub =
        command.subscription_id !== undefined
          ? yield* renewingOf(merchantId, command.customer_id, command.subscription_id)
          : undefined
      if (sub !== undefined && command.currency !== undefined && command.currency.toUpperCase() !== sub.currency)
        return yield* new Errors.InvalidParameter({
          param: "currency",
          reason: `the subscription is billed in ${sub.currency}`
        })
      const description = command.description?.trim()
      if (description !== undefined && description.length > MAX_DESCRIPTION)
        return yield* new Errors.InvalidParameter({
          param: "description",
          reason: `must be at most ${MAX_DESCRIPTION} characters`
        })
      const quantity = command.quantity ?? 1
      let unit: Money.Money
      let name: string
      if (command.price_id !== undefined) {
        if (command.unit_amount !== undefined)
          return yield* new Errors.InvalidRequest({
            reason: "give either unit_amount or price_id, not both",
            param: "unit_amount"
          })
        const pv = yield* catalog.sellableVersion(merchantId, command.price_id, command.customer_id)
        if (!isOneTime(pv))
          return yield* new Errors.InvalidParameter({
            param: "price_id",
            reason: "must be a one-time price (billing_type one_time)"
          })
        if (command.currency !== undefined && command.currency.toUpperCase() !== pv.currency)
          return yield* new Errors.InvalidParameter({ param: "currency", reason: `the price is in ${pv.currency}` })
        if (sub !== undefined && pv.currency !== sub.currency)
          return yield* new Errors.InvalidParameter({
            param: "price_id",
            reason: `the price is in ${pv.currency}; the subscription is billed in ${sub.currency}`
          })
        unit = dueNow(pv, 1n, true)
        name = pv.price_name
      } else {
        if (command.unit_amount === undefined)
          return yield* new Errors.InvalidParameter({ param: "unit_amount", reason: "is required without price_id" })
        const currency = command.currency ?? sub?.currency
        if (currency === undefined)
          return yield* new Errors.InvalidParameter({ param: "currency", reason: "is required with unit_amount" })
        const parsed = Money.parse(command.unit_amount, currency.toUpperCase())
        if (Result.isFailure(parsed))
          return yield* new Errors.InvalidParameter({
            param: parsed.failure._tag === "UnknownCurrency" ? "currency" : "unit_amount",
            reason: parsed.failure.message
          })
        unit = parsed.success
        name = "One-off charge"
      }
      const amount = yield* Effect.fromResult(lineAmount(unit, quantity))
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          // one currency per customer's pending items: a one-off invoice bills them together (an
          // item on a subscription is in the subscription's currency, checked above)
          const other =
            sub !== undefined
              ? { list: [] }
              : yield* pageErrors(
                  items.list(merchantId, {
                    limit: 1,
                    filters: [
                      { column: "customer_id", op: "in", values: [command.customer_id] },
                      { column: "status", op: "in", values: ["pending"] },
                      { column: "subscription_id", op: "is_null" }
                    ]
                  })
                )
          const theirs = other.list[0]?.currency
          if (theirs !== undefined && theirs !== unit.currency)
            return yield* new Errors.InvalidParameter({
              param: "currency",
              reason: `the customer's other pending invoice items are in ${theirs}`
            })
          const item = new InvoiceItem.InvoiceItem(
            {
              invoice_item_id: yield* Ids.make(Ids.prefixes.invoiceItem),
              merchant_id: merchantId,
              customer_id: command.customer_id,
              subscription_id: sub?.subscription.id ?? null,
              currency: unit.currency,
              description: description !== undefined && description !== "" ? description : name,
              quantity,
              unit_amount: Money.format(unit),
              amount: Money.format(amount),
              price_id: command.price_id ?? null,
              status: Lifecycle.invoiceItem.initial,
              invoice_id: null,
              metadata: command.metadata ?? {},
              created_at: dt(at)
            },
            { disableChecks: true }
          )
          yield* Effect.orDie(items.insert(item))
          return item
        })
      )
    })

    /** One item of this merchant. */
    const get = Effect.fn("InvoiceItems.get")(function* (merchantId: string, itemId: string) {
      yield* merchants.get(merchantId)
      return (yield* Effect.flatMap(Effect.orDie(items.get(merchantId, itemId)), (o) =>
        must(o, "invoice_item", itemId)
      )).value
    })

    /** The merchant's items, newest first: of one customer, only the pending ones. */
    const list = Effect.fn("InvoiceItems.list")(function* (merchantId: string, q: ListInvoiceItems) {
      yield* merchants.get(merchantId)
      const filters: Array<Store.Filter> = []
      if (q.customer_id !== undefined) filters.push({ column: "customer_id", op: "in", values: [q.customer_id] })
      if (q.pending !== undefined)
        filters.push(
          q.pending
            ? { column: "status", op: "in", values: ["pending"] }
            : { column: "status", op: "in", values: ["invoiced", "deleted"] }
        )
      return yield* pageErrors(
        items.list(merchantId, {
          filters,
          limit: q.limit ?? 10,
          starting_after: q.starting_after,
          ending_before: q.ending_before,
          ...(q.created ? { created: q.created } : {})
        })
      )
    })

    /**
     * Deletes a pending item (`deleted`): no invoice will bill it. An invoiced (or deleted) item
     * is a `StateConflict`, and so is one an invoice billed meanwhile (its version moved).
     */
    const remove = Effect.fn("InvoiceItems.remove")(function* (merchantId: string, itemId: string) {
      yield* merchants.get(merchantId)
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const found = yield* Effect.flatMap(Effect.orDie(items.get(merchantId, itemId)), (o) =>
            must(o, "invoice_item", itemId)
          )
          const moved = InvoiceItem.move(found.value, "delete")
          if (Result.isFailure(moved))
            return yield* new Errors.StateConflict({
              resource: "invoice_item",
              id: itemId,
              state: found.value.status,
              reason: "only a pending invoice item can be deleted"
            })
          yield* items.update(moved.success.value, found.version).pipe(
            Effect.catchTag("UniqueViolation", (e) => Effect.die(e)),
            Effect.catchTag("VersionConflict", () =>
              Effect.fail(new Errors.ConcurrentUpdate({ resource: "invoice_item", id: itemId }))
            )
          )
          return moved.success.value
        })
      )
    })

    return { create, get, list, remove } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
