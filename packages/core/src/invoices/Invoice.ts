/**
 * Invoices as the REST API returns them (note the seed's capital-D `Discounts`).
 *
 * @since 0.1.0
 */
import { Effect, Result, Schema } from "effect"
import { Discounts, Metadata, NullableString, NullableTimestamp, Timestamp } from "../kernel/Common.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import { InvoiceStatus } from "../kernel/Lifecycle.js"
import * as Money from "../money/Money.js"
import { DeclineClass } from "../payments/DunningPolicy.js"
import { CollectionMethod } from "./Collection.js"

/**
 * The seed's four invoice types plus `upgrade` (a prorated charge), `one_off` (a customer's
 * pending invoice items billed outside any subscription, `OneOffInvoices`) and `progressive` (a
 * subscription's usage invoiced before its cycle ends, `ProgressiveBilling`).
 *
 * @since 0.1.0
 */
export const InvoiceType = Schema.Literals([
  "initial",
  "trial",
  "renewal",
  "refund",
  "upgrade",
  "one_off",
  "progressive"
])

/**
 * @since 0.1.0
 */
export type InvoiceType = typeof InvoiceType.Type

/**
 * Whether an invoice of `type` is collected on its own, outside any subscription's dunning: a
 * `one_off` invoice, and a `progressive` one (a subscription's usage invoiced early, issue 35) —
 * charged to the customer's card on file, a decline leaves it `failed` and payable on its page.
 *
 * @example
 * isStandalone("progressive") // true
 * @since 0.1.0
 */
export const isStandalone = (type: InvoiceType): boolean => type === "one_off" || type === "progressive"

/**
 * What a line of an invoice is: the cycle's price (`subscription`), a price charged once with the
 * first invoice (`one_time`, a setup fee sold beside the subscription), a `trial`, `usage` in arrears,
 * the two sides of a prorated change, a `refund`, a `discount` (negative), or the customer's
 * `balance`: an amount under the processor's minimum charge carried out of an invoice (negative)
 * and into the next one (positive), or an `invoice_item` (a merchant's one-off charge, `InvoiceItems`).
 *
 * @since 0.1.0
 */
export const LineKind = Schema.Literals([
  "subscription",
  "one_time",
  "trial",
  "usage",
  "proration_credit",
  "proration_charge",
  "refund",
  "discount",
  "balance",
  "invoice_item"
])

/**
 * One line of an invoice document: signed amount (credits and discounts are negative), the
 * quantity, the service period it covers when it covers one, and its shares of the invoice's
 * discounts and tax (`LineShares`).
 *
 * @since 0.1.0
 */
export class InvoiceLine extends Schema.Class<InvoiceLine>("InvoiceLine")({
  kind: LineKind,
  description: Schema.String,
  quantity: Schema.String,
  amount: Schema.String,
  period_start: NullableTimestamp,
  period_end: NullableTimestamp,
  /**
   * This line's share of the invoice's discounts (not negative; the invoice's discount rows and
   * lines no discount applied to: "0.00" or null), set when the invoice is built: the lines'
   * shares sum to the invoice's discounts. Null on `discount` rows and on invoices built before.
   */
  discount_amount: NullableString.pipe(
    Schema.withDecodingDefault(Effect.succeed(null)),
    Schema.withConstructorDefault(Effect.succeed(null))
  ),
  /**
   * This line's share of the invoice's `tax_amount` (inclusive and exclusive), set when the
   * invoice is built: the lines' shares sum to it. Null on `discount` rows and on invoices built
   * before.
   */
  tax_amount: NullableString.pipe(
    Schema.withDecodingDefault(Effect.succeed(null)),
    Schema.withConstructorDefault(Effect.succeed(null))
  )
}) {}

/**
 * One tax on an invoice: the rate (`tax_rate_id` null for a tax from a configured table or a tax
 * service), the amount it was computed on and the tax; `inclusive` taxes are inside the lines'
 * amounts, exclusive ones are added to the total.
 *
 * @since 0.1.0
 */
export class InvoiceTaxLine extends Schema.Class<InvoiceTaxLine>("InvoiceTaxLine")({
  tax_rate_id: NullableString,
  name: Schema.String,
  percentage: Schema.String,
  country: NullableString,
  region: NullableString,
  inclusive: Schema.Boolean,
  taxable_amount: Schema.String,
  amount: Schema.String
}) {}

/**
 * Where dunning stands for an invoice whose renewal charge was declined, as its last decline left
 * it: the processor's `decline_code` and its `decline_class`; `next_action` — `retry` (a retry is
 * scheduled at `next_retry_at`), `new_payment_method` (no retry remains: the invoice waits for the
 * customer's new card, which pays it), or `none` (the subscription was canceled); `ended_by`
 * tells why retrying ended (`decline`: the merchant's policy stops on this class; `retries_exhausted`).
 *
 * @since 0.1.0
 */
