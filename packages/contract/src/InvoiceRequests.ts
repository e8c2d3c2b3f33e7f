/**
 * The invoice requests of the merchant API: the body of `POST /api/v1/invoices/{id}/edit`, an
 * edit of a draft invoice (`DraftEdits.DraftEdit`).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * One one-off line to add to a draft: `description`, `amount` (the unit price, a decimal string
 * in the invoice's currency) and `quantity` (1 by default).
 *
 * @since 0.1.0
 */
export const DraftLine = Schema.Struct({
  description: Schema.String,
  amount: Schema.String,
  quantity: Schema.optional(Schema.Int)
})

/**
 * The body of `POST /api/v1/invoices/{id}/edit`: lines to add (`add_lines`), the positions among
 * the draft's `lines` to remove (`remove_lines`), a discount of the merchant to apply
 * (`discount_id`). Checked whole before anything changes.
 *
 * @since 0.1.0
 */
export const EditDraft = Schema.Struct({
  add_lines: Schema.optional(Schema.Array(DraftLine)),
  remove_lines: Schema.optional(Schema.Array(Schema.Int)),
  discount_id: Schema.optional(Schema.String)
})
