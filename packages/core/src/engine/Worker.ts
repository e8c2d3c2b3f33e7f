/**
 * The worker: claims due work (renewals, dunning retries, trial notices, incomplete expiries,
 * first payments ended at their checkout's expiry, reconciliations, charges, webhook deliveries, catalog migrations,
 * customer notifications, sent invoices past due, usage checks) with leases, so any number of processes can run
 * it; renewals of one merchant are billed in batches. A failing item backs off and is set
 * aside after {@link MAX_WORK_ATTEMPTS} attempts, never holding the merchant's other work.
 *
 * @since 0.1.0
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import * as Dunning from "../payments/Dunning.js"
import * as SentInvoices from "../payments/SentInvoices.js"
import * as Charges from "../payments/Charges.js"
import * as Reconciliation from "../payments/Reconciliation.js"
import * as RenewalBatches from "../subscriptions/RenewalBatches.js"
import * as OwedRefunds from "../refunds/OwedRefunds.js"
import * as PriceMigrations from "../subscriptions/PriceMigrations.js"
import * as Refunds from "../refunds/Refunds.js"
import * as Renewals from "../subscriptions/Renewals.js"
import * as Store from "../kernel/Store.js"
import * as Telemetry from "../kernel/Telemetry.js"
import * as WebhookDispatch from "../webhooks/WebhookDispatch.js"
import * as Notifications from "../notifications/Notifications.js"
import * as InvoiceActions from "../invoices/InvoiceActions.js"
import * as CreditGrants from "../credits/CreditGrants.js"
import * as UsageAdjustments from "../usage/UsageAdjustments.js"
import * as UsageChecks from "../usage/UsageChecks.js"

/**
 * The kinds of work, closed: every kind is matched exhaustively by the worker.
 *
 * @since 0.1.0
 */
export const WORK_KINDS = [
  "renewal",
  "dunning",
  "trial_notice",
  "incomplete_expiry",
  "first_payment_expiry",
  "reconcile",
  "charge",
  "refund_owed",
  "refund_settle",
  "webhook",
  "price_migration",
  "notification",
  "invoice_due",
  "invoice_finalize",
  "credit_grant_expiry",
  "auto_top_up",
  "usage_adjustment",
  "usage_alert_check"
] as const

/**
 * @since 0.1.0
 */
export type WorkKind = (typeof WORK_KINDS)[number]

const isWorkKind = (kind: string): kind is WorkKind => (WORK_KINDS as ReadonlyArray<string>).includes(kind)

/**
 * Attempts of one work item before it is set aside (about two hours of doubling delays).
 *
 * @since 0.1.0
 */
export const MAX_WORK_ATTEMPTS = 8

/**
 * The worker service.
 *
 * @since 0.1.0
 */
