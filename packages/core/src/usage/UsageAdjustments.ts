/**
 * Usage adjustments (issue 35): a closed period of a subscription re-rated after late meter
 * events or corrections. Per (subscription, period) the metric items are rated again from the
 * aggregation (`MetricUsage.charges`, the renewal's own computation) and compared with what was
 * already billed for the period — its invoice's metric lines plus every earlier adjustment — so
 * that re-sent or repeated corrections never bill twice. A **draft** is re-priced in place
 * (`DraftEdits.reprice`); on an **issued** invoice a positive difference becomes an extra invoice
 * (`ExtraInvoices`), a negative one a credit note (`InvoiceCredits`: `credit_balance` on a paid
 * invoice, `reduce_invoice` on one still owed), never more than the invoice still holds. One
 * work item per period (`LateEvents.WORK_KIND`) runs it; every adjustment is recorded
 * (`Entities.usageAdjustment`, unique per period and sequence) and announced
 * (`v2.usage_adjustment.created`) in the transaction that bills it.
 *
 * @since 0.1.0
 */
import { Context, DateTime, Effect, Layer, Option, Result } from "effect"
import * as CycleLedger from "../invoices/CycleLedger.js"
import * as DraftEdits from "../invoices/DraftEdits.js"
import * as ExtraInvoices from "../invoices/ExtraInvoices.js"
import * as Invoice from "../invoices/Invoice.js"
import { invoiceDocuments } from "../invoices/InvoiceDocuments.js"
import type * as Invoicing from "../invoices/Invoicing.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import * as Ports from "../kernel/Ports.js"
import { emit, nowOf } from "../kernel/ServiceSupport.js"
import * as Store from "../kernel/Store.js"
import * as Money from "../money/Money.js"
import * as Charges from "../payments/Charges.js"
import * as InvoiceCredits from "../refunds/InvoiceCredits.js"
import { paidIndex } from "../subscriptions/SubscriptionTerms.js"
import { withTax } from "../taxes/TaxRates.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"
import * as LateEvents from "./LateEvents.js"
import * as MetricUsage from "./MetricUsage.js"
import { type AdjustmentKind, AdjustmentLine, type AdjustmentPreview, UsageAdjustment } from "./UsageAdjustment.js"
import { formatInstant } from "../kernel/Common.js"
import * as UsageAdjustmentEntity from "./UsageAdjustment.js"
import { periodKey } from "./UsageAdjustmentEntities.js"
import * as Lifecycle from "../kernel/Lifecycle.js"

/**
 * What re-rating a period would do: the period and its invoice, each metric item's billed and
 * rated amounts, the difference, and how it would be billed (`none`: nothing to do).
 *
 * @since 0.1.0
 */
export interface Plan {
  readonly subscription_id: string
  readonly customer_id: string
  readonly period_start: number
  readonly period_end: number
  readonly invoice: Invoice.Invoice
  readonly kind: AdjustmentKind | "none"
  readonly currency: string
  readonly lines: ReadonlyArray<AdjustmentLine>
  /** Σ rated − Σ billed. */
  readonly difference: Money.Money
  /** What it bills: the difference, a credit capped at what the invoice still holds. */
  readonly amount: Money.Money
  /** The credit note's method, for `credit_note`. */
  readonly method: "credit_balance" | "reduce_invoice" | null
  /** The period's earlier adjustments. */
  readonly earlier: ReadonlyArray<UsageAdjustment>
  /** The re-rated charges (the draft's new lines). */
  readonly charges: ReadonlyArray<MetricUsage.MetricCharge>
}

/**
 * The answer of a preview.
 *
 * @since 0.1.0
 */
