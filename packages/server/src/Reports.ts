/**
 * What the CLI shows an operator of one merchant's data: a subscription with its next invoice and
 * the history of its events (`recur subscription show`), a table of invoices (`recur invoices
 * list`), and CSV exports of customers, subscriptions, invoices and refunds over a date range
 * (`recur export`). Everything reads through the storage port, one merchant at a time, page by
 * page (the lists' cursor, at most 100 records a page): an export is a `Stream` of CSV chunks, one
 * per page, so it never holds more than a page of records however many it writes.
 *
 * Amounts: each as minor units (an integer), the currency, and the decimal amount written from
 * the integer with the currency's ISO 4217 exponent (`Money.format`), never through a float.
 *
 * @since 0.1.0
 */
import { Billing, Entities, type Invoice, Lifecycle, Merchants, Money, Renewals, Store } from "@recur/core"
import { DateTime, Effect, Option, Result, Stream } from "effect"
import * as Csv from "./Csv.js"

/**
 * What `recur export` writes.
 *
 * @since 0.1.0
 */
export type ExportKind = "customers" | "subscriptions" | "invoices" | "refunds"

/**
 * The kinds `recur export` knows.
 *
 * @since 0.1.0
 */
export const exportKinds: ReadonlyArray<ExportKind> = ["customers", "subscriptions", "invoices", "refunds"]

/**
 * A creation range, Unix ms: from `from` (included) to `to` (excluded).
 *
 * @since 0.1.0
 */
export interface Range {
  readonly from?: number | undefined
  readonly to?: number | undefined
}

/** Records a page reads at most (the storage port's limit). */
const PAGE = 100

/**
 * Parses a command line instant: a date (`2026-01-01`, midnight UTC) or an ISO 8601 instant with
 * its offset (`2026-01-01T12:00:00Z`). Undefined when it is neither.
 *
 * @since 0.1.0
 */
export const parseInstant = (text: string): number | undefined => {
  const t = text.trim()
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(t)) return undefined
  const ms = Date.parse(t.length === 10 ? `${t}T00:00:00Z` : t)
  return Number.isNaN(ms) ? undefined : ms
}

/**
 * Every record of one merchant's `entity` matching `query`, newest first, as a stream of pages:
 * the next page is read only when the one before has been consumed.
 *
 * @since 0.1.0
 */
export const pages = <A, I>(
  entity: Store.Entity<A, I>,
  merchantId: string,
  query: Omit<Store.ListQuery, "limit" | "starting_after" | "ending_before"> = {},
  pageSize: number = PAGE
): Stream.Stream<ReadonlyArray<A>, never, Store.Storage> =>
  Stream.unwrap(
    Effect.map(Effect.service(Store.Storage), (storage) => {
      const repo = storage.repository(entity)
      return Stream.paginate(undefined as string | undefined, (after) =>
        Effect.map(
          Effect.orDie(repo.list(merchantId, { ...query, limit: pageSize, starting_after: after })),
          (page) => {
            const last = page.list[page.list.length - 1]
            return [
              page.list.length === 0 ? [] : [page.list],
              page.has_more && last !== undefined ? Option.some(entity.id(last)) : Option.none()
            ] as const
          }
        )
      )
    })
  )

const created = (range: Range): Store.CreatedRange => ({
  ...(range.from !== undefined ? { gte: range.from } : {}),
  ...(range.to !== undefined ? { lt: range.to } : {})
})

const iso = (dt: DateTime.Utc | null): string | null => (dt === null ? null : DateTime.formatIso(dt))
const isoMs = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString())

/**
 * An amount as the export writes it: minor units and the decimal from them (ISO 4217 exponent).
 * An amount that does not parse in its currency keeps its stored text in the decimal column.
 */
const amount = (value: string | null, currency: string, sign: 1 | -1 = 1): readonly [Csv.Cell, Csv.Cell] => {
  if (value === null) return [null, null]
  const parsed = Money.parse(value, currency, { allowNegative: true })
  if (Result.isFailure(parsed)) return [null, value]
  const money = sign === -1 && parsed.success.amount !== 0n ? Money.negate(parsed.success) : parsed.success
  return [Csv.raw(String(money.amount)), Csv.raw(Money.format(money))]
}

