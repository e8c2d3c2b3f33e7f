/**
 * Progressive billing (issue 35): a subscription's usage invoiced before its cycle ends, once what
 * its metric items accrued in the open cycle and no invoice billed yet reaches its
 * `progressive_billing_threshold`; and the deduction of what was invoiced early from the cycle's
 * renewal (or final) invoice.
 *
 * The rule that makes it add up: each progressive invoice bills, per metric item, the item's
 * amount accrued so far (`MetricUsage.ofPeriod`, the renewal's own rating of the whole period)
 * less what earlier progressive invoices of the cycle billed for it; the usage billing record
 * keeps, per item, the cumulative amount invoiced early. The renewal keeps each item's line of
 * the whole cycle and adds one line per item "already invoiced" of minus that cumulative amount.
 * So Σ progressive invoices + the renewal's usage lines = the rating of the whole cycle, exactly
 * (before discounts and tax).
 *
 * A progressive invoice (`invoice_type` `progressive`) is collected on its own, as a one-off
 * invoice is: charged off session to the customer's card on file, or sent with terms when the
 * customer's invoices are sent; a decline leaves it `failed`, payable on its page, and runs no
 * dunning. Tax is computed at the customer's address; discounts and the customer's credit are
 * applied by the renewal, not here.
 *
 * @since 0.1.0
 */
import { DateTime, Effect, Option } from "effect"
import * as Collection from "../invoices/Collection.js"
import * as Invoice from "../invoices/Invoice.js"
import { invoiceDocuments, newInvoice } from "../invoices/InvoiceDocuments.js"
import * as Invoicing from "../invoices/Invoicing.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import type * as Ports from "../kernel/Ports.js"
import { emit, laneOf, type StorageService } from "../kernel/ServiceSupport.js"
import * as Money from "../money/Money.js"
import { cardOnFile } from "../payments/CardOnFile.js"
import * as SentInvoices from "../payments/SentInvoices.js"
import * as Trade from "../payments/Trade.js"
import { newTrade, submitTrade } from "../payments/TradeStore.js"
import type * as Merchant from "../tenants/Merchant.js"
import type * as Secrets from "../tenants/Secrets.js"
import type * as Settings from "../tenants/Settings.js"
import { withTax } from "../taxes/TaxRates.js"
import type * as MetricUsage from "./MetricUsage.js"
import * as UsageAlert from "./UsageAlert.js"

/**
 * The work kind of a usage check (alerts and progressive billing of one subscription).
 *
 * @since 0.1.0
 */
export const CHECK_KIND = "usage_alert_check"

/**
 * How long usage checks of one subscription are coalesced: an ingestion schedules the check at
 * the end of the current window, so a stream of events costs one check per window.
 *
 * @since 0.1.0
 */
export const CHECK_WINDOW_MS = 5_000

/**
 * When a check scheduled at `now` runs: the end of the current {@link CHECK_WINDOW_MS} window.
 *
 * @since 0.1.0
 */
export const checkDue = (now: number): number => (Math.floor(now / CHECK_WINDOW_MS) + 1) * CHECK_WINDOW_MS

/** The item label of a metric line (`API calls EU` of `API calls EU: 3 calls (api_calls, …)`). */
const labelOf = (description: string) => {
  const i = description.indexOf(": ")
  return i < 0 ? description : description.slice(0, i)
}

/**
 * What a progressive invoice of `rec`'s open cycle would bill now: per metric item, its accrued
 * amount (`charged`) less what earlier progressive invoices of the cycle billed (`record`, when it
 * is of this cycle); and the billed amounts after it. `undefined` when the not yet invoiced total
 * is under `threshold` (minor units).
 *
 * @example
 * const due = ProgressiveBilling.due(record, rec.subscription.cycle_index, charges, 5000n)
 * @since 0.1.0
 */