export const previewOf = (plan: Plan): AdjustmentPreview => ({
  subscription_id: plan.subscription_id,
  customer_id: plan.customer_id,
  invoice_id: plan.invoice.invoice_id,
  invoice_status: plan.invoice.biz_status,
  period_start: formatInstant(plan.period_start),
  period_end: formatInstant(plan.period_end),
  kind: plan.kind,
  currency: plan.currency,
  difference: Money.format(plan.difference),
  amount: Money.format(plan.amount),
  credit_note_method: plan.kind === "credit_note" ? plan.method : null,
  lines: plan.lines,
  adjustments: plan.earlier.length
})

/** The part of a metric line's description that names its metric and group: ` (api_calls, region eu)`. */
const keyOf = (description: string) => description.slice(description.lastIndexOf(" ("))

const sameSpan = (l: Invoice.InvoiceLine, start: number, end: number) =>
  l.kind === "usage" &&
  l.period_start !== null &&
  l.period_end !== null &&
  DateTime.toEpochMillis(l.period_start) === start &&
  DateTime.toEpochMillis(l.period_end) === end

const REDUCIBLE: ReadonlyArray<string> = ["open", "retrying", "failed"]

/**
 * The usage adjustments service.
 *
 * @example
 * const adjustments = yield* UsageAdjustments.UsageAdjustments
 * const plan = yield* adjustments.preview(merchantId, "sub_…", Date.parse("2026-01-15T00:00:00Z"))
 * @since 0.1.0
 */
