/**
 * How an invoice is collected: `charge_automatically` (the card on file is charged, as always) or
 * `send_invoice` (the invoice is issued open with net terms, `days_until_due`, emailed with its
 * hosted page where the customer pays by card; past its due date it enters dunning). Set on the
 * customer and on the subscription; the subscription's setting wins, else the customer's, else
 * `charge_automatically`.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import * as Errors from "../kernel/Errors.js"

/**
 * The collection methods.
 *
 * @since 0.1.0
 */
export const CollectionMethod = Schema.Literals(["charge_automatically", "send_invoice"])
/** @since 0.1.0 */
export type CollectionMethod = typeof CollectionMethod.Type

/**
 * A stored collection setting (of a customer or a subscription).
 *
 * @since 0.1.0
 */
export const CollectionSetting = Schema.Struct({
  collection_method: CollectionMethod,
  days_until_due: Schema.NullOr(Schema.Number)
})

/** The shortest and longest net terms, in days. */
export const MIN_DAYS_UNTIL_DUE = 1
/** @since 0.1.0 */
export const MAX_DAYS_UNTIL_DUE = 365

const DAY = 86_400_000

/**
 * A collection setting as stored on a customer or a subscription: none (`null`: inherits), or a
 * method with its terms (`days_until_due` null for `charge_automatically`).
 *
 * @since 0.1.0
 */
export interface Collection {
  readonly collection_method: CollectionMethod
  readonly days_until_due: number | null
}

/**
 * A collection setting as a request gives it (both absent: no change; `days_until_due` is
 * required with `send_invoice`, 1 to 365, and needs a `collection_method`).
 *
 * @since 0.1.0
 */
export interface CollectionInput {
  readonly collection_method?: string | undefined
  readonly days_until_due?: number | null | undefined
}

/**
 * The setting a request asks for, or the `InvalidParameter` naming the field at fault: an unknown
 * method, `send_invoice` without `days_until_due`, days out of 1..365 or not whole, days with
 * `charge_automatically`. `undefined` when the request names neither field (nothing changes).
 *
 * @example
 * parse({ collection_method: "send_invoice", days_until_due: 30 }) // { collection_method: "send_invoice", days_until_due: 30 }
 * @since 0.1.0
 */
export const parse = (input: CollectionInput): Collection | Errors.InvalidParameter | undefined => {
  if (input.collection_method === undefined && input.days_until_due === undefined) return undefined
  const method = input.collection_method
  if (method === undefined)
    return new Errors.InvalidParameter({ param: "collection_method", reason: "required with days_until_due" })
  if (method !== "charge_automatically" && method !== "send_invoice")
    return new Errors.InvalidParameter({
      param: "collection_method",
      reason: "must be charge_automatically or send_invoice"
    })
  const days = input.days_until_due ?? null
  if (method === "charge_automatically") {
    if (days !== null)
      return new Errors.InvalidParameter({
        param: "days_until_due",
        reason: "only with collection_method send_invoice"
      })
    return { collection_method: method, days_until_due: null }
  }
  if (days === null)
    return new Errors.InvalidParameter({ param: "days_until_due", reason: "required with send_invoice" })
  if (!Number.isInteger(days) || days < MIN_DAYS_UNTIL_DUE || days > MAX_DAYS_UNTIL_DUE)
    return new Errors.InvalidParameter({
      param: "days_until_due",
      reason: `must be a whole number of days from ${MIN_DAYS_UNTIL_DUE} to ${MAX_DAYS_UNTIL_DUE}`
    })
  return { collection_method: method, days_until_due: days }
}

/**
 * The setting in force for a subscription: its own, else its customer's, else charging
 * automatically.
 *
 * @since 0.1.0
 */
export const effective = (
  subscription: Collection | null | undefined,
  customer: Collection | null | undefined
): Collection => subscription ?? customer ?? { collection_method: "charge_automatically", days_until_due: null }

/**
 * When an invoice issued at `at` under `collection` is due (Unix ms): `at` plus its days; null
 * when it is charged automatically.
 *
 * @since 0.1.0
 */
export const dueAt = (collection: Collection, at: number): number | null =>
  collection.collection_method === "send_invoice" && collection.days_until_due !== null
    ? at + collection.days_until_due * DAY
    : null

/**
 * The work queue's kind of a sent invoice's due date and its reminders (subject: the invoice).
 *
 * @since 0.1.0
 */
export const DUE_WORK_KIND = "invoice_due"
