/**
 * Catalog migrations: the subscriptions of one price version moved to a newer version of the same
 * price — the item at that version, the base item or an add-on item. A migration is previewed
 * first (`preview`: one line per subscription with its next invoice before and after, every item's
 * line in it, computed as `Renewals.upcoming` computes it), then run (`run`: the
 * worker's `price_migration` item moves each line's subscription in its own transaction — the
 * new version scheduled from its next cycle, its `v2.subscription.migrated` event in the outbox,
 * the line and the migration's counts — so each subscription moves exactly once, and a run that
 * stopped anywhere resumes with the lines still pending).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import { pageErrors } from "../kernel/Paging.js"
import { dt, nowOf } from "../kernel/ServiceSupport.js"
import * as Store from "../kernel/Store.js"
import * as Merchants from "../tenants/Merchants.js"
import type * as Price from "../catalog/Price.js"
import * as ChangeQuote from "./ChangeQuote.js"
import * as IntervalSwitch from "./IntervalSwitch.js"
import * as Schedule from "../schedules/Schedule.js"
import * as PriceMigration from "./PriceMigration.js"
import * as Renewals from "./Renewals.js"
import * as SubscriptionItems from "./SubscriptionItems.js"
import { writes } from "./SubscriptionStore.js"

/**
 * The most subscriptions one migration moves (a larger version is migrated in several, each
 * previewed).
 *
 * @since 0.1.0
 */
export const MAX_MIGRATION_LINES = 10_000

/** The statuses whose subscriptions a migration moves (those that will bill again). */
const MIGRATING = ["trial", "active", "past_due", "unpaid", "paused"] as const

/** Lines the worker moves per page read. */
const LINE_PAGE = 50

/**
 * A migration as asked for (the merchant's preview request).
 *
 * @since 0.1.0
 */
export interface MigrationCommand {
  readonly from_version_id: string
  readonly to_version_id: string
  /** Only `next_cycle` (the default): see docs/pricing.md. */
  readonly effective?: string | undefined
}

/** What a subscription's next invoice bills, as a line shows it. */
const billed = (o: Option.Option<{ readonly subtotal: string; readonly amount: string }>) =>
  Option.match(o, {
    onNone: () => ({ subtotal: null, amount: null }),
    onSome: (i) => ({ subtotal: i.subtotal, amount: i.amount })
  })

/** Whether the item `itemId` of the subscription already has a version scheduled (its own change). */
const scheduledOn = (rec: Entities.SubscriptionRecord, itemId: string) =>
  itemId === SubscriptionItems.baseItemId(rec.subscription.id)
    ? rec.scheduled_price_version_id !== null
    : (rec.extra_items.find((x) => x.id === itemId)?.scheduled_version ?? null) !== null

/**
 * The record with `to` scheduled from the next cycle on its item `itemId`: the base item's
 * `scheduled_price_version_id`, another item's `scheduled_version` (each billed by the next
 * renewal, `RenewalPlan`).
 */
const moveItem = (
  rec: Entities.SubscriptionRecord,
  itemId: string,
  to: Price.PriceVersion
): Entities.SubscriptionRecord =>
  itemId === SubscriptionItems.baseItemId(rec.subscription.id)
    ? { ...rec, scheduled_price_version_id: to.price_version_id }
    : { ...rec, extra_items: rec.extra_items.map((x) => (x.id === itemId ? { ...x, scheduled_version: to } : x)) }

/**
 * The catalog migration service.
 *
 * @since 0.1.0
 */