export class UsageAdjustments extends Context.Service<UsageAdjustments>()("@recur/core/UsageAdjustments", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const drafts = yield* DraftEdits.DraftEdits
    const credits = yield* InvoiceCredits.InvoiceCredits
    const charges = yield* Charges.Charges
    const gateway = yield* Ports.PaymentGateway
    const deps: ExtraInvoices.Deps = {
      storage,
      gateway,
      documents: invoiceDocuments(storage, yield* Secrets.Secrets, yield* Settings.Settings),
      taxed: withTax(yield* Ports.TaxCalculator, storage)
    }
    const subs = storage.repository(Entities.subscription)
    const adjustments = storage.repository(Entities.usageAdjustment)

    /** The period's adjustments, oldest first. */
    const earlierOf = (merchantId: string, subscriptionId: string, start: number) =>
      Effect.gen(function* () {
        const out: Array<UsageAdjustment> = []
        let cursor: string | undefined
        for (;;) {
          const page = yield* Effect.orDie(
            adjustments.list(merchantId, {
              limit: 100,
              starting_after: cursor,
              filters: [{ column: "period", op: "in", values: [periodKey(subscriptionId, start)] }]
            })
          )
          out.push(...page.list)
          if (!page.has_more || page.list.length === 0) break
          cursor = page.list[page.list.length - 1]!.usage_adjustment_id
        }
        return out.sort((a, b) => a.sequence - b.sequence)
      })

    /** What the invoice still holds to credit back: paid less given back; owed less reduced. */
    const heldBy = (merchantId: string, rec: Entities.SubscriptionRecord, inv: Invoice.Invoice) =>
      Effect.gen(function* () {
        const money = (s: string | null) =>
          Result.getOrThrow(Money.parse(s ?? "0", inv.currency, { allowNegative: true })).amount
        if (inv.paid_at !== null && CycleLedger.PAYING.includes(inv.invoice_type)) {
          const c = yield* CycleLedger.collectedBy(storage, merchantId, rec, inv.cycle_index)
          const ledger = c.invoices.find((i) => i.invoice_id === inv.invoice_id)
          const cycleHeld = c.paid.amount - c.givenBack.amount
          const itsHeld = ledger ? ledger.paid.amount - ledger.givenBack.amount : cycleHeld
          const held = itsHeld < cycleHeld ? itsHeld : cycleHeld
          return { method: "credit_balance" as const, held: held > 0n ? held : 0n }
        }
        if (REDUCIBLE.includes(inv.biz_status)) {
          const left = money(inv.amount) - Invoice.preCredited(inv).amount
          return { method: "reduce_invoice" as const, held: left > 0n ? left : 0n }
        }
        return { method: null, held: 0n }
      })

    /** The plan of one billed period of `rec`. */
    const planOf = (merchantId: string, rec: Entities.SubscriptionRecord, period: LateEvents.BilledPeriod) =>
      Effect.gen(function* () {
        const inv = period.invoice
        const currency = inv.currency
        const money = (s: string) => Result.getOrThrow(Money.parse(s, currency, { allowNegative: true })).amount
        const earlier = yield* earlierOf(merchantId, rec.subscription.id, period.start)
        // the ended cycle a renewal billed the usage of is the one before its own
        const cycle = inv.invoice_type === "renewal" ? inv.cycle_index - 1 : inv.cycle_index
        const rated = yield* MetricUsage.charges(storage)(
          merchantId,
          rec,
          { from: period.start, to: period.end },
          paidIndex(rec, cycle)
        )
        const draft = inv.biz_status === "draft"
        const billedLines = inv.lines.filter((l) => sameSpan(l, period.start, period.end))
        // what earlier adjustments billed: applied ones (a pending one has issued nothing)
        const issuedBefore = draft ? [] : earlier.filter((a) => a.kind !== "draft" && a.status === "applied")
        const lines = rated.map((c) => {
          const onInvoice = billedLines.find((l) => keyOf(l.description) === keyOf(c.line.description))
          const billed =
            (onInvoice === undefined ? 0n : money(onInvoice.amount)) +
            issuedBefore
              .flatMap((a) => a.lines)
              .filter((l) => l.price_id === c.price_id)
              .reduce((s, l) => s + money(l.amount), 0n)
          return new AdjustmentLine({
            price_id: c.price_id,
            metric_code: c.metric_code,
            metric_group: c.metric_group,
            value: c.value,
            description: c.line.description,
            billed: Money.format(Money.make(billed, currency)),
            rated: Money.format(c.amount),
            amount: Money.format(Money.make(c.amount.amount - billed, currency))
          })
        })
        const ratedTotal = rated.reduce((s, c) => s + c.amount.amount, 0n)
        // what the period billed: its invoice's lines of the items still rated, and what the
        // adjustments before billed (a capped credit counts as what it credited)
        const billedTotal =
          lines.reduce((s, l) => s + money(l.billed), 0n) -
          issuedBefore.flatMap((a) => a.lines).reduce((s, l) => s + money(l.amount), 0n) +
          issuedBefore.reduce((s, a) => s + money(a.amount), 0n)
        const difference = ratedTotal - billedTotal
        const changed = draft
          ? rated.some((c) => {
              const l = billedLines.find((x) => keyOf(x.description) === keyOf(c.line.description))
              return l === undefined
                ? c.value !== "0"
                : l.description !== c.line.description || money(l.amount) !== c.amount.amount
            })
          : difference !== 0n
        let kind: Plan["kind"] = !changed ? "none" : draft ? "draft" : difference > 0n ? "invoice" : "credit_note"
        let amount = difference
        let method: Plan["method"] = null
        if (kind === "credit_note") {
          const held = yield* heldBy(merchantId, rec, inv)
          method = held.method
          amount = -difference > held.held ? -held.held : difference
          if (amount === 0n) kind = "none"
        }
        return {
          subscription_id: rec.subscription.id,
          customer_id: rec.subscription.customer_id,
          period_start: period.start,
          period_end: period.end,
          invoice: inv,
          kind,
          currency,
          lines,
          difference: Money.make(difference, currency),
          amount: Money.make(amount, currency),
          method,
          earlier,
          charges: rated
        } satisfies Plan
      })

    /** The subscription and its billed period holding `at` (the period starting at `at` for a work subject). */
    const periodAt = (merchantId: string, subscriptionId: string, at: number, param?: string) =>
      Effect.gen(function* () {
        const sv = yield* subs.get(merchantId, subscriptionId)
        if (Option.isNone(sv)) return yield* new Errors.NotFound({ resource: "subscription", id: subscriptionId })
        const periods = (yield* LateEvents.billedPeriods(storage, merchantId, [subscriptionId])).get(subscriptionId)
        const period = periods?.find((p) => p.start <= at && at < p.end)
        if (period === undefined && param !== undefined)
          return yield* new Errors.InvalidParameter({
            param,
            reason: "is in no period an invoice of the subscription billed usage for"
          })
        return { rec: sv.value.value, period }
      })

    /**
     * What re-rating the billed period holding `at` would do, written nowhere: each metric item's
     * billed and rated amounts, the difference, and whether it would refresh the draft, issue an
     * extra invoice or a credit note (`none`: nothing). `NotFound` for an unknown subscription; `InvalidParameter` on
     * `timestamp` when no invoice billed usage for a period holding it.
     */
    const preview = Effect.fn("UsageAdjustments.preview")(function* (
      merchantId: string,
      subscriptionId: string,
      at: number
    ) {
      const { rec, period } = yield* periodAt(merchantId, subscriptionId, at, "timestamp")
      return yield* planOf(merchantId, rec, period!)
    })

    /** Issues what `plan` bills (in the caller's transaction): the draft re-priced, an extra invoice, a credit note. */
    const issue = (
      merchantId: string,
      merchant: Merchant.Merchant,
      rec: Entities.SubscriptionRecord,
      plan: Plan,
      at: number
    ) =>
      Effect.gen(function* () {
        let adjustmentInvoiceId: string | null = null
        let creditNoteId: string | null = null
        let charge = Option.none<{ tradeId: string; token: string }>()
        if (plan.kind === "draft") {
          const fresh = new Map(plan.charges.map((c) => [keyOf(c.line.description), c.line]))
          const kept = new Set<string>()
          yield* drafts.reprice(merchantId, plan.invoice.invoice_id, (lines) => {
            const out: Array<Invoicing.Line> = lines.map((l) => {
              const key = keyOf(l.description)
              const line =
                l.kind === "usage" && l.span?.start === plan.period_start && l.span?.end === plan.period_end
                  ? fresh.get(key)
                  : undefined
              if (line === undefined) return l
              kept.add(key)
              return line
            })
            for (const c of plan.charges) if (!kept.has(keyOf(c.line.description)) && c.value !== "0") out.push(c.line)
            return out
          })
        } else if (plan.kind === "invoice") {
          const issued = yield* ExtraInvoices.issue(deps, {
            merchant,
            rec,
            original: plan.invoice,
            lines: plan.lines
              .filter((l) => l.amount !== Money.format(Money.zero(plan.currency)))
              .map((l) => ({
                kind: "usage" as const,
                description: `${l.description}: adjustment`,
                quantity: 1n,
                amount: Result.getOrThrow(Money.parse(l.amount, plan.currency, { allowNegative: true })),
                span: { start: plan.period_start, end: plan.period_end }
              })),
            metadata: { usage_adjustment_of: plan.invoice.invoice_id },
            at
          })
          adjustmentInvoiceId = issued.invoice.invoice_id
          charge = issued.charge
        } else if (plan.kind === "credit_note") {
          const note = yield* credits.create(merchantId, {
            invoice_id: plan.invoice.invoice_id,
            amount: Money.format(Money.make(-plan.amount.amount, plan.currency)),
            method: plan.method ?? "credit_balance",
            reason: `usage adjustment of ${formatInstant(plan.period_start)} – ${formatInstant(plan.period_end)}`
          })
          creditNoteId = note.credit_note?.invoice_id ?? null
        }
        return { adjustmentInvoiceId, creditNoteId, charge }
      })

    /** The plan's fields of an adjustment record. */
    const fieldsOf = (plan: Plan & { readonly kind: AdjustmentKind }) => ({
      invoice_id: plan.invoice.invoice_id,
      kind: plan.kind,
      currency: plan.currency,
      amount: Money.format(plan.amount),
      lines: plan.lines
    })

    /** Writes an adjustment, its period's sequence unique: a racing second write fails whole. */
    const save = (a: UsageAdjustment, version?: number): Effect.Effect<void, Errors.ConcurrentUpdate> =>
      version === undefined
        ? adjustments.insert(a).pipe(
            Effect.catchTag("UniqueViolation", () =>
              Effect.fail(new Errors.ConcurrentUpdate({ resource: "usage_adjustment", id: a.subscription_id }))
            ),
            Effect.asVoid
          )
        : adjustments.update(a, version).pipe(
            Effect.catchTags({
              UniqueViolation: (e) => Effect.die(e),
              VersionConflict: () =>
                Effect.fail(new Errors.ConcurrentUpdate({ resource: "usage_adjustment", id: a.usage_adjustment_id }))
            }),
            Effect.asVoid
          )

    const announce = (
      merchantId: string,
      type: "v2.usage_adjustment.created" | "v2.usage_adjustment.applied",
      a: UsageAdjustment,
      at: number
    ) =>
      emit(storage, {
        merchant_id: merchantId,
        type,
        business_id: a.usage_adjustment_id,
        schema: UsageAdjustment,
        data: a,
        at
      })

    /**
     * Re-rates one period and settles it, in one transaction: `work` (the worker) issues the
     * difference — or, under `usage_adjustments: "review"`, records it (or revises the period's
     * pending adjustment) without issuing anything; `apply` issues the period's pending one. A
     * draft is always re-priced at once (a draft is itself the merchant's review). The extra
     * invoice's charge is made after the transaction commits.
     */
    const settle = (merchantId: string, subscriptionId: string, periodStart: number, mode: "work" | "apply") =>
      Effect.gen(function* () {
        const merchant = yield* merchants.get(merchantId)
        const done = yield* storage.withTransaction(
          Effect.gen(function* () {
            const at = yield* nowOf(merchant)
            const { rec, period } = yield* periodAt(merchantId, subscriptionId, periodStart)
            if (period === undefined || period.start !== periodStart) return undefined
            const plan = yield* planOf(merchantId, rec, period)
            const pending = plan.earlier.find((a) => a.status === "pending")
            const held = mode === "work" && merchant.usage_adjustments === "review" && plan.kind !== "draft"
            if (plan.kind === "none") {
              // nothing to bill any more: a pending adjustment of the period is withdrawn
              if (pending !== undefined && mode === "work")
                yield* adjustments.remove(merchantId, pending.usage_adjustment_id)
              return undefined
            }
            const kind = plan.kind
            const stored = pending && (yield* Effect.orDie(adjustments.get(merchantId, pending.usage_adjustment_id)))
            if (held && stored !== undefined && Option.isSome(stored)) {
              const revised = Lifecycle.must(
                UsageAdjustmentEntity.move(stored.value.value, "revise", fieldsOf({ ...plan, kind }))
              )
              yield* save(revised, stored.value.version)
              return { adjustment: revised, charge: Option.none<{ tradeId: string; token: string }>() }
            }
            const issued = held
              ? {
                  adjustmentInvoiceId: null,
                  creditNoteId: null,
                  charge: Option.none<{ tradeId: string; token: string }>()
                }
              : yield* issue(merchantId, merchant, rec, plan, at)
            const docs = { adjustment_invoice_id: issued.adjustmentInvoiceId, credit_note_id: issued.creditNoteId }
            if (!held && stored !== undefined && Option.isSome(stored)) {
              const moved = Result.getOrThrow(
                UsageAdjustmentEntity.move(stored.value.value, "apply", { ...fieldsOf({ ...plan, kind }), ...docs })
              )
              yield* save(moved.value, stored.value.version)
              yield* announce(merchantId, "v2.usage_adjustment.applied", moved.value, at)
              return { adjustment: moved.value, charge: issued.charge }
            }
            const adjustment = new UsageAdjustment({
              usage_adjustment_id: yield* Ids.make(Ids.prefixes.usageAdjustment),
              merchant_id: merchantId,
              subscription_id: plan.subscription_id,
              customer_id: plan.customer_id,
              period_start: DateTime.makeUnsafe(plan.period_start),
              period_end: DateTime.makeUnsafe(plan.period_end),
              sequence: (plan.earlier.at(-1)?.sequence ?? 0) + 1,
              status: Result.getOrThrow(Lifecycle.bornAs(Lifecycle.usageAdjustment, held ? "pending" : "applied")),
              ...fieldsOf({ ...plan, kind }),
              ...docs,
              created_at: DateTime.makeUnsafe(at)
            })
            yield* save(adjustment)
            yield* announce(merchantId, "v2.usage_adjustment.created", adjustment, at)
            return { adjustment, charge: issued.charge }
          })
        )
        if (done === undefined) return undefined
        if (Option.isSome(done.charge))
          yield* charges.chargeInvoiceTrade(merchantId, done.charge.value.tradeId, done.charge.value.token)
        return done.adjustment
      })

    /**
     * Re-rates one period (the work item `usage_adjustment`, subject `sub_…@<period start>`) and
     * bills the difference (see `settle`). Running it again finds nothing more to bill.
     * `undefined` when there was nothing to do.
     */
    const adjust = Effect.fn("UsageAdjustments.adjust")(function* (merchantId: string, subject: string) {
      const parsed = LateEvents.parseSubject(subject)
      if (parsed === undefined) return undefined
      return yield* settle(merchantId, parsed.subscription_id, parsed.period_start, "work")
    })

    /**
     * Applies a pending adjustment (`usage_adjustments: "review"`): its period re-rated now and
     * the difference issued (an extra invoice or a credit note), `v2.usage_adjustment.applied`.
     * `NotFound` for an unknown adjustment; `StateConflict` for one already applied, or when the
     * period no longer differs from what it billed.
     */
    const apply = Effect.fn("UsageAdjustments.apply")(function* (merchantId: string, adjustmentId: string) {
      const found = yield* Effect.orDie(adjustments.get(merchantId, adjustmentId))
      if (Option.isNone(found)) return yield* new Errors.NotFound({ resource: "usage_adjustment", id: adjustmentId })
      const a = found.value.value
      if (a.status !== "pending")
        return yield* new Errors.StateConflict({
          resource: "usage_adjustment",
          id: adjustmentId,
          state: a.status,
          reason: "only a pending adjustment is applied"
        })
      const applied = yield* settle(merchantId, a.subscription_id, DateTime.toEpochMillis(a.period_start), "apply")
      if (applied === undefined || applied.usage_adjustment_id !== adjustmentId)
        return yield* new Errors.StateConflict({
          resource: "usage_adjustment",
          id: adjustmentId,
          state: a.status,
          reason: "its period no longer differs from what it billed: nothing to apply"
        })
      return applied
    })

    /** The subscription's adjustments, newest first (`NotFound` for an unknown subscription). */
    const list = Effect.fn("UsageAdjustments.list")(function* (
      merchantId: string,
      subscriptionId: string,
      query: { readonly limit: number; readonly starting_after?: string | undefined }
    ) {
      if (Option.isNone(yield* subs.get(merchantId, subscriptionId)))
        return yield* new Errors.NotFound({ resource: "subscription", id: subscriptionId })
      if (Store.checkPage({ limit: query.limit }) !== undefined)
        return yield* Errors.invalid("limit", "must be 1 to 100")
      return yield* adjustments
        .list(merchantId, {
          limit: query.limit,
          starting_after: query.starting_after,
          filters: [{ column: "subscription_id", op: "in", values: [subscriptionId] }]
        })
        .pipe(
          Effect.catchTags({
            CursorNotFound: () => Effect.fail(Errors.invalid("starting_after", "is not an adjustment of this list")),
            InvalidPage: () => Effect.fail(Errors.invalid("limit", "must be 1 to 100"))
          })
        )
    })

    return { preview, adjust, apply, list } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