export const due = (
  record: UsageAlert.UsageBilling,
  cycleIndex: number,
  charged: ReadonlyArray<MetricUsage.MetricCharge>,
  threshold: bigint
):
  | {
      readonly lines: ReadonlyArray<{ readonly charge: MetricUsage.MetricCharge; readonly delta: bigint }>
      readonly total: bigint
      readonly billed: ReadonlyArray<UsageAlert.BilledItem>
    }
  | undefined => {
  const before = record.cycle_index === cycleIndex ? record.billed : []
  const invoiced = (itemId: string) => BigInt(before.find((b) => b.item_id === itemId)?.amount_minor ?? "0")
  const lines = charged
    .map((charge) => ({ charge, delta: charge.amount.amount - invoiced(charge.item_id) }))
    .filter((l) => l.delta !== 0n)
  const total = lines.reduce((a, l) => a + l.delta, 0n)
  if (threshold <= 0n || total < threshold) return undefined
  const billed = [
    ...before.filter((b) => !charged.some((c) => c.item_id === b.item_id)),
    ...charged.map(
      (c) =>
        new UsageAlert.BilledItem({
          item_id: c.item_id,
          description: labelOf(c.line.description),
          amount_minor: String(c.amount.amount)
        })
    )
  ].filter((b) => b.amount_minor !== "0")
  return { lines, total, billed }
}

/**
 * The lines a renewal (or final) invoice of the cycle `rec` ends adds for what progressive
 * invoices billed early in it: one `usage` line per item of minus the amount invoiced, over the
 * period. With `close`, the record is marked deducted at the version read — in the renewal's
 * transaction, so a usage check billing the same cycle at once fails one of the two
 * (`ConcurrentUpdate`) — and a check is scheduled when alerts watch the subscription (their
 * crossings of the ended cycle resolve). None when nothing was invoiced early in the cycle.
 *
 * @example
 * const lines = yield* ProgressiveBilling.deductions(storage)(merchant, sv.value, at, true)
 * @since 0.1.0
 */
export const deductions =
  (storage: StorageService) =>
  (
    merchant: Merchant.Merchant,
    rec: Entities.SubscriptionRecord,
    at: number,
    close: boolean
  ): Effect.Effect<ReadonlyArray<Invoicing.Line>, Errors.ConcurrentUpdate> =>
    Effect.gen(function* () {
      const records = storage.repository(Entities.usageBilling)
      const found = yield* records.get(merchant.merchant_id, rec.subscription.id)
      if (Option.isNone(found)) return []
      const record = found.value.value
      const s = rec.subscription
      if (close && record.alerts > 0)
        yield* storage.workQueue.schedule({
          lane: laneOf(merchant),
          merchant_id: merchant.merchant_id,
          kind: CHECK_KIND,
          subject_id: s.id,
          due_at: at
        })
      if (record.cycle_index !== s.cycle_index || record.closed || record.billed.length === 0) return []
      const span =
        s.current_period_start !== null && s.current_period_end !== null
          ? {
              start: DateTime.toEpochMillis(s.current_period_start),
              end: DateTime.toEpochMillis(s.current_period_end)
            }
          : undefined
      if (close)
        yield* records
          .update(
            new UsageAlert.UsageBilling({ ...record, closed: true, updated_at: DateTime.makeUnsafe(at) }),
            found.value.version
          )
          .pipe(
            Effect.catchTag("UniqueViolation", (e) => Effect.die(e)),
            Effect.catchTag("VersionConflict", () =>
              Effect.fail(new Errors.ConcurrentUpdate({ resource: "subscription", id: s.id }))
            )
          )
      return record.billed.map(
        (b): Invoicing.Line => ({
          kind: "usage",
          description: `${b.description}: already invoiced in this period (progressive billing)`,
          quantity: 1n,
          amount: Money.make(-BigInt(b.amount_minor), record.currency),
          span
        })
      )
    })

/**
 * What issuing a progressive invoice needs from the engine's ports and services.
 *
 * @since 0.1.0
 */
export interface IssueDeps {
  readonly storage: StorageService
  readonly taxes: Ports.TaxCalculator["Service"]
  readonly secrets: Secrets.Secrets["Service"]
  readonly settings: Pick<Settings.Settings["Service"], "publicUrl">
}

