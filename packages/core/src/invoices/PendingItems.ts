/**
 * Pending invoice items as storage reads and writes: those pending on a subscription's next
 * invoice, and items marked invoiced in the transaction of the invoice that bills them (the one
 * write `OneOffInvoices` and the renewals share).
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import type { StorageService } from "../kernel/ServiceSupport.js"
import { type InvoiceItem, MAX_ITEMS_PER_INVOICE, move } from "./InvoiceItem.js"

/**
 * The items pending on a subscription's next invoice, oldest first (at most
 * {@link MAX_ITEMS_PER_INVOICE}; the rest wait for the invoice after).
 *
 * @since 0.1.0
 */
export const pendingOn = (storage: StorageService, merchantId: string, subscriptionId: string) =>
  Effect.map(
    Effect.orDie(
      storage.repository(Entities.invoiceItem).list(merchantId, {
        limit: 100,
        filters: [
          { column: "subscription_id", op: "in", values: [subscriptionId] },
          { column: "status", op: "in", values: ["pending"] }
        ]
      })
    ),
    (page) => [...page.list].reverse().slice(0, MAX_ITEMS_PER_INVOICE)
  )

/**
 * Marks `items` invoiced by `invoiceId`, in the caller's transaction: each only if it is still
 * pending as read (another invoice billed it, or it was deleted, meanwhile: the whole call fails
 * with `ConcurrentUpdate`, so that the transaction rolls back and no item is billed twice).
 *
 * @since 0.1.0
 */
export const markInvoiced = (
  storage: StorageService,
  merchantId: string,
  items: ReadonlyArray<InvoiceItem>,
  invoiceId: string
) => moveAll(storage, merchantId, items, "pending", (i) => move(i, "invoice", { invoice_id: invoiceId }))

/**
 * Moves `items` through the item machine in the caller's transaction, each only if it is still
 * `from` at the version read (gone or moved since — another invoice took it, another draft edit
 * released it — and the whole call fails with `ConcurrentUpdate`).
 */
const moveAll = (
  storage: StorageService,
  merchantId: string,
  items: ReadonlyArray<InvoiceItem>,
  from: InvoiceItem["status"],
  to: (item: InvoiceItem) => ReturnType<typeof move>
) =>
  Effect.gen(function* () {
    if (items.length === 0) return
    const repo = storage.repository(Entities.invoiceItem)
    const versions = yield* repo.getMany(
      merchantId,
      items.map((i) => i.invoice_item_id)
    )
    yield* repo
      .updateMany(
        items.map((i) => {
          const read = versions.get(i.invoice_item_id)
          return {
            value: Lifecycle.must(to(i)),
            expectedVersion: read !== undefined && read.value.status === from ? read.version : -1
          }
        })
      )
      .pipe(
        Effect.catchTag("UniqueViolation", (e) => Effect.die(e)),
        Effect.catchTag("VersionConflict", (e) =>
          Effect.fail(new Errors.ConcurrentUpdate({ resource: "invoice_item", id: e.id }))
        )
      )
  })

/**
 * Gives the items a voided draft billed back to `pending` (its `invoice_id` cleared), in the
 * caller's transaction, through the item machine's `release`: the next invoice bills them, as
 * Stripe's deleting a draft leaves its items pending.
 *
 * @since 0.1.0
 */
export const release = (storage: StorageService, merchantId: string, invoiceId: string) =>
  Effect.flatMap(billedBy(storage, merchantId, invoiceId), (billed) => releaseItems(storage, billed))

/**
 * The items `invoiceId` billed (still `invoiced` by it), oldest first — the order the invoice's
 * `invoice_item` lines were built in.
 *
 * @since 0.1.0
 */
export const billedBy = (storage: StorageService, merchantId: string, invoiceId: string) =>
  Effect.map(
    Effect.orDie(
      storage.repository(Entities.invoiceItem).list(merchantId, {
        limit: 100,
        filters: [
          { column: "invoice_id", op: "in", values: [invoiceId] },
          { column: "status", op: "in", values: ["invoiced"] }
        ]
      })
    ),
    (page): ReadonlyArray<InvoiceItem> => [...page.list].reverse()
  )

/**
 * Gives `items` back to `pending` (their `invoice_id` cleared) through the item machine's
 * `release`, in the caller's transaction: each only if unchanged since read (else the whole call
 * fails with `ConcurrentUpdate`). A draft edit that removes an item's line releases it.
 *
 * @since 0.1.0
 */
export const releaseItems = (storage: StorageService, items: ReadonlyArray<InvoiceItem>) =>
  moveAll(storage, items[0]?.merchant_id ?? "", items, "invoiced", (i) => move(i, "release", { invoice_id: null }))
