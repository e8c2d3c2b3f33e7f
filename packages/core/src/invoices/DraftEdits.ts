/**
 * Editing a draft invoice (a renewal's, in the merchant's grace period): one-off lines added,
 * lines removed, a discount of the merchant applied — its totals, discounts, tax, credit and each
 * line's shares recomputed by the code that builds invoices (`TaxRates.withTax` over
 * `Invoicing.total`, `InvoiceDocuments.documentOf`). An issued invoice is never edited.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import { Discounts as DiscountsField } from "../kernel/Common.js"
import * as Discount from "../discounts/Discount.js"
import * as Discounts from "../discounts/Discounts.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Invoice from "./Invoice.js"
import { documentOf } from "./InvoiceDocuments.js"
import * as Invoicing from "./Invoicing.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Money from "../money/Money.js"
import * as PendingItems from "./PendingItems.js"
import type { InvoiceItem } from "./InvoiceItem.js"
import * as Ports from "../kernel/Ports.js"
import * as Store from "../kernel/Store.js"
import { discountRules } from "../subscriptions/SubscriptionTerms.js"
import { must, msOf, nowOf } from "../kernel/ServiceSupport.js"
import { withTax } from "../taxes/TaxRates.js"
import { writes } from "../subscriptions/SubscriptionStore.js"
import * as Subscription from "../subscriptions/Subscription.js"

/** Most lines a draft may have, and most one-off lines one edit adds. */
export const MAX_DRAFT_LINES = 100
/** Most one-off lines one edit adds. */
export const MAX_ADDED_LINES = 20
/** Most units of a one-off line. */
export const MAX_LINE_QUANTITY = 10_000

/**
 * An edit of a draft: one-off lines to add (`amount` the unit price, a decimal string in the
 * invoice's currency; the line's amount is `amount` × `quantity`), lines to remove (their
 * positions among the draft's `lines`), a discount of the merchant to apply.
 *
 * @since 0.1.0
 */
export interface DraftEdit {
  readonly add_lines?:
    | ReadonlyArray<{ readonly description: string; readonly amount: string; readonly quantity?: number | undefined }>
    | undefined
  readonly remove_lines?: ReadonlyArray<number> | undefined
  readonly discount_id?: string | undefined
}

/** The kinds of line an edit may remove (a carried balance or a proration is the customer's due). */
const REMOVABLE: ReadonlyArray<string> = ["subscription", "one_time", "usage", "trial", "invoice_item"]

const bad = (param: string, reason: string) => new Errors.InvalidParameter({ param, reason })
/** A refused field of one entry of a list (the adapter names it in its own words). */
const badEntry = (param: string, index: number, field: string, reason: string) =>
  new Errors.InvalidParameter({ param, reason, entry: { index, field } })

/**
 * A draft's priced lines as the invoice was built from them: every line but its discount rows
 * and carried balance (a carried debit is re-added by the total).
 *
 * @since 0.1.0
 */
export const pricedLines = (i: Invoice.Invoice): ReadonlyArray<Invoicing.Line> => {
  const money = (s: string) => Result.getOrThrow(Money.parse(s, i.currency, { allowNegative: true }))
  return i.lines
    .filter((l) => l.kind !== "discount" && l.kind !== "balance")
    .map((l) => ({
      kind: l.kind as Invoicing.Line["kind"],
      description: l.description,
      quantity: BigInt(l.quantity),
      amount: money(l.amount),
      span:
        l.period_start !== null && l.period_end !== null
          ? { start: msOf(l.period_start), end: msOf(l.period_end) }
          : undefined
    }))
}

/**
 * The draft edits service.
 *
 * @since 0.1.0
 */