/**
 * Issues a progressive invoice of `lines` for `rec`'s open cycle, in the caller's transaction:
 * numbered, taxed at the customer's address, then charged to the card on file (returned as the
 * charge to make once committed), sent with terms when the customer's invoices are sent, or left
 * `open` for its page without a card. The invoice names its subscription and cycle in `metadata`
 * (`subscription_id`, `cycle_index`); its own `subscription_id` is `null`: it is collected alone.
 *
 * @since 0.1.0
 */
export const issue = (
  deps: IssueDeps,
  input: {
    readonly merchant: Merchant.Merchant
    readonly rec: Entities.SubscriptionRecord
    readonly lines: ReadonlyArray<Invoicing.Line>
    readonly at: number
  }
) =>
  Effect.gen(function* () {
    const { at, merchant, rec } = input
    const merchantId = merchant.merchant_id
    const customerId = rec.subscription.customer_id
    const customer = yield* deps.storage.repository(Entities.customer).get(merchantId, customerId)
    // as the subscription's invoices are collected (its own setting, else the customer's)
    const collection = Collection.effective(
      rec.collection ?? null,
      Option.match(customer, { onNone: () => null, onSome: (c) => c.value.collection ?? null })
    )
    const token = yield* cardOnFile(deps.storage, merchantId, customerId)
    const draft = yield* withTax(deps.taxes, deps.storage)(
      Invoicing.total({
        invoice_type: "progressive",
        cycle_index: rec.subscription.cycle_index,
        currency: rec.currency,
        lines: input.lines
      }),
      merchantId,
      customerId
    )
    const dueAt = Collection.dueAt(collection, at)
    const trade = yield* newTrade({
      merchant,
      amount: draft.total,
      customer_id: customerId,
      order_id: null,
      payment_mode: "onetime_payment",
      order_type: "one_time",
      session: Option.none(),
      line: null,
      tax: draft.tax,
      metadata: {},
      at
    })
    const created = yield* newInvoice({
      merchant_id: merchantId,
      draft,
      trade_id: trade.trade_id,
      subscription_id: null,
      price_id: null,
      price_version_id: null,
      customer_id: customerId,
      order_id: null,
      trigger: Option.isSome(token) && dueAt === null ? "charge" : null,
      at
    })
    const tagged = new Invoice.Invoice(
      {
        ...created,
        metadata: { subscription_id: rec.subscription.id, cycle_index: String(rec.subscription.cycle_index) }
      },
      { disableChecks: true }
    )
    const documents = invoiceDocuments(deps.storage, deps.secrets, deps.settings)
    const inv = yield* documents.issueOne(merchant, dueAt === null ? tagged : SentInvoices.asSent(tagged, dueAt))
    yield* deps.storage.repository(Entities.invoice).insert(inv).pipe(Effect.orDie)
    if (dueAt !== null) {
      yield* SentInvoices.send(deps.storage, merchant, { trade, invoice: inv, subscriptionId: null, at })
      return { invoice: inv, charge: Option.none<{ tradeId: string; token: string }>() }
    }
    if (Option.isSome(token)) {
      yield* submitTrade(deps.storage, { trade, invoice_id: inv.invoice_id, subscription_id: null, at })
      // a durable intent: if this process dies before the charge, a worker makes it
      yield* deps.storage.workQueue.schedule({
        lane: laneOf(merchant),
        merchant_id: merchantId,
        kind: "charge",
        subject_id: trade.trade_id,
        due_at: at
      })
      return { invoice: inv, charge: Option.some({ tradeId: trade.trade_id, token: token.value }) }
    }
    yield* deps.storage
      .repository(Entities.trade)
      .insert({ trade, attempts: 0, invoice_id: inv.invoice_id, subscription_id: null })
      .pipe(Effect.orDie)
    yield* emit(deps.storage, {
      merchant_id: merchantId,
      type: "v2.trades.created",
      business_id: trade.trade_id,
      schema: Trade.Trade,
      data: trade,
      at
    })
    return { invoice: inv, charge: Option.none<{ tradeId: string; token: string }>() }
  })
