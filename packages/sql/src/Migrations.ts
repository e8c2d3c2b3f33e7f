/**
 * Recur's schema, as migrations bundled in code (`Migrator.fromRecord`) with their own
 * migrations table `recur_migrations`, so a host application can run them inside its own
 * database next to its own tables.
 *
 * @since 0.1.0
 */
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import { Data, Effect } from "effect"

const entityTable = (table: string, columns: string) => `
  create table if not exists ${table} (
    id text primary key,
    merchant_id text not null,
    created_at timestamptz not null,
    version integer not null default 1,
    data jsonb not null${columns ? `,\n    ${columns}` : ""}
  );
  create index if not exists ${table}_page on ${table} (merchant_id, created_at desc, id desc);`

/**
 * The first schema: one table per entity (indexed columns + the record as `jsonb`), the
 * outbox, the work queue and idempotency records. Every table is keyed by `merchant_id`;
 * unique indexes make duplicates impossible.
 */
const initial = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const statements = [
    entityTable("recur_merchants", "mode text not null"),
    entityTable("recur_api_keys", "lookup_hash text not null, status text not null"),
    // An API key hash identifies one key across all merchants (authentication finds the tenant by it).
    `create unique index if not exists api_key_lookup_hash on recur_api_keys (lookup_hash);`,
    entityTable(
      "recur_customers",
      "email text, payer_id text, type text not null, deleted boolean not null default false"
    ),
    `create unique index if not exists customer_payer_id on recur_customers (merchant_id, payer_id);`,
    `create index if not exists recur_customers_email on recur_customers (merchant_id, email);`,
    entityTable("recur_categories", "default_key text, status text not null"),
    `create unique index if not exists category_default on recur_categories (merchant_id, default_key);`,
    entityTable(
      "recur_products",
      "status text not null, category_id text not null, price_ids jsonb not null default '[]'"
    ),
    `create index if not exists recur_products_price_ids on recur_products using gin (price_ids);`,
    entityTable("recur_prices", "product_id text not null, merchant_price_id text, status text not null"),
    `create unique index if not exists price_merchant_price_id on recur_prices (merchant_id, merchant_price_id);`,
    entityTable("recur_price_versions", "price_id text not null, product_id text not null, biz_status text not null"),
    `create index if not exists recur_price_versions_price on recur_price_versions (merchant_id, price_id);`,
    entityTable("recur_checkout_sessions", "status text not null, customer_id text"),
    entityTable(
      "recur_subscriptions",
      "status text not null, customer_id text not null, order_id text, source_trade_id text, billing_cycle_unit text not null, price_id text not null"
    ),
    `create index if not exists recur_subscriptions_customer on recur_subscriptions (merchant_id, customer_id);`,
    entityTable(
      "recur_trades",
      "trade_status text not null, order_id text, customer_id text not null, amount_minor bigint not null, currency text not null"
    ),
    `create index if not exists recur_trades_customer on recur_trades (merchant_id, customer_id);`,
    entityTable(
      "recur_invoices",
      "trade_id text, order_id text, subscription_id text, customer_id text not null, biz_status text not null, invoice_type text not null, cycle_index integer not null, amount_minor bigint not null, currency text not null, cycle_key text"
    ),
    // One initial/trial/renewal invoice per (subscription, cycle, type): cycle_key is
    // "<subscription_id>:<cycle_index>:<invoice_type>" for those types and null for refunds and upgrades.
    `create unique index if not exists invoice_cycle on recur_invoices (merchant_id, cycle_key);`,
    `create index if not exists recur_invoices_subscription on recur_invoices (merchant_id, subscription_id);`,
    entityTable(
      "recur_refunds",
      "trade_id text not null, refund_status text not null, amount_minor bigint not null, currency text not null"
    ),
    `create index if not exists recur_refunds_trade on recur_refunds (merchant_id, trade_id);`,
    entityTable(
      "recur_usage_records",
      "subscription_id text not null, event_id text not null, cycle_index integer not null"
    ),
    `create unique index if not exists usage_event on recur_usage_records (merchant_id, subscription_id, event_id);`,
    entityTable("recur_webhook_endpoints", "status text not null"),
    entityTable(
      "recur_events",
      "business_id text not null, type text not null, sequence integer not null, dispatched boolean not null default false, lease_owner text, lease_until bigint not null default 0"
    ),
    `create index if not exists recur_events_due on recur_events (created_at, id) where not dispatched;`,
    `create index if not exists recur_events_business on recur_events (merchant_id, business_id, sequence);`,
    entityTable("recur_webhook_deliveries", "event_id text not null, endpoint_id text not null, status text not null"),
    `create unique index if not exists delivery_event_endpoint on recur_webhook_deliveries (merchant_id, event_id, endpoint_id);`,
    `create table if not exists recur_work_items (
      merchant_id text not null,
      kind text not null,
      subject_id text not null,
      due_at bigint not null,
      attempts integer not null default 0,
      lease_owner text,
      lease_until bigint not null default 0,
      primary key (merchant_id, kind, subject_id)
    );`,
    `create index if not exists recur_work_items_due on recur_work_items (due_at);`,
    `create table if not exists recur_idempotency (
      merchant_id text not null,
      request_id text not null,
      fingerprint text not null,
      state text not null,
      status integer,
      response text,
      created_at bigint not null,
      expires_at bigint not null,
      primary key (merchant_id, request_id)
    );`
  ]
  // one statement per query: the extended protocol takes a single statement
  for (const statement of statements.flatMap((s) => s.split(";")))
    if (statement.trim() !== "") yield* sql.unsafe(statement)
})

