/**
 * Catalog migrations as the API returns them: moving the subscriptions of one price version to a
 * newer version of the same price, previewed first (one line per subscription, its next invoice
 * before and after), then run by the worker; the migration's state machine and the only function
 * that writes its status.
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import type { Result } from "effect"
import { NullableString, NullableTimestamp, Timestamp } from "../kernel/Common.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import { PriceMigrationStatus, type PriceMigrationTrigger, priceMigration } from "./MigrationMachine.js"

export type {
  /** @since 0.1.0 */
  PriceMigrationTrigger
} from "./MigrationMachine.js"

/**
 * What a line of a migration came to: `pending` (not moved yet), `migrated` (moved, its event
 * written) or `skipped` (with a `reason`).
 *
 * @since 0.1.0
 */
export const LineOutcome = Schema.Literals(["pending", "migrated", "skipped"])
/** @since 0.1.0 */
export type LineOutcome = typeof LineOutcome.Type

/**
 * Why a line was skipped: the subscription had a price change of its own scheduled, or a schedule
 * governs its price (`scheduled_change`), the new version would bill more than an invoice may carry
 * (`above_bound`), or it changed between the preview and the run (`changed_since_preview`: its
 * preview no longer holds; preview again to include it).
 *
 * @since 0.1.0
 */
export const SkipReason = Schema.Literals(["scheduled_change", "above_bound", "changed_since_preview"])
/** @since 0.1.0 */
export type SkipReason = typeof SkipReason.Type

/**
 * A catalog migration.
 *
 * @since 0.1.0
 */
export class PriceMigration extends Schema.Class<PriceMigration>("PriceMigration")({
  migration_id: Schema.String,
  merchant_id: Schema.String,
  price_id: Schema.String,
  from_version_id: Schema.String,
  to_version_id: Schema.String,
  /** When the subscriptions bill the new version: from their next cycle (the only mode). */
  effective: Schema.Literals(["next_cycle"]),
  status: PriceMigrationStatus,
  /** Lines in the migration (one per subscription of the version at the preview). */
  total: Schema.Int,
  pending: Schema.Int,
  migrated: Schema.Int,
  skipped: Schema.Int,
  created_at: Timestamp,
  started_at: NullableTimestamp,
  completed_at: NullableTimestamp,
  canceled_at: NullableTimestamp
}) {}

/**
 * One subscription of a migration: the item at the version (its base item or an add-on item), its
 * next invoice before and after (the upcoming invoice's `subtotal` and `amount` — every item's
 * line, tax and discounts included, in `currency`; `null` when it will not renew, e.g. paused),
 * and what became of it.
 *
 * @since 0.1.0
 */
export class PriceMigrationLine extends Schema.Class<PriceMigrationLine>("PriceMigrationLine")({
  line_id: Schema.String,
  migration_id: Schema.String,
  subscription_id: Schema.String,
  /**
   * The item of the subscription at the version (the base item's id is `si_` + the subscription
   * id's suffix; an add-on item's its own); `null` on lines written before migrations moved items.
   */
  item_id: Schema.NullOr(Schema.String).pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  customer_id: Schema.String,
  outcome: LineOutcome,
  reason: Schema.NullOr(SkipReason),
  currency: Schema.String,
  next_invoice_date: NullableTimestamp,
  before_subtotal: NullableString,
  before_amount: NullableString,
  after_subtotal: NullableString,
  after_amount: NullableString,
  created_at: Timestamp,
  /** When it was migrated or skipped by the run. */
  settled_at: NullableTimestamp
}) {}

/**
 * Moves a migration's `status` by `trigger`, with the fields that change with it: the only way a
 * migration's status changes.
 *
 * @since 0.1.0
 */
export const move = (
  migration: PriceMigration,
  trigger: PriceMigrationTrigger,
  patch: Partial<Omit<PriceMigration, "status">> = {}
): Result.Result<Lifecycle.Moved<PriceMigration>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(
    priceMigration,
    migration.status,
    trigger,
    (to) => new PriceMigration({ ...migration, ...patch, status: to }, { disableChecks: true })
  )

/**
 * A line's outcome once the run reached it: `migrated`, or `skipped` for `reason`.
 *
 * @since 0.1.0
 */
export const settle = (line: PriceMigrationLine, reason: SkipReason | null, at: PriceMigrationLine["settled_at"]) =>
  new PriceMigrationLine(
    { ...line, outcome: reason === null ? "migrated" : "skipped", reason, settled_at: at },
    { disableChecks: true }
  )