/** A credit note (`invoice_type` `refund`) gives back: its amounts are negative, so a column sums to the net. */
const invoiceSign = (i: Invoice.Invoice): 1 | -1 => (i.invoice_type === "refund" ? -1 : 1)

interface Sheet<A> {
  readonly entity: Store.Entity<A, any>
  readonly header: ReadonlyArray<string>
  readonly row: (a: A) => ReadonlyArray<Csv.Cell>
}

const customers: Sheet<Entities.CustomerRecord> = {
  entity: Entities.customer,
  header: ["customer_id", "payer_id", "email", "name", "phone", "type", "country", "created_at", "deleted_at"],
  row: (c) => [
    c.id,
    c.payer_id,
    c.email,
    c.name,
    c.phone,
    c.type,
    c.address?.country ?? null,
    isoMs(c.created_at),
    isoMs(c.deleted_at)
  ]
}

const subscriptions: Sheet<Entities.SubscriptionRecord> = {
  entity: Entities.subscription,
  header: [
    "subscription_id",
    "customer_id",
    "status",
    "price_id",
    "quantity",
    "billing_cycle_unit",
    "currency",
    "credit_balance_minor",
    "credit_balance",
    "current_period_start",
    "current_period_end",
    "next_invoice_date",
    "cancel_at_period_end",
    "created_at"
  ],
  row: (r) => {
    const s = r.subscription
    return [
      s.id,
      s.customer_id,
      s.status,
      s.price_id,
      Csv.raw(s.quantity),
      s.billing_cycle_unit,
      r.currency,
      ...amount(s.credit_balance, r.currency),
      iso(s.current_period_start),
      iso(s.current_period_end),
      iso(s.next_invoice_date),
      s.cancel_at_period_end,
      iso(s.created_at)
    ]
  }
}

const invoices: Sheet<Invoice.Invoice> = {
  entity: Entities.invoice,
  header: [
    "invoice_id",
    "number",
    "customer_id",
    "subscription_id",
    "invoice_type",
    "status",
    "currency",
    "amount_minor",
    "amount",
    "tax_minor",
    "tax",
    "cycle_index",
    "created_at",
    "paid_at"
  ],
  row: (i) => [
    i.invoice_id,
    i.number,
    i.customer_id,
    i.subscription_id,
    i.invoice_type,
    i.biz_status,
    i.currency,
    ...amount(i.amount, i.currency, invoiceSign(i)),
    ...amount(i.tax_amount, i.currency, invoiceSign(i)),
    i.cycle_index,
    iso(i.created_at),
    iso(i.paid_at)
  ]
}

const refunds: Sheet<Entities.RefundRecord> = {
  entity: Entities.refund,
  header: [
    "refund_id",
    "trade_id",
    "invoice_id",
    "status",
    "currency",
    "amount_minor",
    "amount",
    "reason",
    "created_at",
    "finished_at"
  ],
  row: (r) => {
    const f = r.refund
    return [
      f.refund_id,
      f.trade_id,
      f.invoice_id,
      f.refund_status,
      f.currency,
      ...amount(f.refund_amount, f.currency),
      f.reason,
      iso(f.created_at),
      iso(f.finished_at)
    ]
  }
}

const sheets: { readonly [K in ExportKind]: Sheet<any> } = { customers, subscriptions, invoices, refunds }

/**
 * The CSV of one merchant's records of `kind` created in `range`, newest first: the header line,
 * then one chunk per page of records (RFC 4180, CRLF; see `Csv`). Nothing is read before the
 * stream is pulled, and a page only once the chunk before it is consumed.
 *
 * @since 0.1.0
 */
export const exportCsv = (
  kind: ExportKind,
  merchantId: string,
  range: Range
): Stream.Stream<string, never, Store.Storage> => {
  const sheet = sheets[kind]
  return Stream.concat(
    Stream.succeed(Csv.row(sheet.header)),
    Stream.map(pages(sheet.entity, merchantId, { created: created(range) }), (page) =>
      page.map((record) => Csv.row(sheet.row(record))).join("")
    )
  )
}