export class InvoiceDunning extends Schema.Class<InvoiceDunning>("InvoiceDunning")({
  decline_code: Schema.String,
  decline_class: DeclineClass,
  next_action: Schema.Literals(["retry", "new_payment_method", "none"]),
  next_retry_at: NullableTimestamp,
  ended_by: Schema.NullOr(Schema.Literals(["decline", "retries_exhausted"]))
}) {}

/**
 * An invoice record.
 *
 * @since 0.1.0
 */
export class Invoice extends Schema.Class<Invoice>("Invoice")({
  invoice_id: Schema.String,
  merchant_id: Schema.String,
  trade_id: NullableString,
  subscription_id: NullableString,
  price_id: NullableString,
  customer_id: Schema.String,
  order_id: NullableString,
  original_invoice_id: NullableString,
  refund_order_id: NullableString,
  amount: Schema.String,
  currency: Schema.String,
  biz_status: InvoiceStatus,
  invoice_type: InvoiceType,
  paid_at: NullableTimestamp,
  cycle_index: Schema.Int,
  created_at: Timestamp,
  metadata: Metadata,
  Discounts: Discounts,
  price_version_id: NullableString,
  tax_amount: Schema.String,
  /** The lines before discounts, summed (invoices issued before documents: null). */
  subtotal: NullableString.pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /** Priced lines, then discount lines (invoices issued before documents: none). */
  lines: Schema.Array(InvoiceLine).pipe(Schema.withDecodingDefault(Effect.succeed([]))),
  tax_lines: Schema.Array(InvoiceTaxLine).pipe(Schema.withDecodingDefault(Effect.succeed([]))),
  /**
   * The customer's credit balance this invoice applied, so the document adds up: subtotal −
   * discounts + exclusive tax − `credit_applied` = `amount`. Negative when it collected a debit
   * (an earlier invoice's amount carried to it, also one of its `balance` lines). Null on
   * invoices issued before it was kept.
   */
  credit_applied: NullableString.pipe(
    Schema.withDecodingDefault(Effect.succeed(null)),
    Schema.withConstructorDefault(Effect.succeed(null))
  ),
  /**
   * The merchant's sequential number, assigned as the invoice is issued (`INV-000042`); refund
   * invoices (credit notes) have their own sequence (`INV-CN-000003`). Invoices issued before
   * numbering: null.
   */
  number: NullableString.pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /** The invoice's page for the customer: an unguessable signed link (invoices before documents: null). */
  hosted_invoice_url: NullableString.pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /** The same invoice as a PDF, behind the same signature. */
  invoice_pdf: NullableString.pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /**
   * The parties as the invoice states them, kept when it is issued (numbered) and never changed
   * after: a later change of the customer or the merchant does not change an issued invoice.
   * Null until issued (and on invoices issued before snapshots, which show the current records).
   */
  customer_name: NullableString.pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /** The customer's email at issue (see `customer_name`). */
  customer_email: NullableString.pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /** The customer's billing address at issue, one line (as the customer API writes it). */
  customer_address: NullableString.pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /** The merchant's name at issue. */
  merchant_name: NullableString.pipe(Schema.withDecodingDefault(Effect.succeed(null))),
  /**
   * Whether the charge that paid it is disputed: its trade's `dispute_status` (`none`, `open`,
   * `won`, `lost`, `warning_closed`, `prevented`), moved by the same machine as the trade's.
   */
  dispute_status: Lifecycle.TradeDisputeStatus.pipe(
    Schema.withDecodingDefault(Effect.succeed("none" as const)),
    Schema.withConstructorDefault(Effect.succeed("none" as const))
  ),
  /** Where dunning stands after its last declined renewal charge (see {@link InvoiceDunning}); null when none was declined. */
  dunning: Schema.NullOr(InvoiceDunning).pipe(
    Schema.withDecodingDefault(Effect.succeed(null)),
    Schema.withConstructorDefault(Effect.succeed(null))
  ),
  /**
   * How it is collected: `charge_automatically` (the card on file) or `send_invoice` (issued open
   * with net terms, paid by the customer on its hosted page). Invoices before: `charge_automatically`.
   */
  collection_method: CollectionMethod.pipe(
    Schema.withDecodingDefault(Effect.succeed("charge_automatically" as const)),
    Schema.withConstructorDefault(Effect.succeed("charge_automatically" as const))
  ),
  /** When a sent invoice is due (issue + `days_until_due`); null when charged automatically. */
  due_date: NullableTimestamp.pipe(
    Schema.withDecodingDefault(Effect.succeed(null)),
    Schema.withConstructorDefault(Effect.succeed(null))
  ),
  /**
   * While a draft: when the worker finalises it (the end of the merchant's grace period, Stripe's
   * `automatically_finalizes_at`); null on any other invoice (the answers show it null once the
   * draft is finalised or voided) and on drafts made before it was kept.
   */
  automatically_finalizes_at: NullableTimestamp.pipe(
    Schema.withDecodingDefault(Effect.succeed(null)),
    Schema.withConstructorDefault(Effect.succeed(null))
  ),
  /**
   * What credit notes of method `reduce_invoice` took off the amount owed before it was paid
   * (Stripe's `pre_payment_credit_notes_amount`); null when none did. The invoice's `amount` and
   * lines stay what was issued: what is still owed is `amount` less this (`amount_remaining`).
   */
  pre_payment_credit_notes_amount: NullableString.pipe(
    Schema.withDecodingDefault(Effect.succeed(null)),
    Schema.withConstructorDefault(Effect.succeed(null))
  ),
  /**
   * What credit notes of method `credit_balance` credited to the customer's balance from this
   * invoice after it was paid (Stripe's `post_payment_credit_notes_amount`, without refunds,
   * which the trade counts); null when none did.
   */
  post_payment_credit_notes_amount: NullableString.pipe(
    Schema.withDecodingDefault(Effect.succeed(null)),
    Schema.withConstructorDefault(Effect.succeed(null))
  )
}) {}

