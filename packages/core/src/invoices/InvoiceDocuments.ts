/**
 * Invoice documents: a draft as the invoice's lines and tax lines, a new invoice born from a
 * draft, and the issuing of invoices (gapless numbers, the parties' snapshot, signed links).
 * Formerly part of `internal/records`.
 */
import { Effect, Option, Result } from "effect"
import { Discounts } from "../kernel/Common.js"
import * as Customer from "../customers/Customer.js"
import * as Entities from "../kernel/Entities.js"
import * as Ids from "../kernel/Ids.js"
import { dt, type StorageService } from "../kernel/ServiceSupport.js"
import * as Invoice from "./Invoice.js"
import type * as Invoicing from "./Invoicing.js"
import type { Span } from "./Invoicing.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Money from "../money/Money.js"
import { sharesOf } from "./LineShares.js"
import type * as Secrets from "../tenants/Secrets.js"
import type * as Settings from "../tenants/Settings.js"

/**
 * A draft's document fields: its lines (priced, then discounts), subtotal and tax lines; each
 * priced line with its share of the draft's discounts and tax ({@link sharesOf}), computed here,
 * once, as the invoice is built.
 */
export const documentOf = (
  draft: Invoicing.Draft,
  period: Span | undefined,
  usagePeriod?: Span | undefined
): Pick<Invoice.Invoice, "subtotal" | "lines" | "tax_lines"> => {
  const shares = sharesOf(draft)
  return {
    subtotal: Money.format(draft.subtotal),
    lines: [
      ...draft.lines.map((l, n) => {
        const share = shares[n]!
        const span =
          l.span ??
          (l.kind === "usage"
            ? usagePeriod
            : l.kind === "refund" || l.kind === "balance" || l.kind === "one_time" || l.kind === "invoice_item"
              ? undefined
              : period)
        return new Invoice.InvoiceLine(
          {
            kind: l.kind,
            description: l.description,
            quantity: l.quantity.toString(),
            amount: Money.format(l.amount),
            period_start: span ? dt(span.start) : null,
            period_end: span ? dt(span.end) : null,
            discount_amount: Money.format(share.discount),
            tax_amount: Money.format(share.tax)
          },
          { disableChecks: true }
        )
      }),
      ...draft.discounts
        .filter((d) => d.amount.amount > 0n)
        .map(
          (d) =>
            new Invoice.InvoiceLine(
              {
                kind: "discount",
                description: d.discount_code !== "" ? `Discount ${d.discount_code}` : "Discount",
                quantity: "1",
                amount: Money.format(Money.negate(d.amount)),
                period_start: null,
                period_end: null,
                discount_amount: null,
                tax_amount: null
              },
              { disableChecks: true }
            )
        )
    ],
    tax_lines: draft.tax_lines.map(
      ({ taxable, amount, ...rate }) =>
        new Invoice.InvoiceTaxLine(
          { ...rate, taxable_amount: Money.format(taxable), amount: Money.format(amount) },
          { disableChecks: true }
        )
    )
  }
}

/** An issued invoice's tax lines as money (the inverse of {@link documentOf}'s). */
export const taxLinesOf = (invoice: Invoice.Invoice): ReadonlyArray<Invoicing.TaxLine> =>
  invoice.tax_lines.map(({ taxable_amount, amount, ...rate }) => ({
    ...rate,
    taxable: Result.getOrThrow(Money.parse(taxable_amount, invoice.currency, { allowNegative: true })),
    amount: Result.getOrThrow(Money.parse(amount, invoice.currency, { allowNegative: true }))
  }))

/**
 * Issuing invoices: their numbers, in order, from the merchant's gapless counters, the parties as
 * they stand now (the customer's name, email and address, the merchant's name: the snapshot the
 * page, the PDF and the API show from then on), and their signed links (the hosted page and the
 * PDF). Call `issue` in the transaction that makes the invoices final — inserting them, or, for
 * a checkout's first invoice, recording its payment — so a rollback returns the numbers.
 */