/**
 * The merchant, or a failure naming the one not found (`No such merchant: …`).
 *
 * @since 0.1.0
 */
export const merchant = (merchantId: string) => Merchants.Merchants.use((m) => m.get(merchantId))

/**
 * Filters of {@link invoiceTable}.
 *
 * @since 0.1.0
 */
export interface InvoiceFilters extends Range {
  readonly customer?: string | undefined
  readonly subscription?: string | undefined
  readonly status?: ReadonlyArray<string> | undefined
  /** At most this many, newest first (1 to 10000). */
  readonly limit: number
}

/**
 * Whether every status given is an invoice status.
 *
 * @since 0.1.0
 */
export const invoiceStatuses: ReadonlyArray<string> = Lifecycle.InvoiceStatus.literals

/**
 * The merchant's invoices matching the filters, newest first, at most `limit`.
 *
 * @since 0.1.0
 */
export const invoiceList = (merchantId: string, filters: InvoiceFilters) =>
  pages(Entities.invoice, merchantId, {
    created: created(filters),
    filters: [
      ...(filters.customer !== undefined
        ? [{ column: "customer_id", op: "in", values: [filters.customer] } as const]
        : []),
      ...(filters.subscription !== undefined
        ? [{ column: "subscription_id", op: "in", values: [filters.subscription] } as const]
        : []),
      ...(filters.status !== undefined && filters.status.length > 0
        ? [{ column: "biz_status", op: "in", values: filters.status } as const]
        : [])
    ]
  }).pipe(
    Stream.flattenIterable,
    Stream.take(filters.limit),
    Stream.runCollect,
    Effect.map((chunk) => Array.from(chunk))
  )

/**
 * Rows as a table: columns padded to their widest cell, two spaces apart.
 *
 * @since 0.1.0
 */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd()
  return [line(header), ...rows.map(line)].join("\n")
}

/**
 * Invoices as `recur invoices list` prints them.
 *
 * @since 0.1.0
 */
export const invoiceTable = (list: ReadonlyArray<Invoice.Invoice>): string =>
  table(
    ["INVOICE", "NUMBER", "CREATED", "STATUS", "TYPE", "AMOUNT", "CURRENCY", "CUSTOMER", "SUBSCRIPTION"],
    list.map((i) => [
      i.invoice_id,
      i.number ?? "-",
      iso(i.created_at) ?? "-",
      i.biz_status,
      i.invoice_type,
      i.amount,
      i.currency,
      i.customer_id,
      i.subscription_id ?? "-"
    ])
  )

/**
 * One subscription as an operator inspects it: the record, what it charges, the invoice its
 * next renewal will issue (none when it will not renew), its latest ten invoices, and every event
 * written about it, its invoices and the trades that paid them, oldest first.
 *
 * @since 0.1.0
 */
export const subscriptionDetail = (merchantId: string, subscriptionId: string) =>
  Effect.gen(function* () {
    yield* merchant(merchantId)
    const record = (yield* Billing.Billing.use((b) => b.getSubscriptionRecord(merchantId, subscriptionId))).value
    const upcoming = yield* Renewals.Renewals.use((r) => r.upcoming(merchantId, subscriptionId))
    const all = yield* invoiceList(merchantId, { subscription: subscriptionId, limit: Number.MAX_SAFE_INTEGER })
    // the events about the subscription, its invoices and the trades that paid them
    const subjects = [
      ...new Set([
        subscriptionId,
        ...(record.subscription.source_trade_id !== null ? [record.subscription.source_trade_id] : []),
        ...all.flatMap((i) => (i.trade_id !== null ? [i.invoice_id, i.trade_id] : [i.invoice_id]))
      ])
    ]
    const events: Array<Entities.EventRecord> = []
    for (let i = 0; i < subjects.length; i += 100) {
      const found = yield* pages(Entities.webhookEvent, merchantId, {
        filters: [{ column: "business_id", op: "in", values: subjects.slice(i, i + 100) }]
      }).pipe(Stream.flattenIterable, Stream.runCollect)
      events.push(...found)
    }
    events.sort((a, b) => a.created_at - b.created_at || a.sequence - b.sequence || (a.id < b.id ? -1 : 1))
    const { discounts } = yield* Billing.Billing.use((b) => b.getSubscription(merchantId, subscriptionId))
    return {
      record,
      discounts: discounts ?? [],
      upcoming: Option.getOrNull(upcoming),
      invoices: all.slice(0, 10),
      events
    }
  })

