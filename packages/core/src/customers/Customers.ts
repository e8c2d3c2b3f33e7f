/**
 * Customers: members (with the merchant's `payer_id`, unique per merchant) and guests (email
 * only). Deletion is soft: a deleted customer is gone from reads but its history stays; a
 * customer with a subscription that is not canceled cannot be deleted (it would go on being billed).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Metadata } from "../kernel/Common.js"
import { Address, Customer, formatAddress } from "./Customer.js"
import * as Entities from "../kernel/Entities.js"
import { merchantNow } from "../kernel/ServiceSupport.js"
import * as Errors from "../kernel/Errors.js"
import * as Collection from "../invoices/Collection.js"
import * as Ids from "../kernel/Ids.js"
import { SubscriptionStatus } from "../kernel/Lifecycle.js"
import { maxItems, pageErrors } from "../kernel/Paging.js"
import type * as Store from "../kernel/Store.js"
import { Storage } from "../kernel/Store.js"

/**
 * The seed's create body.
 *
 * @since 0.1.0
 */
export interface CreateCustomer {
  readonly email?: string | undefined
  readonly payer_id?: string | undefined
  readonly phone?: string | undefined
  readonly name?: string | undefined
  readonly description?: string | undefined
  readonly address?: Address | undefined
  readonly metadata?: Metadata | undefined
  readonly email_subscription?: 1 | 2 | undefined
  /** How the customer's invoices are collected (`charge_automatically`, the default, or `send_invoice`). */
  readonly collection_method?: string | undefined
  /** Net terms of `send_invoice`, 1 to 365 days (required with it). */
  readonly days_until_due?: number | null | undefined
}

/**
 * The seed's update body: `customer_id` (wins) or `payer_id` identifies the customer.
 *
 * @since 0.1.0
 */
export interface UpdateCustomer extends Omit<CreateCustomer, "payer_id"> {
  readonly customer_id?: string | undefined
  readonly payer_id?: string | undefined
}

/**
 * The list filters.
 *
 * @since 0.1.0
 */
export interface ListCustomers {
  readonly customer_ids?: ReadonlyArray<string>
  readonly emails?: ReadonlyArray<string>
  readonly payer_ids?: ReadonlyArray<string>
  readonly type?: "customer" | "guest"
  readonly created?: Store.CreatedRange
  readonly limit?: number
  readonly starting_after?: string
  readonly ending_before?: string
}

/** Every subscription status but `canceled`: such a subscription still bills or may still start. */
const OPEN_STATUSES = SubscriptionStatus.literals.filter((s) => s !== "canceled")

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/**
 * Whether `text` is an email address as a customer's `email` must be.
 *
 * @since 0.1.0
 */
export const isEmail = (text: string): boolean => EMAIL.test(text)

/**
 * The customer with what a payer typed at checkout (`payer`: an email, a name) where it has none
 * — a value already there (the merchant's, an earlier checkout's) is never replaced — or
 * undefined when nothing changes. Written as the payment succeeds (`Payments.applyOutcome`), so
 * a declined checkout writes nothing on the customer.
 *
 * @example
 * filledByPayer({ ...guest, email: null }, { email: "ada@example.com" }, now)?.email // "ada@example.com"
 * @since 0.1.0
 */
export const filledByPayer = (
  current: Entities.CustomerRecord,
  payer: { readonly email?: string | undefined; readonly name?: string | undefined },
  at: number
): Entities.CustomerRecord | undefined => {
  const email = current.email === null ? payer.email : undefined
  const name = current.name === null ? payer.name : undefined
  if (email === undefined && name === undefined) return undefined
  return {
    ...current,
    ...(email !== undefined ? { email } : {}),
    ...(name !== undefined ? { name } : {}),
    updated_at: at
  }
}

/**
 * The customer record as the REST API returns it (with its `balance` per currency when given: the
 * read of one customer).
 *
 * @since 0.1.0
 */
export const toCustomer = (
  r: Entities.CustomerRecord,
  balance?: ReadonlyArray<{ readonly currency: string; readonly amount: string }>
): Customer =>
  new Customer({
    ...(balance !== undefined ? { balance: balance.map((b) => ({ currency: b.currency, amount: b.amount })) } : {}),
    id: r.id,
    email: r.email,
    address: r.address ? formatAddress(r.address) : null,
    phone: r.phone,
    name: r.name,
    description: r.description,
    payer_id: r.payer_id,
    collection_method: r.collection?.collection_method ?? "charge_automatically",
    days_until_due: r.collection?.days_until_due ?? null
  })