export const invoiceDocuments = (
  storage: StorageService,
  secrets: Secrets.Secrets["Service"],
  settings: Pick<Settings.Settings["Service"], "publicUrl">
) => {
  const base = settings.publicUrl.replace(/\/+$/, "")
  const customers = storage.repository(Entities.customer)
  type Issuer = Pick<Merchant.Merchant, "merchant_id" | "invoice_prefix" | "name">
  const issue = (merchant: Issuer, invoices: ReadonlyArray<Invoice.Invoice>) =>
    Effect.gen(function* () {
      const next = new Map<string, number>()
      const seriesOf = (i: Invoice.Invoice) => Invoice.seriesOf(merchant.invoice_prefix, i.invoice_type)
      for (const series of new Set(invoices.map(seriesOf))) {
        const count = invoices.filter((i) => seriesOf(i) === series).length
        next.set(series, yield* storage.counters.take(merchant.merchant_id, series, count))
      }
      const parties = new Map<string, Pick<Invoice.Invoice, "customer_name" | "customer_email" | "customer_address">>()
      for (const id of new Set(invoices.map((i) => i.customer_id))) {
        const found = yield* Effect.orDie(customers.get(merchant.merchant_id, id))
        const c = Option.getOrUndefined(found)?.value
        parties.set(id, {
          customer_name: c?.name ?? null,
          customer_email: c?.email ?? null,
          customer_address: c?.address ? Customer.formatAddress(c.address) || null : null
        })
      }
      return yield* Effect.forEach(invoices, (i) =>
        Effect.map(secrets.sign(`invoice:${i.merchant_id}:${i.invoice_id}`), (token) => {
          const n = next.get(seriesOf(i))!
          next.set(seriesOf(i), n + 1)
          const page = `${base}/invoice/${i.invoice_id}/${token}`
          return new Invoice.Invoice(
            {
              ...i,
              ...parties.get(i.customer_id)!,
              merchant_name: merchant.name,
              number: Invoice.numberOf(merchant.invoice_prefix, i.invoice_type, n),
              hosted_invoice_url: page,
              invoice_pdf: `${page}/pdf`
            },
            { disableChecks: true }
          )
        })
      )
    })
  return {
    issue,
    issueOne: (merchant: Issuer, invoice: Invoice.Invoice) => Effect.map(issue(merchant, [invoice]), (all) => all[0]!),
    /** Whether `token` is the signature of this invoice's links (a previous master key's within its grace). */
    verify: (merchantId: string, invoiceId: string, token: string) =>
      secrets.verify(`invoice:${merchantId}:${invoiceId}`, token)
  }
}

/**
 * A new invoice from a draft, born `open` and moved at once: `charge` (a charge is on its way:
 * `pending`) or `settle_without_charge` (nothing to collect: `success`); `null` leaves it `open`
 * (a sent invoice, or a one-off invoice of a customer with no card on file, paid on its hosted
 * page) — or born a `draft` (`trigger` `draft`: a renewal's invoice in the merchant's grace period,
 * finalised later by `InvoiceActions.finalize`).
 */
export const newInvoice = (input: {
  readonly merchant_id: string
  readonly draft: Invoicing.Draft
  readonly trade_id: string | null
  readonly subscription_id: string | null
  readonly price_id: string | null
  readonly price_version_id: string | null
  readonly customer_id: string
  readonly order_id: string | null
  /** The invoice's first move; null leaves it `open` (a sent invoice, paid later on its page); `draft` keeps it a draft. */
  readonly trigger: "charge" | "settle_without_charge" | "draft" | null
  readonly at: number
  /** The service period the cycle's lines cover (Unix ms), when they cover one. */
  readonly period?: Span | undefined
  /** The period usage lines bill in arrears (the one before), when known. */
  readonly usagePeriod?: Span | undefined
}) => {
  // a draft (the merchant's grace period) is born in the machine's initial state, else one step on
  const bornAs = input.trigger === "draft" ? "draft" : "open"
  return Effect.map(
    Ids.make(Ids.prefixes.invoice),
    (invoice_id) =>
      new Invoice.Invoice(
        {
          invoice_id,
          merchant_id: input.merchant_id,
          trade_id: input.trade_id,
          subscription_id: input.subscription_id,
          price_id: input.price_id,
          customer_id: input.customer_id,
          order_id: input.order_id,
          original_invoice_id: Option.getOrNull(input.draft.original_invoice_id),
          refund_order_id: null,
          amount: Money.format(input.draft.total),
          currency: input.draft.currency,
          biz_status: Result.getOrThrow(Lifecycle.bornAs(Lifecycle.invoice, bornAs)),
          invoice_type: input.draft.invoice_type,
          paid_at: null,
          cycle_index: input.draft.cycle_index,
          created_at: dt(input.at),
          metadata: {},
          Discounts: new Discounts({
            current_period: input.draft.discounts.map((d) => ({
              discount_id: d.discount_id,
              discount_code: d.discount_code,
              discount_amount: Money.format(d.amount)
            }))
          }),
          price_version_id: input.price_version_id,
          tax_amount: Money.format(input.draft.tax),
          credit_applied: Money.format(input.draft.creditApplied),
          ...documentOf(input.draft, input.period, input.usagePeriod),
          number: null,
          hosted_invoice_url: null,
          invoice_pdf: null,
          customer_name: null,
          customer_email: null,
          customer_address: null,
          merchant_name: null
        },
        { disableChecks: true }
      )
  ).pipe(
    Effect.map((open) =>
      input.trigger === null || input.trigger === "draft"
        ? open
        : Lifecycle.must(
            Invoice.move(
              open,
              input.trigger,
              input.trigger === "settle_without_charge" ? { paid_at: dt(input.at) } : {}
            )
          )
    )
  )
}