/** Work items belong to a lane: real time (`live`) or a sandbox merchant's frozen clock (`frozen`). */
const workLanes = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table recur_work_items add column if not exists lane text not null default 'live'`
  yield* sql`create index if not exists recur_work_items_lane_due on recur_work_items (lane, due_at)`
})

/** A refund remembers the Request-Id that created it, so a retry after a crash finds it. */
const refundRequestKeys = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table recur_refunds add column if not exists request_key text`
  yield* sql`create index if not exists recur_refunds_request_key on recur_refunds (merchant_id, request_key) where request_key is not null`
})

/** Discounts: one per row, the code unique per merchant. */
const discounts = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of entityTable("recur_discounts", "status text not null, code text").split(";"))
    if (statement.trim() !== "") yield* sql.unsafe(statement)
  yield* sql`create unique index if not exists discount_code on recur_discounts (merchant_id, code)`
})

/** Tax rates: one active rate per (merchant, country, region), by its jurisdiction key. */
const taxRates = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of entityTable(
    "recur_tax_rates",
    "status text not null, country text not null, jurisdiction text"
  ).split(";"))
    if (statement.trim() !== "") yield* sql.unsafe(statement)
  yield* sql`create unique index if not exists tax_rate_jurisdiction on recur_tax_rates (merchant_id, jurisdiction)`
})

/** Gapless document counters (invoice and credit note numbers), one row per merchant and series. */
const counters = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`create table if not exists recur_counters (
    merchant_id text not null,
    series text not null,
    last bigint not null,
    primary key (merchant_id, series)
  )`
})

/** Customer portal sessions. */
const portalSessions = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of entityTable("recur_portal_sessions", "customer_id text not null").split(";"))
    if (statement.trim() !== "") yield* sql.unsafe(statement)
})

/** Processor webhook events acted on (redeliveries are answered without acting again). */
const processorEvents = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of entityTable("recur_processor_events", "").split(";"))
    if (statement.trim() !== "") yield* sql.unsafe(statement)
})

/**
 * A redemption for every discount a stored subscription carries, dated at the subscription's
 * creation (what was redeemed before redemptions were recorded; idempotent). Part of
 * `0009_discount_redemptions`.
 *
 * @since 0.1.0
 */
