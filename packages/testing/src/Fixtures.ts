/**
 * Record builders for tests: valid records with fresh ids, overridable field by field.
 *
 * @since 0.1.0
 */
import { Common, type Entities, Ids, Invoice, Subscriptions } from "@recur/core"
import { DateTime, Effect } from "effect"

/**
 * A fresh merchant id.
 *
 * @since 0.1.0
 */
export const merchantId = Ids.make(Ids.prefixes.merchant)

/**
 * A customer record of `merchant_id`.
 *
 * @since 0.1.0
 */
export const customer = (merchant_id: string, overrides: Partial<Entities.CustomerRecord> = {}) =>
  Effect.map(
    Ids.make(Ids.prefixes.customer),
    (id): Entities.CustomerRecord => ({
      id,
      merchant_id,
      email: `${id}@example.com`,
      payer_id: null,
      name: "Ada",
      phone: null,
      description: null,
      address: null,
      metadata: {},
      email_subscription: null,
      type: "guest",
      created_at: Ids.timestampOf(id),
      updated_at: Ids.timestampOf(id),
      deleted_at: null,
      ...overrides
    })
  )

/**
 * An invoice of `merchant_id`.
 *
 * @since 0.1.0
 */
export const invoice = (
  merchant_id: string,
  overrides: Partial<ConstructorParameters<typeof Invoice.Invoice>[0]> = {}
) =>
  Effect.map(
    Ids.make(Ids.prefixes.invoice),
    (id) =>
      new Invoice.Invoice({
        invoice_id: id,
        merchant_id,
        trade_id: null,
        subscription_id: "sub_01jd0000000000000000000000",
        price_id: null,
        customer_id: "cus_01jd0000000000000000000000",
        order_id: null,
        original_invoice_id: null,
        refund_order_id: null,
        amount: "30.00",
        currency: "USD",
        biz_status: "open",
        invoice_type: "renewal",
        paid_at: null,
        cycle_index: 0,
        created_at: DateTime.makeUnsafe(Ids.timestampOf(id)),
        metadata: {},
        Discounts: new Common.Discounts({ current_period: [] }),
        price_version_id: null,
        tax_amount: "0.00",
        subtotal: null,
        lines: [],
        tax_lines: [],
        number: null,
        hosted_invoice_url: null,
        invoice_pdf: null,
        customer_name: null,
        customer_email: null,
        customer_address: null,
        merchant_name: null,
        ...overrides
      })
  )

/**
 * Usage events from records in the API's shape (`subscription_id`, `usage_count`, `event_id`,
 * `timestamp`), for tests that write batches compactly.
 *
 * @since 0.1.0
 */
export const usageEventsOf = (
  records: ReadonlyArray<{
    readonly subscription_id: string
    readonly usage_count: number
    readonly event_id?: string | undefined
    readonly timestamp?: number | undefined
  }>
): ReadonlyArray<Subscriptions.UsageEvent> =>
  records.map((r) =>
    Subscriptions.usageOf(r.subscription_id, r.usage_count, {
      ...(r.event_id !== undefined ? { eventId: r.event_id } : {}),
      ...(r.timestamp !== undefined ? { at: r.timestamp } : {})
    })
  )
