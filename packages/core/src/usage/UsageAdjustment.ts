/**
 * A usage adjustment (issue 35): what re-rating a closed period of a subscription did after a
 * late meter event or a correction (a void, an amendment) — the period's metric lines rated
 * again from the aggregation and compared with what was already billed for that period (its
 * invoice, plus the adjustments before this one). A draft is refreshed in place (`draft`); an
 * issued invoice gets an extra invoice for a positive difference (`invoice`) or a credit note to
 * the customer's balance for a negative one (`credit_note`), never more than it collected.
 *
 * @since 0.1.0
 */
import { Effect, type Result, Schema } from "effect"
import { NullableString, Timestamp } from "../kernel/Common.js"
import * as Lifecycle from "../kernel/Lifecycle.js"

/**
 * How an adjustment was billed: the period's draft refreshed, an extra invoice, a credit note.
 *
 * @since 0.1.0
 */
export const AdjustmentKind = Schema.Literals(["draft", "invoice", "credit_note"])

/** @since 0.1.0 */
export type AdjustmentKind = typeof AdjustmentKind.Type

/**
 * One metric item of the period: what was billed for it before, what it rates at now, and the
 * difference (amounts in the invoice's currency, before discounts and tax).
 *
 * @since 0.1.0
 */
export class AdjustmentLine extends Schema.Class<AdjustmentLine>("AdjustmentLine")({
  price_id: Schema.String,
  metric_code: Schema.String,
  metric_group: Schema.NullOr(Schema.Record(Schema.String, Schema.String)),
  /** The aggregated value now, exact decimal text. */
  value: Schema.String,
  description: Schema.String,
  /** What the period's invoice and the earlier adjustments billed for it. */
  billed: Schema.String,
  /** What it rates at now. */
  rated: Schema.String,
  /** `rated` − `billed`. */
  amount: Schema.String
}) {}

/**
 * A usage adjustment as stored and answered.
 *
 * @since 0.1.0
 */
export class UsageAdjustment extends Schema.Class<UsageAdjustment>("UsageAdjustment")({
  usage_adjustment_id: Schema.String,
  merchant_id: Schema.String,
  subscription_id: Schema.String,
  customer_id: Schema.String,
  /** The invoice that billed the period (a draft when `kind` is `draft`). */
  invoice_id: Schema.String,
  period_start: Timestamp,
  period_end: Timestamp,
  /** 1, 2, … per (subscription, period): the order of the period's adjustments. */
  sequence: Schema.Int,
  /** `pending` (held for the merchant's review: nothing issued) or `applied`. */
  status: Lifecycle.UsageAdjustmentStatus.pipe(Schema.withDecodingDefault(Effect.succeed("applied" as const))),
  kind: AdjustmentKind,
  currency: Schema.String,
  /**
   * The difference billed (signed, before discounts and tax): positive on an extra invoice,
   * negative on a credit note (at most what the period's invoice still holds), the change of the
   * draft's metric lines on a refresh.
   */
  amount: Schema.String,
  lines: Schema.Array(AdjustmentLine),
  /** The extra invoice (`kind` `invoice`). */
  adjustment_invoice_id: NullableString,
  /** The credit note (`kind` `credit_note`). */
  credit_note_id: NullableString,
  created_at: Timestamp
}) {}

/**
 * What re-rating a billed period would do, as a preview answers it:
 * `kind` `draft` (the draft would be re-priced), `invoice` (an extra invoice of `amount`),
 * `credit_note` (a credit note of −`amount` by `credit_note_method`) or `none`; `difference` is
 * Σ rated − Σ billed, `amount` what would be billed (a credit capped at what the invoice holds).
 *
 * @since 0.1.0
 */
export const AdjustmentPreview = Schema.Struct({
  subscription_id: Schema.String,
  customer_id: Schema.String,
  invoice_id: Schema.String,
  invoice_status: Schema.String,
  period_start: Schema.String,
  period_end: Schema.String,
  kind: Schema.Literals(["draft", "invoice", "credit_note", "none"]),
  currency: Schema.String,
  difference: Schema.String,
  amount: Schema.String,
  credit_note_method: Schema.NullOr(Schema.Literals(["credit_balance", "reduce_invoice"])),
  lines: Schema.Array(AdjustmentLine),
  /** The period's adjustments so far. */
  adjustments: Schema.Int
})

/** @since 0.1.0 */
export type AdjustmentPreview = typeof AdjustmentPreview.Type

/**
 * Moves an adjustment's `status` by `trigger` (the {@link Lifecycle.usageAdjustment} machine), with
 * the fields that change with it. The only way an adjustment's status changes.
 *
 * @since 0.1.0
 */
export const move = (
  adjustment: UsageAdjustment,
  trigger: "revise" | "apply",
  patch: Partial<Omit<UsageAdjustment, "status">> = {}
): Result.Result<Lifecycle.Moved<UsageAdjustment>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(
    Lifecycle.usageAdjustment,
    adjustment.status,
    trigger,
    (to) => new UsageAdjustment({ ...adjustment, ...patch, status: to }, { disableChecks: true })
  )