/**
 * The customers service.
 *
 * @since 0.1.0
 */
export class Customers extends Context.Service<Customers>()("@recur/core/Customers", {
  make: Effect.gen(function* () {
    const storage = yield* Storage
    const repo = storage.repository(Entities.customer)
    const subscriptions = storage.repository(Entities.subscription)
    const now = merchantNow(storage)

    const checkEmail = (email: string | undefined) =>
      email !== undefined && !EMAIL.test(email)
        ? Effect.fail(new Errors.InvalidParameter({ param: "email", reason: "is not an email address" }))
        : Effect.void

    /** The collection setting a request asks for (`InvalidParameter` naming the field at fault). */
    const collectionOf = (input: Collection.CollectionInput) => {
      const parsed = Collection.parse(input)
      return parsed instanceof Errors.InvalidParameter ? Effect.fail(parsed) : Effect.succeed(parsed)
    }

    const duplicate = <A, E, R>(effect: Effect.Effect<A, E | Store.UniqueViolation, R>) =>
      Effect.catchIf(
        effect,
        (e): e is Store.UniqueViolation => (e as { _tag?: string })._tag === "UniqueViolation",
        () => Effect.fail(new Errors.DuplicateResource({ resource: "customer", param: "payer_id" }))
      ) as Effect.Effect<A, Exclude<E, Store.UniqueViolation> | Errors.DuplicateResource, R>

    /** Finds a live customer by id or payer id. */
    const resolve = Effect.fn("Customers.resolve")(function* (
      merchantId: string,
      ref: { readonly customer_id?: string | undefined; readonly payer_id?: string | undefined }
    ) {
      if (ref.customer_id === undefined && ref.payer_id === undefined) {
        return yield* new Errors.InvalidParameter({
          param: "customer_id",
          reason: "customer_id or payer_id is required"
        })
      }
      const found =
        ref.customer_id !== undefined
          ? yield* repo.get(merchantId, ref.customer_id)
          : yield* repo.findBy(merchantId, "payer_id", ref.payer_id!)
      if (Option.isNone(found) || found.value.value.deleted_at !== null) {
        // the body's field that named it (a path's id is renamed by `get`)
        return yield* new Errors.NotFound({
          resource: "customer",
          id: ref.customer_id ?? ref.payer_id!,
          param: ref.customer_id !== undefined ? "customer_id" : "payer_id"
        })
      }
      return found.value
    })

    const create = Effect.fn("Customers.create")(function* (merchantId: string, input: CreateCustomer) {
      if (input.email !== undefined && input.payer_id !== undefined) {
        return yield* new Errors.InvalidRequest({
          reason: "email and payer_id are mutually exclusive",
          param: "payer_id"
        })
      }
      if (input.email === undefined && input.payer_id === undefined) {
        return yield* new Errors.InvalidParameter({ param: "email", reason: "email or payer_id is required" })
      }
      if (input.payer_id !== undefined && (input.payer_id.trim() === "" || input.payer_id.length > 255)) {
        return yield* new Errors.InvalidParameter({ param: "payer_id", reason: "must be 1 to 255 characters" })
      }
      yield* checkEmail(input.email)
      const collection = yield* collectionOf(input)
      const at = yield* now(merchantId)
      const record: Entities.CustomerRecord = {
        id: yield* Ids.make(Ids.prefixes.customer),
        merchant_id: merchantId,
        email: input.email ?? null,
        payer_id: input.payer_id ?? null,
        name: input.name ?? null,
        phone: input.phone ?? null,
        description: input.description ?? null,
        address: input.address !== undefined ? new Address(input.address) : null,
        metadata: input.metadata ?? {},
        email_subscription: input.email_subscription ?? null,
        ...(collection !== undefined ? { collection } : {}),
        type: input.payer_id !== undefined ? "customer" : "guest",
        created_at: at,
        updated_at: at,
        deleted_at: null
      }
      yield* duplicate(repo.insert(record))
      return record
    })

    const update = Effect.fn("Customers.update")(function* (merchantId: string, input: UpdateCustomer) {
      yield* checkEmail(input.email)
      const current = yield* resolve(merchantId, input)
      // new terms alone keep the customer's method (refused when it charges automatically)
      const collection = yield* collectionOf({
        collection_method:
          input.collection_method ??
          (input.days_until_due !== undefined
            ? (current.value.collection?.collection_method ?? "charge_automatically")
            : undefined),
        days_until_due: input.days_until_due
      })
      const next: Entities.CustomerRecord = {
        ...current.value,
        ...(input.email !== undefined ? { email: input.email } : {}),
        ...(input.phone !== undefined ? { phone: input.phone } : {}),
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.address !== undefined ? { address: new Address(input.address) } : {}),
        ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
        ...(input.email_subscription !== undefined ? { email_subscription: input.email_subscription } : {}),
        ...(collection !== undefined ? { collection } : {}),
        updated_at: yield* now(merchantId)
      }
      yield* duplicate(repo.update(next, current.version)).pipe(
        Effect.catchTag("VersionConflict", () =>
          Effect.fail(
            new Errors.StateConflict({
              resource: "customer",
              id: next.id,
              state: "changed",
              reason: "modified concurrently; retry"
            })
          )
        )
      )
      return next
    })

    const remove = Effect.fn("Customers.delete")(function* (
      merchantId: string,
      ref: { readonly customer_id?: string | undefined; readonly payer_id?: string | undefined }
    ) {
      const current = yield* resolve(merchantId, ref)
      // A subscription that is not canceled would go on renewing (and charging the saved card)
      // for a customer nobody can read any more: the merchant cancels it first.
      const open = yield* Effect.orDie(
        subscriptions.list(merchantId, {
          filters: [
            { column: "customer_id", op: "in", values: [current.value.id] },
            { column: "status", op: "in", values: OPEN_STATUSES }
          ],
          limit: 3
        })
      )
      if (open.list.length > 0) {
        const ids = open.list.map((r) => r.subscription.id).join(", ")
        return yield* new Errors.StateConflict({
          resource: "customer",
          id: current.value.id,
          state: "subscribed",
          reason: `its subscription${open.list.length > 1 || open.has_more ? "s" : ""} ${ids}${open.has_more ? " and more" : ""} ${open.list.length > 1 || open.has_more ? "are" : "is"} not canceled; cancel ${open.list.length > 1 || open.has_more ? "them" : "it"} first`
        })
      }
      const at = yield* now(merchantId)
      // The payer_id is released so the merchant can reuse it for a new customer.
      yield* Effect.orDie(
        repo.update(
          {
            ...current.value,
            deleted_at: at,
            updated_at: at,
            payer_id: null,
            metadata: { ...current.value.metadata }
          },
          current.version
        )
      )
    })

    const get = Effect.fn("Customers.get")(function* (merchantId: string, customerId: string) {
      return yield* resolve(merchantId, { customer_id: customerId }).pipe(
        Effect.map((v) => v.value),
        // an id in the path: not found, no body field at fault
        Effect.catchTag("NotFound", (e) => Effect.fail(new Errors.NotFound({ resource: e.resource, id: e.id })))
      )
    })

    const list = Effect.fn("Customers.list")(function* (merchantId: string, q: ListCustomers) {
      yield* maxItems("customer_ids", q.customer_ids, 10)
      yield* maxItems("emails", q.emails, 10)
      yield* maxItems("payer_ids", q.payer_ids, 10)
      const filters: Array<Store.Filter> = [{ column: "deleted", op: "in", values: [false] }]
      if (q.customer_ids?.length) filters.push({ column: "id", op: "in", values: q.customer_ids })
      if (q.emails?.length) filters.push({ column: "email", op: "in", values: q.emails })
      if (q.payer_ids?.length) filters.push({ column: "payer_id", op: "in", values: q.payer_ids })
      if (q.type) filters.push({ column: "type", op: "in", values: [q.type] })
      return yield* pageErrors(
        repo.list(merchantId, {
          filters,
          limit: q.limit ?? 10,
          starting_after: q.starting_after,
          ending_before: q.ending_before,
          ...(q.created ? { created: q.created } : {})
        })
      )
    })

    return { create, update, delete: remove, get, list, resolve } as const
  })
}) {
  /** The live implementation: needs `Storage` and the ports it uses. */
  static readonly layer = Layer.effect(this, this.make)
}