export class PriceMigrations extends Context.Service<PriceMigrations>()("@recur/core/PriceMigrations", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const renewals = yield* Renewals.Renewals
    const migrations = storage.repository(Entities.priceMigration)
    const lines = storage.repository(Entities.priceMigrationLine)
    const subs = storage.repository(Entities.subscription)
    const prices = storage.repository(Entities.price)
    const versions = storage.repository(Entities.priceVersion)
    const { saveSub, schedule, subEvents, version } = writes(storage)

    const priceOf = (merchantId: string, priceId: string) =>
      Effect.flatMap(prices.get(merchantId, priceId), (o) =>
        Option.isSome(o) ? Effect.succeed(o.value.value) : Effect.fail(new Errors.PriceNotFound({ priceId }))
      )

    /** A version of `priceId`, or `NotFound` naming `param`. */
    const versionOf = (merchantId: string, priceId: string, versionId: string, param: string) =>
      Effect.flatMap(versions.get(merchantId, versionId), (o) =>
        Option.isSome(o) && o.value.value.id === priceId
          ? Effect.succeed(o.value.value)
          : Effect.fail(new Errors.NotFound({ resource: "price_version", id: versionId, param }))
      )

    /** The migration `migrationId` of `priceId`, with its storage version (another price's is `NotFound`). */
    const load = (merchantId: string, priceId: string, migrationId: string) =>
      Effect.flatMap(migrations.get(merchantId, migrationId), (o) =>
        Option.isSome(o) && o.value.value.price_id === priceId
          ? Effect.succeed(o.value)
          : Effect.fail(new Errors.NotFound({ resource: "price_migration", id: migrationId }))
      )

    /**
     * Every subscription with an item still billing `from` (newest first), up to the bound: its
     * base item or one of its other items (a price is one item of a subscription at most).
     */
    const subscriptionsOn = (merchantId: string, from: Price.PriceVersion) =>
      Effect.gen(function* () {
        const found: Array<Store.Versioned<Entities.SubscriptionRecord>> = []
        let after: string | undefined
        for (;;) {
          const page = yield* Effect.orDie(
            subs.list(merchantId, {
              limit: 100,
              filters: [
                { column: "item_price_ids", op: "overlaps", values: [from.id] },
                { column: "status", op: "in", values: [...MIGRATING] }
              ],
              starting_after: after
            })
          )
          if (page.list.length > 0) {
            const ids = page.list.map((r) => r.subscription.id)
            const read = yield* subs.getMany(merchantId, ids)
            for (const id of ids) {
              const v = read.get(id)
              if (v && SubscriptionItems.termsOf(v.value).some((t) => t.price_version_id === from.price_version_id))
                found.push(v)
            }
          }
          if (found.length > MAX_MIGRATION_LINES)
            return yield* new Errors.InvalidParameter({
              param: "from_version_id",
              reason: `has more than ${MAX_MIGRATION_LINES} subscriptions: one migration moves at most that many`
            })
          if (!page.has_more) return found
          after = page.list[page.list.length - 1]!.subscription.id
        }
      })

    /**
     * Previews the move of `from_version_id`'s subscriptions to `to_version_id` (both versions of
     * `priceId`; the target active, billing like the source): a `previewed` migration, its lines
     * written with it. Nothing else changes.
     */
    const preview = Effect.fn("PriceMigrations.preview")(function* (
      merchantId: string,
      priceId: string,
      command: MigrationCommand
    ) {
      const merchant = yield* merchants.get(merchantId)
      const effective = command.effective ?? "next_cycle"
      if (effective !== "next_cycle")
        return yield* new Errors.InvalidParameter({
          param: "effective",
          reason: "must be next_cycle: a migration moves each subscription at its next renewal"
        })
      yield* priceOf(merchantId, priceId)
      const from = yield* versionOf(merchantId, priceId, command.from_version_id, "from_version_id")
      const to = yield* versionOf(merchantId, priceId, command.to_version_id, "to_version_id")
      if (from.price_version_id === to.price_version_id)
        return yield* new Errors.InvalidParameter({
          param: "to_version_id",
          reason: "must differ from from_version_id"
        })
      if (to.biz_status !== "active")
        return yield* new Errors.InvalidParameter({ param: "to_version_id", reason: "must be an active version" })
      const unlike = ChangeQuote.targetRefusal("", from, to)
      if (unlike) return yield* new Errors.InvalidParameter({ param: "to_version_id", reason: unlike.detail })
      // a migration keeps each subscription's calendar: another interval would be a switch
      if (IntervalSwitch.switchesInterval(from, to))
        return yield* new Errors.InvalidParameter({
          param: "to_version_id",
          reason: "must bill on the same interval (unit and count) as the version it replaces"
        })
      const at = yield* nowOf(merchant)
      const migrationId = yield* Ids.make(Ids.prefixes.priceMigration)
      const found = yield* subscriptionsOn(merchantId, from)
      const records: Array<Entities.PriceMigrationLineRecord> = []
      for (const sv of found) {
        const rec = sv.value
        const s = rec.subscription
        const item = SubscriptionItems.termsOf(rec).find((t) => t.price_version_id === from.price_version_id)!
        const reason: PriceMigration.SkipReason | null =
          // its own change wins, and so does a schedule governing its price
          scheduledOn(rec, item.id) || (rec.pending_items ?? null) !== null || Schedule.governs(rec.schedule ?? null)
            ? "scheduled_change"
            : ChangeQuote.boundRefusal(s.id, rec, to, Option.none(), BigInt(item.quantity))
              ? "above_bound"
              : null
        const before = billed(yield* renewals.upcomingOf(merchantId, rec))
        const after =
          reason === null
            ? billed(yield* renewals.upcomingOf(merchantId, moveItem(rec, item.id, to)))
            : { subtotal: null, amount: null }
        records.push({
          merchant_id: merchantId,
          subscription_version: sv.version,
          line: new PriceMigration.PriceMigrationLine({
            line_id: yield* Ids.make(Ids.prefixes.priceMigrationLine),
            migration_id: migrationId,
            subscription_id: s.id,
            item_id: item.id,
            customer_id: s.customer_id,
            outcome: reason === null ? "pending" : "skipped",
            reason,
            currency: rec.currency,
            next_invoice_date: s.next_invoice_date,
            before_subtotal: before.subtotal,
            before_amount: before.amount,
            after_subtotal: after.subtotal,
            after_amount: after.amount,
            created_at: dt(at),
            settled_at: reason === null ? null : dt(at)
          })
        })
      }
      const skipped = records.filter((r) => r.line.outcome === "skipped").length
      const migration = new PriceMigration.PriceMigration({
        migration_id: migrationId,
        merchant_id: merchantId,
        price_id: priceId,
        from_version_id: from.price_version_id,
        to_version_id: to.price_version_id,
        effective: "next_cycle",
        status: Lifecycle.priceMigration.initial,
        total: records.length,
        pending: records.length - skipped,
        migrated: 0,
        skipped,
        created_at: dt(at),
        started_at: null,
        completed_at: null,
        canceled_at: null
      })
      yield* storage.withTransaction(
        Effect.gen(function* () {
          yield* Effect.orDie(migrations.insert(migration))
          for (let i = 0; i < records.length; i += 500) yield* lines.insertMany(records.slice(i, i + 500))
        })
      )
      return migration
    })

    /** A migration of `priceId`. */
    const get = Effect.fn("PriceMigrations.get")(function* (merchantId: string, priceId: string, migrationId: string) {
      return (yield* load(merchantId, priceId, migrationId)).value
    })

    /** A page of a migration's lines (newest first), optionally of one outcome. */
    const listLines = Effect.fn("PriceMigrations.listLines")(function* (
      merchantId: string,
      priceId: string,
      migrationId: string,
      q: {
        readonly outcome?: PriceMigration.LineOutcome
        readonly limit?: number
        readonly starting_after?: string
        readonly ending_before?: string
      } = {}
    ) {
      yield* load(merchantId, priceId, migrationId)
      const page = yield* pageErrors(
        lines.list(merchantId, {
          filters: [
            { column: "migration_id", op: "in", values: [migrationId] },
            ...(q.outcome ? [{ column: "outcome", op: "in" as const, values: [q.outcome] }] : [])
          ],
          limit: q.limit ?? 10,
          starting_after: q.starting_after,
          ending_before: q.ending_before
        })
      )
      return { has_more: page.has_more, list: page.list.map((r) => r.line) }
    })

    /** Moves a migration by `trigger`; a refused move is a `StateConflict`. */
    const moveMigration = (
      found: Store.Versioned<PriceMigration.PriceMigration>,
      trigger: PriceMigration.PriceMigrationTrigger,
      patch: Partial<PriceMigration.PriceMigration>
    ) =>
      Effect.gen(function* () {
        const moved = PriceMigration.move(found.value, trigger, patch)
        if (Result.isFailure(moved))
          return yield* new Errors.StateConflict({
            resource: "price_migration",
            id: found.value.migration_id,
            state: found.value.status,
            reason: `cannot ${trigger}`
          })
        yield* migrations.update(moved.success.value, found.version).pipe(
          Effect.catchTag("VersionConflict", () =>
            Effect.fail(new Errors.ConcurrentUpdate({ resource: "price_migration", id: found.value.migration_id }))
          ),
          Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
        )
        return moved.success.value
      })

    /** Starts a previewed migration: `running`, and the worker's `price_migration` item scheduled now. */
    const run = Effect.fn("PriceMigrations.run")(function* (merchantId: string, priceId: string, migrationId: string) {
      const merchant = yield* merchants.get(merchantId)
      const at = yield* nowOf(merchant)
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const found = yield* load(merchantId, priceId, migrationId)
          const running = yield* moveMigration(found, "run", { started_at: dt(at) })
          yield* schedule(merchant, "price_migration", migrationId, at)
          return running
        })
      )
    })

    /** Cancels a migration that has not run (`canceled`); a running or finished one is a `StateConflict`. */
    const cancel = Effect.fn("PriceMigrations.cancel")(function* (
      merchantId: string,
      priceId: string,
      migrationId: string
    ) {
      const at = yield* nowOf(yield* merchants.get(merchantId))
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const found = yield* load(merchantId, priceId, migrationId)
          return yield* moveMigration(found, "cancel", { canceled_at: dt(at) })
        })
      )
    })

    /**
     * One line, in one transaction: its subscription, unchanged since the preview, gets the new
     * version scheduled from its next cycle and its `v2.subscription.migrated` event; a changed
     * one is skipped. The line and the migration's counts are written with it, each at the
     * version read: a line already settled (by an earlier run) is left alone.
     */
    const settleLine = (merchantId: string, migrationId: string, lineId: string, to: Price.PriceVersion, at: number) =>
      storage.withTransaction(
        Effect.gen(function* () {
          const lv = yield* lines.get(merchantId, lineId)
          if (Option.isNone(lv) || lv.value.value.line.outcome !== "pending") return
          const line = lv.value.value.line
          const mv = yield* migrations.get(merchantId, migrationId)
          if (Option.isNone(mv)) return yield* Effect.die(`price migration ${migrationId} is gone`)
          const sv = yield* subs.get(merchantId, line.subscription_id)
          const unchanged = Option.isSome(sv) && sv.value.version === lv.value.value.subscription_version
          const moved = unchanged
            ? Lifecycle.transition(Lifecycle.subscription, sv.value.value.subscription.status, "migrate")
            : undefined
          if (unchanged && moved && Result.isSuccess(moved)) {
            const rec = sv.value.value
            const next = moveItem(rec, line.item_id ?? SubscriptionItems.baseItemId(rec.subscription.id), to)
            yield* Effect.orDie(saveSub(next, sv.value.version, at))
            yield* subEvents(merchantId, next, moved.success.events, at)
          }
          const migrated = unchanged && moved !== undefined && Result.isSuccess(moved)
          const settled = PriceMigration.settle(line, migrated ? null : "changed_since_preview", dt(at))
          yield* Effect.orDie(lines.update({ ...lv.value.value, line: settled }, lv.value.version))
          const m = mv.value.value
          yield* Effect.orDie(
            migrations.update(
              new PriceMigration.PriceMigration(
                {
                  ...m,
                  pending: m.pending - 1,
                  migrated: m.migrated + (migrated ? 1 : 0),
                  skipped: m.skipped + (migrated ? 0 : 1)
                },
                { disableChecks: true }
              ),
              mv.value.version
            )
          )
        })
      )

    /**
     * The worker's `price_migration` item: settles the running migration's pending lines, each
     * once, then completes it. Safe to run again after a stop at any point: settled lines are not
     * read again, and a line settled by a run that committed is never moved twice.
     */
    const process = Effect.fn("PriceMigrations.process")(function* (merchantId: string, migrationId: string) {
      const merchant = yield* merchants.get(merchantId)
      const first = yield* migrations.get(merchantId, migrationId)
      if (Option.isNone(first) || first.value.value.status !== "running") return
      const to = yield* version(merchantId, first.value.value.to_version_id)
      for (;;) {
        const page = yield* Effect.orDie(
          lines.list(merchantId, {
            limit: LINE_PAGE,
            filters: [
              { column: "migration_id", op: "in", values: [migrationId] },
              { column: "outcome", op: "in", values: ["pending"] }
            ]
          })
        )
        for (const r of page.list)
          yield* settleLine(merchantId, migrationId, r.line.line_id, to, yield* nowOf(merchant))
        if (!page.has_more) break
      }
      const at = yield* nowOf(merchant)
      yield* storage.withTransaction(
        Effect.gen(function* () {
          const found = yield* migrations.get(merchantId, migrationId)
          if (Option.isNone(found) || found.value.value.status !== "running" || found.value.value.pending > 0) return
          yield* Effect.orDie(moveMigration(found.value, "complete", { completed_at: dt(at) }))
        })
      )
    })

    return { preview, get, listLines, run, cancel, process } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
