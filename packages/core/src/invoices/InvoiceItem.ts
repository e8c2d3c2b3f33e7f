/**
 * Invoice items as the REST API returns them: a merchant's one-off charge for a customer,
 * pending until a one-off invoice bills it (`OneOffInvoices`).
 *
 * @since 0.1.0
 */
import { Result, Schema } from "effect"
import { Metadata, NullableString, Timestamp } from "../kernel/Common.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Money from "../money/Money.js"
import { InvoiceItemStatus } from "./InvoiceItemMachine.js"
import type * as Invoicing from "./Invoicing.js"

/**
 * The most units one invoice item may count.
 *
 * @since 0.1.0
 */
export const MAX_QUANTITY = 1_000_000

/**
 * The most pending items one one-off invoice bills (the oldest first; the rest wait for the next).
 *
 * @since 0.1.0
 */
export const MAX_ITEMS_PER_INVOICE = 100

/**
 * An invoice item: `quantity` × `unit_amount` (`amount`, in `currency`), described, optionally of
 * a catalog price charged once (`price_id`). `status` `pending` → `invoiced` (with `invoice_id`)
 * or `deleted`. With `subscription_id`, the item is pending on that subscription's next renewal
 * invoice (a line of it, and of its upcoming invoice); without, a one-off invoice bills it.
 *
 * @since 0.1.0
 */
export class InvoiceItem extends Schema.Class<InvoiceItem>("InvoiceItem")({
  invoice_item_id: Schema.String,
  merchant_id: Schema.String,
  customer_id: Schema.String,
  subscription_id: NullableString,
  currency: Schema.String,
  description: Schema.String,
  quantity: Schema.Int,
  unit_amount: Schema.String,
  amount: Schema.String,
  price_id: NullableString,
  status: InvoiceItemStatus,
  invoice_id: NullableString,
  metadata: Metadata,
  created_at: Timestamp
}) {}

/**
 * Moves an item's `status` by `trigger` (the {@link Lifecycle.invoiceItem} machine), with the
 * fields that change with it. The only way an item's status changes.
 *
 * @since 0.1.0
 */
export const move = (
  item: InvoiceItem,
  trigger: Lifecycle.InvoiceItemTrigger,
  patch: Partial<Omit<InvoiceItem, "status">> = {}
): Result.Result<Lifecycle.Moved<InvoiceItem>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(
    Lifecycle.invoiceItem,
    item.status,
    trigger,
    (to) => new InvoiceItem({ ...item, ...patch, status: to }, { disableChecks: true })
  )

/**
 * The invoice lines of items: one `invoice_item` line each, in the order given.
 *
 * @since 0.1.0
 */
export const linesOf = (items: ReadonlyArray<InvoiceItem>): ReadonlyArray<Invoicing.Line> =>
  items.map((i) => ({
    kind: "invoice_item" as const,
    description: i.description,
    quantity: BigInt(i.quantity),
    amount: Result.getOrThrow(Money.parse(i.amount, i.currency))
  }))