/**
 * A subscription's detail as text.
 *
 * @since 0.1.0
 */
export const subscriptionText = (detail: Effect.Success<ReturnType<typeof subscriptionDetail>>): string => {
  const { record, discounts, upcoming, invoices: latest, events } = detail
  const s = record.subscription
  const plan = record.plan_basis
  const lines = [
    `Subscription ${s.id}`,
    `  status             ${s.status}${s.cancel_at_period_end ? " (cancels at period end)" : ""}`,
    `  customer           ${s.customer_id}`,
    `  price              ${s.price_id} (version ${s.price_version_id}, ${s.price_type}, every ${s.billing_cycle_unit})`,
    `  quantity           ${s.quantity}${s.quantity_unit !== null ? ` ${s.quantity_unit}` : ""}`,
    // the proration basis: what the current period was billed at (after discounts), not the list price
    ...(plan !== null ? [`  billed this period ${plan} ${record.currency}`] : []),
    ...discounts.map(
      (d) =>
        `  discount           ${d.discount_code ?? d.discount_id}: ${d.percent_off !== null ? `${d.percent_off}%` : `${d.amount_off} ${d.currency}`} off, ${d.duration}${d.cycles_remaining !== null ? `, ${d.cycles_remaining} cycle(s) after this one` : ""}`
    ),
    `  currency           ${record.currency}`,
    `  credit balance     ${s.credit_balance} ${record.currency}`,
    `  current period     ${iso(s.current_period_start) ?? "-"} → ${iso(s.current_period_end) ?? "-"}`,
    `  cycle              ${s.cycle_index}${s.total_cycles !== null ? ` of ${s.total_cycles}` : ""}`,
    `  created            ${iso(s.created_at)}`,
    ...(s.cancel_at !== null ? [`  cancel at          ${iso(s.cancel_at)}`] : []),
    ...(s.pending_change !== null
      ? [`  pending change     quantity ${s.pending_change.quantity} from cycle ${s.pending_change.cycle_index}`]
      : []),
    "",
    upcoming === null
      ? "Next invoice: none (the subscription will not renew)"
      : `Next invoice: ${upcoming.amount} ${upcoming.currency} on ${iso(upcoming.invoice_date)} (${upcoming.invoice_type}, cycle ${upcoming.cycle_index}; subtotal ${upcoming.subtotal}, discount ${upcoming.discount_amount}, tax ${upcoming.tax_amount}, credit ${upcoming.credit_applied})`,
    "",
    `Invoices (latest ${latest.length}):`,
    ...(latest.length === 0
      ? ["  none"]
      : invoiceTable(latest)
          .split("\n")
          .map((l) => `  ${l}`)),
    "",
    `Events (${events.length}, oldest first):`,
    ...(events.length === 0
      ? ["  none"]
      : table(
          ["AT", "TYPE", "ABOUT", "EVENT"],
          events.map((e) => [isoMs(e.created_at) ?? "-", e.type, e.business_id, e.id])
        )
          .split("\n")
          .map((l) => `  ${l}`))
  ]
  return lines.join("\n")
}

/**
 * A subscription's detail as `--json` prints it: the charge token the processor keeps for it is
 * not shown (only whether there is one), as the API never shows it.
 *
 * @since 0.1.0
 */
export const subscriptionJson = (detail: Effect.Success<ReturnType<typeof subscriptionDetail>>) => ({
  ...detail,
  record: { ...detail.record, payment_token: detail.record.payment_token === null ? null : "[redacted]" }
})