export class Worker extends Context.Service<Worker>()("@recur/core/Worker", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const renewalService = yield* Renewals.Renewals
    const renewalBatches = yield* RenewalBatches.RenewalBatches
    const dunning = yield* Dunning.Dunning
    const charges = yield* Charges.Charges
    const reconciliation = yield* Reconciliation.Reconciliation
    const webhooks = yield* WebhookDispatch.WebhookDispatch
    const refunds = yield* Refunds.Refunds
    const owedRefunds = yield* OwedRefunds.OwedRefunds
    const priceMigrations = yield* PriceMigrations.PriceMigrations
    const notifications = yield* Notifications.Notifications
    const sentInvoices = yield* SentInvoices.SentInvoices
    const invoiceActions = yield* InvoiceActions.InvoiceActions
    const creditGrants = yield* CreditGrants.CreditGrants
    const usageAdjustments = yield* UsageAdjustments.UsageAdjustments
    const usageChecks = yield* UsageChecks.UsageChecks

    /** The effect of one work item of a known kind. */
    const workOf = (kind: WorkKind, merchantId: string, subjectId: string): Effect.Effect<unknown, unknown> => {
      switch (kind) {
        case "renewal":
          return renewalService.renew(merchantId, subjectId)
        case "dunning":
          return dunning.retry(merchantId, subjectId).pipe(
            Effect.tap((r) => Telemetry.countDunning(Option.isSome(r) ? r.value.status : "skipped")),
            Effect.tapCause(() => Telemetry.countDunning("error"))
          )
        case "trial_notice":
          return renewalService.trialNotice(merchantId, subjectId)
        case "incomplete_expiry":
          return renewalService.expireIncomplete(merchantId, subjectId)
        case "first_payment_expiry":
          return reconciliation.expireFirstPayment(merchantId, subjectId)
        case "reconcile":
          return reconciliation.reconcileTrade(merchantId, subjectId)
        case "charge":
          return charges.chargePending(merchantId, subjectId)
        case "refund_owed":
          return owedRefunds.settle(merchantId, subjectId)
        case "refund_settle":
          return refunds.settle(merchantId, subjectId)
        case "webhook":
          return webhooks.deliver(merchantId, subjectId)
        case "price_migration":
          return priceMigrations.process(merchantId, subjectId)
        case "notification":
          return notifications.deliver(merchantId, subjectId)
        case "invoice_due":
          return sentInvoices.due(merchantId, subjectId)
        case "invoice_finalize":
          return invoiceActions.finalizeDue(merchantId, subjectId)
        case "credit_grant_expiry":
          return creditGrants.expire(merchantId, subjectId)
        case "auto_top_up":
          return creditGrants.runAutoTopUp(merchantId, subjectId)
        case "usage_adjustment":
          return Effect.asVoid(usageAdjustments.adjust(merchantId, subjectId))
        case "usage_alert_check":
          return usageChecks.check(merchantId, subjectId)
      }
    }

    /** Runs one claimed work item; `false` when it failed (see {@link failedItem}). */
    const runItem = Effect.fn("Worker.runItem")(function* (item: Store.WorkItem): Effect.fn.Return<boolean> {
      yield* Effect.annotateCurrentSpan({ kind: item.kind })
      // an item of a kind this version does not know (written by a newer one) is left alone
      if (!isWorkKind(item.kind)) return yield* Effect.as(Effect.logWarning(`unknown work kind ${item.kind}`), false)
      const done = yield* workOf(item.kind, item.merchant_id, item.subject_id).pipe(
        Effect.as(true),
        Effect.catchCause((cause) =>
          Effect.as(Effect.logError(`work item ${item.kind} ${item.subject_id} failed`, cause), false)
        )
      )
      if (item.kind === "renewal") yield* Telemetry.countRenewals(done ? 1 : 0, done ? 0 : 1)
      return done
    })

    /**
     * A work item that failed: claimable again after a delay that doubles with each attempt (1
     * minute up to 1 hour), or, after {@link MAX_WORK_ATTEMPTS} attempts, set aside (no worker
     * claims it, it no longer holds the merchant's clock back) with an error log that names it.
     */
    const failedItem = (item: Store.WorkItem, owner: string, now: number) =>
      item.attempts >= MAX_WORK_ATTEMPTS
        ? Effect.flatMap(storage.workQueue.setAside(item, owner), (moved) =>
            moved
              ? Effect.logError(
                  `work item ${item.kind} ${item.subject_id} set aside after ${item.attempts} failed attempts`
                ).pipe(
                  Effect.annotateLogs({
                    event: "recur.work.set_aside",
                    merchant_id: item.merchant_id,
                    kind: item.kind,
                    subject_id: item.subject_id,
                    attempts: item.attempts
                  })
                )
              : Effect.void
          )
        : Effect.asVoid(
            storage.workQueue.retryLater(
              item,
              owner,
              now + Math.min(60_000 * 2 ** Math.max(0, item.attempts - 1), 3_600_000)
            )
          )

    /**
     * Claims and runs due work of a lane until none is left at `now`. Returns how many items ran.
     */
    const runDue = Effect.fn("Worker.runDue")(function* (options: {
      readonly now: number
      readonly owner: string
      readonly lane?: "live" | "frozen"
      readonly merchantId?: string
      readonly batch?: number
      readonly leaseMs?: number
      /** Subjects worked on at once (each item is its own transaction); 1 keeps strict time order. */
      readonly concurrency?: number
      /** Renewals of one merchant billed together (see `renewMany`); 1 renews each alone. Default 64. */
      readonly renewalBatch?: number
      /** Stop claiming once this many items ran (a bound on one call's work); default: no bound. */
      readonly maxItems?: number
    }) {
      let ran = 0
      const concurrency = Math.max(1, options.concurrency ?? 1)
      const batchSize = Math.max(1, options.renewalBatch ?? 64)
      const maxItems = options.maxItems ?? Number.POSITIVE_INFINITY
      for (;;) {
        if (ran >= maxItems) return ran
        const items = yield* storage.workQueue.claim({
          now: options.now,
          limit: Math.min(options.batch ?? Math.max(256, concurrency * 32), maxItems - ran),
          leaseMs: options.leaseMs ?? 60_000,
          owner: options.owner,
          ...(options.lane ? { lane: options.lane } : {}),
          ...(options.merchantId ? { merchantId: options.merchantId } : {})
        })
        if (items.length === 0) return ran
        // a renewal alone on its subject joins its merchant's batch (see renewMany)
        const bySubject = new Map<string, Array<Store.WorkItem>>()
        for (const item of items) {
          const key = `${item.merchant_id} ${item.subject_id}`
          const group = bySubject.get(key)
          if (group) group.push(item)
          else bySubject.set(key, [item])
        }
        const renewals = new Map<string, Array<Store.WorkItem>>()
        const singles: Array<Array<Store.WorkItem>> = []
        for (const group of bySubject.values()) {
          const item = group[0]!
          if (group.length === 1 && item.kind === "renewal" && batchSize > 1) {
            const batch = renewals.get(item.merchant_id)
            if (batch) batch.push(item)
            else renewals.set(item.merchant_id, [item])
          } else singles.push(group)
        }
        const batches = [...renewals.values()].flatMap((all) =>
          Array.from({ length: Math.ceil(all.length / batchSize) }, (_, i) =>
            all.slice(i * batchSize, (i + 1) * batchSize)
          )
        )
        const runBatch = (batch: ReadonlyArray<Store.WorkItem>) =>
          Effect.gen(function* () {
            const started = yield* Clock.currentTimeMillis
            const finished = yield* renewalBatches
              .renewMany(
                batch[0]!.merchant_id,
                batch.map((i) => i.subject_id),
                { concurrency }
              )
              .pipe(
                Effect.catchCause((cause) =>
                  Effect.as(Effect.logError("renewal batch failed", cause), new Set<string>())
                )
              )
            yield* storage.workQueue.completeMany(
              batch.filter((i) => finished.has(i.subject_id)),
              options.owner
            )
            yield* Effect.forEach(
              batch.filter((i) => !finished.has(i.subject_id)),
              (i) => failedItem(i, options.owner, options.now),
              { discard: true }
            )
            ran += batch.length
            // one line per batch, with the numbers the metrics count
            const billed = batch.filter((i) => finished.has(i.subject_id)).length
            yield* Telemetry.countRenewals(billed, batch.length - billed)
            yield* Effect.logInfo("renewal batch").pipe(
              Effect.annotateLogs({
                event: "recur.renewal.batch",
                merchant_id: batch[0]!.merchant_id,
                count: batch.length,
                billed,
                failed: batch.length - billed,
                duration_ms: (yield* Clock.currentTimeMillis) - started
              })
            )
          })
        // items of one subject stay in order, one after the other; subjects run side by side
        const runGroup = (group: ReadonlyArray<Store.WorkItem>) =>
          Effect.forEach(
            group,
            (item) =>
              Effect.gen(function* () {
                if (yield* runItem(item)) yield* storage.workQueue.complete(item, options.owner)
                else yield* failedItem(item, options.owner, options.now)
                ran++
              }),
            { discard: true }
          )
        yield* Effect.all(
          [
            Effect.forEach(batches, runBatch, { concurrency: Math.min(concurrency, 4), discard: true }),
            Effect.forEach(singles, runGroup, { concurrency, discard: true })
          ],
          { concurrency: concurrency > 1 ? 2 : 1, discard: true }
        )
      }
    })

    /**
     * The worker: runs due live work every `interval`, forever. Safe on many processes at once
     * (leases).
     */
    const worker = Effect.fn("Worker.worker")(function* (options: {
      readonly owner: string
      readonly intervalMs?: number
      readonly concurrency?: number
    }) {
      for (;;) {
        const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
        yield* runDue({
          now,
          owner: options.owner,
          lane: "live",
          ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {})
        })
        yield* Effect.sleep(options.intervalMs ?? 1000)
      }
    })

    return { runItem, runDue, worker } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