export const backfillRedemptions = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`insert into recur_discount_redemptions
      (id, merchant_id, created_at, data, discount_id, customer_id, subscription_id)
    select r.id, s.merchant_id, s.created_at,
      jsonb_build_object(
        'redemption_id', r.id,
        'merchant_id', s.merchant_id,
        'discount_id', d.value->>'discount_id',
        'customer_id', s.data->'subscription'->>'customer_id',
        'subscription_id', s.id,
        'redeemed_at', s.data->'subscription'->>'created_at'
      ),
      d.value->>'discount_id', s.data->'subscription'->>'customer_id', s.id
    from recur_subscriptions s
      cross join lateral jsonb_array_elements(coalesce(s.data->'discounts', '[]'::jsonb)) d
      cross join lateral (select 'rdm_' || substr(md5(s.id || ':' || (d.value->>'discount_id')), 1, 24) as id) r
    on conflict (id) do nothing`)
})

/**
 * Discount redemptions: one durable row per redemption (discount, customer, subscription, when),
 * counted by the per-customer limit; the discounts subscriptions already carry are recorded.
 */
const discountRedemptions = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of entityTable(
    "recur_discount_redemptions",
    "discount_id text not null, customer_id text not null, subscription_id text"
  ).split(";"))
    if (statement.trim() !== "") yield* sql.unsafe(statement)
  yield* sql`create index if not exists recur_discount_redemptions_by on recur_discount_redemptions (merchant_id, discount_id, customer_id)`
  yield* backfillRedemptions
})

/**
 * Processors' own customers (Stripe's `cus_…`) of ours, per processor account: kept when made and
 * read back by id (`Entities.processorCustomer`).
 */
const processorCustomers = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of entityTable(
    "recur_processor_customers",
    "customer_id text not null, account_id text not null, reference text not null"
  ).split(";"))
    if (statement.trim() !== "") yield* sql.unsafe(statement)
  yield* sql`create index if not exists recur_processor_customers_customer on recur_processor_customers (merchant_id, customer_id)`
  yield* sql`create index if not exists recur_processor_customers_reference on recur_processor_customers (merchant_id, reference)`
})

/**
 * The day's reference exchange rates of a public feed (the ECB's), kept so that a restart does not
 * fetch them again (`Entities.fxSnapshot`): one row per feed.
 */
const fxSnapshots = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of entityTable("recur_fx_snapshots", "").split(";"))
    if (statement.trim() !== "") yield* sql.unsafe(statement)
})

/**
 * Private prices and catalog migrations: a price's `audience` (`public`, or the one customer a
 * private price is sold to: what catalog lists filter on), and the tables of price migrations and
 * their lines (one per subscription moved).
 */
const priceMigrations = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table recur_prices add column if not exists audience text not null default 'public'`
  yield* sql`create index if not exists recur_prices_audience on recur_prices (merchant_id, audience)`
  for (const statement of [
    ...entityTable("recur_price_migrations", "price_id text not null, status text not null").split(";"),
    ...entityTable("recur_price_migration_lines", "migration_id text not null, outcome text not null").split(";")
  ])
    if (statement.trim() !== "") yield* sql.unsafe(statement)
  yield* sql`create index if not exists recur_price_migration_lines_by on recur_price_migration_lines (merchant_id, migration_id, outcome)`
})

/**
 * Every item's price of a subscription (`item_price_ids`, the base item's first), so that a
 * catalog migration finds the subscriptions holding a price as an add-on item too; filled in for
 * the subscriptions already stored.
 */
const subscriptionItemPrices = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table recur_subscriptions add column if not exists item_price_ids jsonb not null default '[]'`
  yield* sql.unsafe(`update recur_subscriptions set item_price_ids =
      jsonb_build_array(data->'subscription'->>'price_id') || coalesce(
        (select jsonb_agg(e->'price_id') from jsonb_array_elements(data->'extra_items') e), '[]'::jsonb)`)
})

/**
 * Customer notifications: the notification outbox (`Entities.notification`), one message per
 * cause (`cause_key` unique per merchant, so a replayed cause writes no second message).
 */
const notifications = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of entityTable(
    "recur_notifications",
    "cause_key text not null, status text not null, kind text not null"
  ).split(";"))
    if (statement.trim() !== "") yield* sql.unsafe(statement)
  yield* sql`create unique index if not exists notification_cause on recur_notifications (merchant_id, cause_key)`
  yield* sql`create index if not exists recur_notifications_status on recur_notifications (merchant_id, status)`
})