/**
 * What `reduce_invoice` credit notes took off an invoice before payment, as money (zero when none).
 *
 * @since 0.1.0
 */
export const preCredited = (invoice: Invoice): Money.Money =>
  Result.getOrElse(Money.parse(invoice.pre_payment_credit_notes_amount ?? "0", invoice.currency), () =>
    Money.make(0n, invoice.currency)
  )

/**
 * What credit notes to the balance took off a paid invoice, as money (zero when none).
 *
 * @since 0.1.0
 */
export const postCredited = (invoice: Invoice): Money.Money =>
  Result.getOrElse(Money.parse(invoice.post_payment_credit_notes_amount ?? "0", invoice.currency), () =>
    Money.make(0n, invoice.currency)
  )

/**
 * What an invoice asks to be paid (Stripe's `amount_due`): its `amount` less the credit notes
 * that reduced it before payment; a paid invoice's is what was collected.
 *
 * @since 0.1.0
 */
export const amountDue = (invoice: Invoice): Money.Money => {
  const amount = Result.getOrElse(Money.parse(invoice.amount, invoice.currency, { allowNegative: true }), () =>
    Money.make(0n, invoice.currency)
  )
  const due = amount.amount - preCredited(invoice).amount
  return Money.make(due > 0n ? due : 0n, invoice.currency)
}

/**
 * What is still owed on an invoice (Stripe's `amount_remaining`): a draft's or an unpaid issued
 * invoice's amount less the credit notes that reduced it; nothing once paid or voided.
 *
 * @since 0.1.0
 */
export const amountRemaining = (invoice: Invoice): Money.Money => {
  const status = Lifecycle.invoiceStatusOf(invoice.biz_status)
  return status === "paid" || status === "void" ? Money.make(0n, invoice.currency) : amountDue(invoice)
}

/**
 * An invoice as the API and the facade return it: the record with its Stripe-style `status`
 * (`draft`, `open`, `paid`, `void`, `uncollectible`; a credit note `issued`) derived from
 * `biz_status`, which keeps the seed's values (the mapping: {@link Lifecycle.invoiceStatusOf}, docs/invoices.md).
 *
 * @since 0.1.0
 */
export class InvoiceView extends Invoice.extend<InvoiceView>("Invoice")({
  /** The Stripe-style status, derived from `biz_status` (never stored). */
  status: Lifecycle.InvoiceStatusView,
  /**
   * What is still owed (Stripe's `amount_remaining`), derived: `amount` less the credit notes
   * that reduced it while unpaid; `0` once paid or voided.
   */
  amount_remaining: Schema.String
}) {}

/**
 * The stored values a list filtered by derived `status` matches: the `biz_status` values and the
 * `invoice_type` values whose every pair has one of `statuses` ({@link Lifecycle.invoiceDocumentStatusOf}).
 * `undefined` when the statuses asked together are no such product (`void` with `paid`: a void
 * credit note is void, a paid credit note is not paid) — the caller refuses them.
 *
 * @example
 * statusFilter(["paid"]) // { biz_status: ["success", "refunded", "partially_refunded"], invoice_type: [every type but "refund"] }
 * @since 0.1.0
 */