export class DraftEdits extends Context.Service<DraftEdits>()("@recur/core/DraftEdits", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const discounts = yield* Discounts.Discounts
    const taxed = withTax(yield* Ports.TaxCalculator, storage)
    const invoices = storage.repository(Entities.invoice)
    const subs = storage.repository(Entities.subscription)
    const { saveSub } = writes(storage)

    /**
     * The invoice items a draft billed behind its `invoice_item` lines at `positions`: the k-th
     * such line is the k-th item it billed, oldest first (as the renewal listed them), when its
     * description, quantity and amount agree; else the first not yet taken that agrees.
     */
    const itemsOf = (
      merchantId: string,
      invoiceId: string,
      all: ReadonlyArray<Invoice.InvoiceLine>,
      positions: ReadonlySet<number>
    ) =>
      Effect.gen(function* () {
        const wanted = [...positions].filter((p) => all[p]?.kind === "invoice_item")
        if (wanted.length === 0) return [] as Array<InvoiceItem>
        const billed = [...(yield* PendingItems.billedBy(storage, merchantId, invoiceId))]
        const itemLines = all.flatMap((l, n) => (l.kind === "invoice_item" ? [n] : []))
        const agrees = (item: InvoiceItem, line: Invoice.InvoiceLine) =>
          item.description === line.description &&
          String(item.quantity) === line.quantity &&
          item.amount === line.amount
        const taken = new Set<string>()
        const out: Array<InvoiceItem> = []
        for (const p of wanted) {
          const line = all[p]!
          const byOrder = billed[itemLines.indexOf(p)]
          const item =
            byOrder !== undefined && !taken.has(byOrder.invoice_item_id) && agrees(byOrder, line)
              ? byOrder
              : billed.find((b) => !taken.has(b.invoice_item_id) && agrees(b, line))
          if (item !== undefined) {
            taken.add(item.invoice_item_id)
            out.push(item)
          }
        }
        return out
      })

    /** The draft's subscription and discounts, recomputed on new lines (the subscription's terms; one no longer on it keeps its amount). */
    const rulesOf = (merchantId: string, i: Invoice.Invoice) =>
      Effect.gen(function* () {
        const money = (s: string) => Result.getOrThrow(Money.parse(s, i.currency, { allowNegative: true }))
        const sv =
          i.subscription_id === null ? undefined : Option.getOrUndefined(yield* subs.get(merchantId, i.subscription_id))
        // the discounts it had, recomputed on the new lines (the subscription's terms; one no
        // longer on the subscription keeps the amount it came to), then the one applied now
        const had = i.Discounts.current_period
        const terms = sv ? discountRules(sv.value, i.cycle_index) : []
        const rules: Array<Invoicing.DiscountRule> = had.map(
          (d) =>
            terms.find((r) => r.discount_id === d.discount_id) ??
            Invoicing.DiscountRule.Amount({
              discount_id: d.discount_id,
              discount_code: d.discount_code,
              amount: money(d.discount_amount)
            })
        )
        return { sv, rules }
      })

    /**
     * Recomputes a draft on its new priced `lines` (totals, discounts, tax, credit, each line's
     * shares) and saves it at the version read; the credit it no longer uses goes back to the
     * subscription's balance; `released` invoice items are pending again.
     */
    const recompute = (
      merchantId: string,
      iv: Store.Versioned<Invoice.Invoice>,
      sv: Store.Versioned<Entities.SubscriptionRecord> | undefined,
      lines: ReadonlyArray<Invoicing.Line>,
      rules: ReadonlyArray<Invoicing.DiscountRule>,
      released: ReadonlyArray<InvoiceItem>,
      at: number,
      tooLarge: () => Errors.InvalidParameter
    ) =>
      Effect.gen(function* () {
        const i = iv.value
        const invoiceId = i.invoice_id
        const money = (s: string) => Result.getOrThrow(Money.parse(s, i.currency, { allowNegative: true }))
        const credit = money(i.credit_applied ?? "0")
        const zero = Money.zero(i.currency)
        const recomputed = yield* taxed(
          {
            invoice_type: i.invoice_type,
            cycle_index: i.cycle_index,
            currency: i.currency,
            lines: [...lines],
            subtotal: zero,
            discounts: [],
            tax: zero,
            tax_lines: [],
            creditApplied: zero,
            total: zero,
            original_invoice_id: Option.none()
          },
          merchantId,
          i.customer_id,
          credit,
          rules
        )
        if (!Money.isWithinBounds(recomputed.total) || !Money.isWithinBounds(recomputed.subtotal))
          return yield* tooLarge()
        const edited = new Invoice.Invoice(
          {
            ...i,
            amount: Money.format(recomputed.total),
            tax_amount: Money.format(recomputed.tax),
            credit_applied: Money.format(recomputed.creditApplied),
            Discounts: new DiscountsField({
              current_period: recomputed.discounts.map((d) => ({
                discount_id: d.discount_id,
                discount_code: d.discount_code,
                discount_amount: Money.format(d.amount)
              }))
            }),
            ...documentOf(recomputed, undefined)
          },
          { disableChecks: true }
        )
        yield* invoices.update(edited, iv.version).pipe(
          Effect.catchTags({
            VersionConflict: () => Effect.fail(new Errors.ConcurrentUpdate({ resource: "invoice", id: invoiceId })),
            UniqueViolation: (e) => Effect.die(e)
          })
        )
        // credit it no longer uses returns to the subscription's balance
        const back = credit.amount > 0n ? credit.amount - recomputed.creditApplied.amount : 0n
        if (back > 0n && sv !== undefined) {
          const balance = money(sv.value.subscription.credit_balance)
          yield* saveSub(
            {
              ...sv.value,
              subscription: new Subscription.Subscription(
                {
                  ...sv.value.subscription,
                  credit_balance: Money.format(Money.make(balance.amount + back, i.currency))
                },
                { disableChecks: true }
              )
            },
            sv.version,
            at
          )
        }
        yield* PendingItems.releaseItems(storage, released)
        return Invoice.viewOf(edited)
      })

    /**
     * Applies `edit` to a draft: checked whole first (a bad field is `InvalidParameter` naming it,
     * an issued invoice a `StateConflict`: nothing changes), then recomputed and saved in one
     * transaction; the credit it no longer uses goes back to the subscription's balance.
     *
     * @example
     * yield* edits.edit(merchantId, "inv_…", { add_lines: [{ description: "Setup", amount: "25.00" }] })
     */
    const edit = Effect.fn("DraftEdits.edit")(function* (merchantId: string, invoiceId: string, input: DraftEdit) {
      const merchant = yield* merchants.get(merchantId)
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const iv = yield* Effect.flatMap(Effect.orDie(invoices.get(merchantId, invoiceId)), (o) =>
            must(o, "invoice", invoiceId)
          )
          const i = iv.value
          if (i.biz_status !== "draft")
            return yield* new Errors.StateConflict({
              resource: "invoice",
              id: invoiceId,
              state: i.biz_status,
              reason: "an issued invoice never changes: only a draft can be edited"
            })
          // proration credits larger than the cycle: the rest it credits to the balance is the
          // renewal's own settlement, which an edit would have to redo — refused, nothing changes
          if (i.lines.some((l) => l.kind === "refund"))
            return yield* new Errors.StateConflict({
              resource: "invoice",
              id: invoiceId,
              state: i.biz_status,
              reason:
                "this draft credits the customer's balance with proration credit it cannot absorb: it is not edited"
            })
          // the draft's priced lines as the invoice was built from them (a carried debit is re-added by the total)
          let lines: Array<Invoicing.Line> = [...pricedLines(i)]
          const wanted = input.remove_lines ?? []
          const removed = new Set<number>()
          for (const [n, index] of wanted.entries()) {
            const line = Number.isSafeInteger(index) ? i.lines[index] : undefined
            if (line === undefined)
              return yield* badEntry("remove_lines", n, "", `${index} is not the position of a line of the draft`)
            if (!REMOVABLE.includes(line.kind))
              return yield* badEntry(
                "remove_lines",
                n,
                "",
                `line ${index} is a ${line.kind} line, which an edit does not remove (it is the customer's due or the invoice's computation)`
              )
            if (removed.has(index)) return yield* badEntry("remove_lines", n, "", `line ${index} is named twice`)
            removed.add(index)
          }
          const keptPositions = i.lines.flatMap((l, n) => (l.kind !== "discount" && l.kind !== "balance" ? [n] : []))
          lines = lines.filter((_, n) => !removed.has(keptPositions[n]!))
          // the invoice items behind the removed `invoice_item` lines: pending again (released)
          const releasedItems = yield* itemsOf(merchantId, invoiceId, i.lines, removed)
          const adds = input.add_lines ?? []
          if (adds.length > MAX_ADDED_LINES) return yield* bad("add_lines", `at most ${MAX_ADDED_LINES} lines at once`)
          for (const [n, add] of adds.entries()) {
            if (typeof add.description !== "string" || add.description.trim() === "" || add.description.length > 200)
              return yield* badEntry("add_lines", n, "description", "must be 1 to 200 characters")
            const quantity = add.quantity ?? 1
            if (!Number.isSafeInteger(quantity) || quantity < 1 || quantity > MAX_LINE_QUANTITY)
              return yield* badEntry(
                "add_lines",
                n,
                "quantity",
                `must be a whole number from 1 to ${MAX_LINE_QUANTITY}`
              )
            const unit = typeof add.amount === "string" ? Money.parse(add.amount, i.currency) : undefined
            if (unit !== undefined && Result.isFailure(unit) && unit.failure._tag === "InvalidAmount") {
              if (unit.failure.reason === "too_many_decimals")
                return yield* badEntry(
                  "add_lines",
                  n,
                  "amount",
                  `${i.currency} has ${Money.exponentOf(i.currency)} decimal places`
                )
            }
            if (unit === undefined || Result.isFailure(unit) || unit.success.amount <= 0n)
              return yield* badEntry("add_lines", n, "amount", `must be a positive amount in ${i.currency}`)
            const amount = Money.make(unit.success.amount * BigInt(quantity), i.currency)
            if (!Money.isWithinBounds(amount))
              return yield* badEntry(
                "add_lines",
                n,
                "amount",
                "amount × quantity exceeds the largest amount an invoice line carries"
              )
            lines.push({ kind: "one_time", description: add.description.trim(), quantity: BigInt(quantity), amount })
          }
          if (lines.length > MAX_DRAFT_LINES)
            return yield* bad("add_lines", `a draft has at most ${MAX_DRAFT_LINES} lines`)
          // a draft keeps at least one line (an invoice of nothing is voided, not edited)
          if (lines.length === 0)
            return yield* bad(
              "remove_lines",
              "would remove every line of the draft: a draft keeps at least one line (void it instead)"
            )
          const { sv, rules } = yield* rulesOf(merchantId, i)
          if (input.discount_id !== undefined) {
            const found = yield* discounts
              .get(merchantId, input.discount_id)
              .pipe(
                Effect.catchTag("NotFound", () => Effect.fail(bad("discount_id", "is not a discount of this merchant")))
              )
            if (found.status !== "active") return yield* bad("discount_id", `is ${found.status}, not active`)
            if (found.discount_type === "fixed_amount" && found.currency !== i.currency)
              return yield* bad("discount_id", `is in ${found.currency}, the invoice in ${i.currency}`)
            if (i.Discounts.current_period.some((d) => d.discount_id === found.discount_id))
              return yield* bad("discount_id", "is already applied to this invoice")
            rules.push(Discount.discountRule(found))
          }
          return yield* recompute(merchantId, iv, sv, lines, rules, releasedItems, at, () =>
            bad(
              input.add_lines !== undefined && input.add_lines.length > 0 ? "add_lines" : "remove_lines",
              "the edited invoice's total exceeds the largest amount an invoice carries"
            )
          )
        })
      )
    })

    /**
     * Re-prices a draft's lines (a late meter event re-rating its usage, `UsageAdjustments`):
     * `replace` maps its priced lines ({@link pricedLines}) to the new ones; the draft is
     * recomputed as an edit is (discounts, tax, credit, shares) and saved at the version read,
     * in the caller's transaction. An issued invoice is a `StateConflict`; so is a draft that
     * credits the balance with proration credit (the renewal's own settlement).
     *
     * @example
     * yield* edits.reprice(merchantId, "inv_…", (lines) => lines.map((l) => (l.kind === "usage" ? rerated(l) : l)))
     */
    const reprice = Effect.fn("DraftEdits.reprice")(function* (
      merchantId: string,
      invoiceId: string,
      replace: (lines: ReadonlyArray<Invoicing.Line>) => ReadonlyArray<Invoicing.Line>
    ) {
      const merchant = yield* merchants.get(merchantId)
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const at = yield* nowOf(merchant)
          const iv = yield* Effect.flatMap(Effect.orDie(invoices.get(merchantId, invoiceId)), (o) =>
            must(o, "invoice", invoiceId)
          )
          const i = iv.value
          if (i.biz_status !== "draft" || i.lines.some((l) => l.kind === "refund"))
            return yield* new Errors.StateConflict({
              resource: "invoice",
              id: invoiceId,
              state: i.biz_status,
              reason: "only a draft without proration credit to the balance is re-priced"
            })
          const { sv, rules } = yield* rulesOf(merchantId, i)
          return yield* recompute(merchantId, iv, sv, replace(pricedLines(i)), rules, [], at, () =>
            bad("lines", "the re-priced invoice's total exceeds the largest amount an invoice carries")
          )
        })
      )
    })

    return { edit, reprice } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