/**
 * The customer balance ledger (issue 34): append-only entries (`Entities.balanceTransaction`) and
 * one running balance per customer and currency (`Entities.customerBalance`), updated at its
 * version so that concurrent writers never lose an update.
 */
const customerBalances = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of [
    ...entityTable(
      "recur_customer_balance_transactions",
      "customer_id text not null, currency text not null, source_type text not null"
    ).split(";"),
    ...entityTable("recur_customer_balances", "customer_id text not null, currency text not null").split(";")
  ])
    if (statement.trim() !== "") yield* sql.unsafe(statement)
  yield* sql`create index if not exists recur_customer_balance_transactions_customer on recur_customer_balance_transactions (merchant_id, customer_id, created_at desc, id desc)`
  yield* sql`create index if not exists recur_customer_balances_customer on recur_customer_balances (merchant_id, customer_id)`
})

/**
 * Invoice items (`Entities.invoiceItem`): a customer's one-off charges, pending until a one-off
 * invoice bills them (`status` `invoiced`, with its `invoice_id`).
 */
const invoiceItems = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of entityTable(
    "recur_invoice_items",
    "customer_id text not null, subscription_id text, status text not null, invoice_id text, currency text not null"
  ).split(";"))
    if (statement.trim() !== "") yield* sql.unsafe(statement)
  yield* sql`create index if not exists recur_invoice_items_customer on recur_invoice_items (merchant_id, customer_id, status)`
})

/**
 * Billable metrics (`Entities.billableMetric`, issue 35): one per row, the code unique per
 * merchant (archived metrics keep theirs).
 */
const billableMetrics = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of entityTable("recur_billable_metrics", "status text not null, code text not null").split(";"))
    if (statement.trim() !== "") yield* sql.unsafe(statement)
  yield* sql`create unique index if not exists billable_metric_code on recur_billable_metrics (merchant_id, code)`
})

/**
 * Usage alerts (`Entities.usageAlert`, listed by subscription) and each subscription's usage
 * billing record (`Entities.usageBilling`, keyed by the subscription's id: its progressive
 * billing threshold and what progressive invoices billed in the open cycle), issue 35.
 */
const usageAlerts = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of [
    ...entityTable("recur_usage_alerts", "subscription_id text not null, customer_id text not null").split(";"),
    ...entityTable("recur_usage_billing", "").split(";")
  ])
    if (statement.trim() !== "") yield* sql.unsafe(statement)
  yield* sql`create index if not exists recur_usage_alerts_subscription on recur_usage_alerts (merchant_id, subscription_id)`
})

/**
 * Meter events (issue 35): their own append-only table, not entity documents. One row per
 * (merchant, transaction id); `seq` is the ingestion order (the tie-break of `latest` and
 * `weighted_sum`); instants are Unix ms. `numbers` holds the properties whose values are
 * numeric (normalized decimal text), checked once at insertion, so that aggregations cast them
 * without testing each row. The customer index serves every aggregation (one customer's metric
 * over a period, in time and ingestion order), the `seq` index the newest-first list.
 */
const meterEvents = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`create table if not exists recur_meter_events (
    id text primary key,
    seq bigint generated always as identity,
    merchant_id text not null,
    transaction_id text not null,
    customer_id text not null,
    subscription_id text,
    code text not null,
    timestamp bigint not null,
    properties jsonb not null,
    numbers jsonb not null,
    created_at bigint not null,
    voided_at bigint,
    constraint recur_meter_events_transaction unique (merchant_id, transaction_id)
  )`
  yield* sql`create index if not exists recur_meter_events_customer on recur_meter_events (merchant_id, customer_id, code, timestamp, seq)`
  yield* sql`create index if not exists recur_meter_events_page on recur_meter_events (merchant_id, seq desc)`
})

/**
 * Prepaid credits (issue 35): credit grants (`Entities.creditGrant`, a top-up's payment key
 * unique per merchant so that a payment is granted once) and one automatic top-up setting per
 * customer (`Entities.autoTopUp`, keyed by the customer's id).
 */