export const statusFilter = (
  statuses: ReadonlyArray<Lifecycle.InvoiceStatusView>
):
  | { readonly biz_status: ReadonlyArray<Lifecycle.InvoiceStatus>; readonly invoice_type: ReadonlyArray<InvoiceType> }
  | undefined => {
  const wanted = new Set<string>(statuses)
  const pairs = Lifecycle.InvoiceStatus.literals.flatMap((biz_status) =>
    InvoiceType.literals.map((invoice_type) => ({ biz_status, invoice_type }))
  )
  const hit = pairs.filter((p) => wanted.has(Lifecycle.invoiceDocumentStatusOf(p)))
  const bizs = Lifecycle.InvoiceStatus.literals.filter((b) => hit.some((p) => p.biz_status === b))
  const types = InvoiceType.literals.filter((t) => hit.some((p) => p.invoice_type === t))
  return hit.length === bizs.length * types.length ? { biz_status: bizs, invoice_type: types } : undefined
}

/**
 * An invoice with its derived `status` ({@link InvoiceView}).
 *
 * @since 0.1.0
 */
export const viewOf = (invoice: Invoice): InvoiceView =>
  new InvoiceView(
    {
      ...invoice,
      status: Lifecycle.invoiceDocumentStatusOf(invoice),
      automatically_finalizes_at: invoice.biz_status === "draft" ? invoice.automatically_finalizes_at : null,
      amount_remaining: Money.format(amountRemaining(invoice))
    },
    { disableChecks: true }
  )

/**
 * Moves an invoice's `dispute_status` with its trade's (the {@link Lifecycle.tradeDispute}
 * machine; the trade's moves emit the events).
 *
 * @since 0.1.0
 */
export const moveDispute = (
  invoice: Invoice,
  trigger: Lifecycle.TradeDisputeTrigger
): Result.Result<Lifecycle.Moved<Invoice>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(
    Lifecycle.tradeDispute,
    invoice.dispute_status,
    trigger,
    (to) => new Invoice({ ...invoice, dispute_status: to }, { disableChecks: true })
  )

/**
 * Whether an invoice has been issued: numbered, its parties kept, its links signed. A checkout's
 * first invoice is issued when it is paid; one that never is (declined, abandoned) is voided
 * unissued and takes no number.
 *
 * @since 0.1.0
 */
export const isIssued = (invoice: Invoice): boolean => invoice.number !== null

/**
 * The invoice a subscription's next renewal will issue, if nothing changes before it: the next
 * cycle's price (a scheduled price change and a pending quantity applied), usage so far for a
 * usage-billed price, the discounts still running, the customer's credit and the tax at the
 * customer's address — computed by the same code the renewal runs, and written nowhere.
 *
 * @since 0.1.0
 */
export class UpcomingInvoice extends Schema.Class<UpcomingInvoice>("UpcomingInvoice")({
  subscription_id: Schema.String,
  customer_id: Schema.String,
  price_id: Schema.String,
  invoice_type: InvoiceType,
  cycle_index: Schema.Int,
  /** When the renewal runs (the subscription's `next_invoice_date`). */
  invoice_date: Timestamp,
  currency: Schema.String,
  subtotal: Schema.String,
  discount_amount: Schema.String,
  tax_amount: Schema.String,
  /** Customer credit the invoice will consume. */
  credit_applied: Schema.String,
  /** What will be charged. */
  amount: Schema.String,
  lines: Schema.Array(InvoiceLine),
  tax_lines: Schema.Array(InvoiceTaxLine)
}) {}

/**
 * The number of the `n`th document of a series: the prefix, `CN` for credit notes, and at least
 * six digits.
 *
 * @example
 * numberOf("INV", "renewal", 42) // "INV-000042"
 * numberOf("INV", "refund", 3)   // "INV-CN-000003"
 * @since 0.1.0
 */
export const numberOf = (prefix: string, type: InvoiceType, n: number): string =>
  `${prefix}-${type === "refund" ? "CN-" : ""}${String(n).padStart(6, "0")}`

/**
 * The counter series a document's number is taken from: credit notes apart from invoices, and a
 * new series when the merchant changes its prefix.
 *
 * @since 0.1.0
 */
export const seriesOf = (prefix: string, type: InvoiceType): string =>
  `${type === "refund" ? "credit_note" : "invoice"}:${prefix}`

/**
 * Moves an invoice's `biz_status` by `trigger` (the {@link Lifecycle.invoice} machine), with the
 * fields that change with it. The only way an invoice's status changes.
 *
 * @since 0.1.0
 */
export const move = (
  invoice: Invoice,
  trigger: Lifecycle.InvoiceTrigger,
  patch: Partial<Omit<Invoice, "biz_status">> = {}
): Result.Result<Lifecycle.Moved<Invoice>, Lifecycle.InvalidTransition> =>
  Lifecycle.moveBy(
    Lifecycle.invoice,
    invoice.biz_status,
    trigger,
    (to) => new Invoice({ ...invoice, ...patch, biz_status: to }, { disableChecks: true })
  )