const creditGrants = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of [
    ...entityTable(
      "recur_credit_grants",
      "customer_id text not null, currency text not null, status text not null, payment_key text"
    ).split(";"),
    ...entityTable("recur_auto_top_ups", "").split(";")
  ])
    if (statement.trim() !== "") yield* sql.unsafe(statement)
  yield* sql`create unique index if not exists credit_grant_payment_key on recur_credit_grants (merchant_id, payment_key)`
  yield* sql`create index if not exists recur_credit_grants_customer on recur_credit_grants (merchant_id, customer_id, status)`
})

/**
 * Usage adjustments (`Entities.usageAdjustment`, issue 35): one row per re-rating of a closed
 * period; `period_key` (subscription, period start, sequence) is unique, so two re-ratings of
 * one period cannot both record theirs.
 */
const usageAdjustments = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const statement of entityTable(
    "recur_usage_adjustments",
    "subscription_id text not null, period text not null, period_key text not null"
  ).split(";"))
    if (statement.trim() !== "") yield* sql.unsafe(statement)
  yield* sql`create unique index if not exists usage_adjustment_period on recur_usage_adjustments (merchant_id, period_key)`
  yield* sql`create index if not exists recur_usage_adjustments_period on recur_usage_adjustments (merchant_id, period)`
})

/**
 * Every migration, by id and name.
 *
 * @since 0.1.0
 */
export const migrations = {
  "0001_initial": initial,
  "0002_work_lanes": workLanes,
  "0003_refund_request_keys": refundRequestKeys,
  "0004_discounts": discounts,
  "0005_tax_rates": taxRates,
  "0006_counters": counters,
  "0007_portal_sessions": portalSessions,
  "0008_processor_events": processorEvents,
  "0009_discount_redemptions": discountRedemptions,
  "0010_processor_customers": processorCustomers,
  "0011_fx_snapshots": fxSnapshots,
  "0012_price_migrations": priceMigrations,
  "0013_subscription_item_prices": subscriptionItemPrices,
  "0014_notifications": notifications,
  "0015_customer_balances": customerBalances,
  "0016_invoice_items": invoiceItems,
  "0017_meter_events": meterEvents,
  "0018_billable_metrics": billableMetrics,
  "0019_credit_grants": creditGrants,
  "0020_usage_adjustments": usageAdjustments,
  "0021_usage_alerts": usageAlerts
}

/**
 * Runs every pending migration (a no-op when up to date) and returns those it ran; fails with
 * {@link SchemaNewerThanCode}, running nothing, on a store a newer Recur migrated.
 *
 * @example
 * yield* Migrations.run // inside the host's own database, next to its tables
 * @since 0.1.0
 */
export const run = Effect.suspend(() => checkNotNewer).pipe(
  Effect.andThen(Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: "recur_migrations" }))
)

/**
 * The store was migrated by a newer Recur than this one: its code does not know the newer
 * tables and columns, so it does not start (docs/operations.md "Rollback: forward only").
 * Nothing was changed.
 *
 * @since 0.1.0
 */
export class SchemaNewerThanCode extends Data.TaggedError("SchemaNewerThanCode")<{
  /** The newest migration recorded in the store (`recur_migrations`). */
  readonly applied: string
  /** The newest migration this Recur has. */
  readonly known: string
}> {
  override get message() {
    return (
      `The database was migrated by a newer Recur (its latest migration is ${this.applied}; this Recur knows up to ` +
      `${this.known}). Nothing was changed. Run the newer Recur, or restore the backup taken before the upgrade.`
    )
  }
}

const newest = Object.keys(migrations).sort().at(-1)!

/** Fails with {@link SchemaNewerThanCode} when `recur_migrations` records an id past this code's last. */
const checkNotNewer = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [table] = yield* sql<{ present: boolean }>`select to_regclass('recur_migrations') is not null as present`
  if (table === undefined || !table.present) return
  const [latest] = yield* sql<{ migration_id: number; name: string }>`
    select migration_id, name from recur_migrations order by migration_id desc limit 1`
  const knownId = Number(newest.slice(0, 4))
  if (latest !== undefined && Number(latest.migration_id) > knownId)
    return yield* new SchemaNewerThanCode({
      applied: `${String(latest.migration_id).padStart(4, "0")}_${latest.name}`,
      known: newest
    })
})
