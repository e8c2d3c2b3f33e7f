/**
 * The facade's merchants, catalog and customers groups: the same services and the same request
 * decoding as the REST handlers of `/api/v1/*_settings`, `/api/v1/products`, `/api/v1/prices`
 * and `/api/v1/front/customer`.
 *
 * @since 0.1.0
 */
import { CatalogRequests, DunningRequests, RequestBodies, Requests } from "@recur/contract"
import {
  Catalog,
  Customer,
  CustomerBalances,
  Customers,
  Dunning,
  DunningPolicy,
  Errors,
  Merchant,
  Merchants,
  PaymentSettings,
  Price,
  PriceMigration,
  PriceMigrations,
  Product
} from "@recur/core"
import { Effect, Schema } from "effect"
import type { Services } from "../createBilling.js"
import type { BillingClient } from "./Client.js"
import { decode, id, json, type Kit, named, page, pageJson } from "./Kit.js"

/** `merchants`. @since 0.1.0 */
export const merchants = ({ run }: Kit<Services>): BillingClient["merchants"] => ({
  create: (input) =>
    run(
      decode(RequestBodies.CreateMerchant, input).pipe(
        Effect.flatMap((i) => Merchants.Merchants.use((m) => m.create(i))),
        Effect.map((r) => ({ merchant_id: r.merchant.merchant_id, api_key: r.api_key }))
      )
    ),
  invoiceSettings: (merchantId) =>
    run(
      Merchants.Merchants.use((ms) => ms.get(merchantId)).pipe(
        Effect.map((m) => ({ invoice_prefix: m.invoice_prefix }))
      )
    ),
  setInvoicePrefix: (merchantId, prefix) =>
    run(
      Effect.all([id("merchant_id", merchantId), id("invoice_prefix", prefix)]).pipe(
        Effect.flatMap(([m, p]) => Merchants.Merchants.use((ms) => ms.setInvoicePrefix(m, p))),
        Effect.map((m) => ({ invoice_prefix: m.invoice_prefix }))
      )
    ),
  billingSettings: (merchantId) =>
    run(
      Merchants.Merchants.use((ms) => ms.get(merchantId)).pipe(
        Effect.map((m) => json(Merchant.BillingSettings)(Merchant.billingSettingsOf(m)))
      )
    ),
  setBillingSettings: (merchantId, input) =>
    run(
      Effect.all([id("merchant_id", merchantId), decode(RequestBodies.BillingSettings, input)]).pipe(
        Effect.flatMap(([m, i]) => Merchants.Merchants.use((ms) => ms.setBillingSettings(m, i))),
        Effect.map((m) => json(Merchant.BillingSettings)(Merchant.billingSettingsOf(m)))
      )
    ),
  dunningPreview: (merchantId, input) =>
    run(
      Effect.all([id("merchant_id", merchantId), decode(DunningRequests.DunningPreview, input)]).pipe(
        Effect.flatMap(([m, body]) =>
          Effect.flatMap(DunningRequests.previewInput(body), (i) => Dunning.Dunning.use((d) => d.preview(m, i)))
        ),
        Effect.map(json(DunningPolicy.Preview))
      )
    ),
  disputeSettings: (merchantId) =>
    run(
      Merchants.Merchants.use((ms) => ms.get(merchantId)).pipe(
        Effect.map((m) => ({ fraud_dispute_renewals: m.fraud_dispute_renewals }))
      )
    ),
  setDisputeSettings: (merchantId, settings) =>
    run(
      Effect.gen(function* () {
        const m = yield* id("merchant_id", merchantId)
        const policy = (yield* decode(RequestBodies.DisputeSettings, settings)).fraud_dispute_renewals
        if (policy === undefined)
          return yield* new Errors.InvalidParameter({ param: "fraud_dispute_renewals", reason: "is required" })
        const merchant = yield* Merchants.Merchants.use((ms) =>
          ms.setDisputeSettings(m, { fraud_dispute_renewals: policy })
        )
        return { fraud_dispute_renewals: merchant.fraud_dispute_renewals }
      })
    ),
  paymentSettings: (merchantId) =>
    run(
      PaymentSettings.PaymentSettings.use((p) => p.get(merchantId)).pipe(
        Effect.map(json(PaymentSettings.PaymentSettingsView))
      )
    ),
  setPaymentSettings: (merchantId, input) =>
    run(
      decode(RequestBodies.PaymentSettings, input).pipe(
        Effect.flatMap((i) => PaymentSettings.PaymentSettings.use((p) => p.set(merchantId, i))),
        Effect.map(json(PaymentSettings.PaymentSettingsView))
      )
    )
})

const ProductStatus = Schema.Literals(["active", "disabled"]).annotate({ identifier: "status" })
const PriceStatus = Schema.Literals(["draft", "active", "frozen"]).annotate({ identifier: "status" })

/** `catalog`. @since 0.1.0 */
export const catalog = ({ run }: Kit<Services>): BillingClient["catalog"] => ({
  categories: (merchantId) =>
    run(
      Catalog.Catalog.use((c) => c.listCategories(merchantId)).pipe(
        Effect.map((r) => ({ total: r.total, list: r.list.map(json(Product.Category)) }))
      )
    ),
  createProduct: (merchantId, input) =>
    run(
      decode(RequestBodies.CreateProduct, input).pipe(
        Effect.flatMap((i) => Catalog.Catalog.use((c) => c.createProduct(merchantId, i))),
        Effect.map(json(Product.Product))
      )
    ),
  setProductStatus: (merchantId, productId, status) =>
    run(
      Effect.all([id("product_id", productId), named("product_status", ProductStatus, status)]).pipe(
        Effect.flatMap(([p, s]) => Catalog.Catalog.use((c) => c.setProductStatus(merchantId, p, s))),
        Effect.map((p) => ({ product_id: p.id, product_status: p.status }))
      )
    ),
  listProducts: (merchantId, filter = {}) =>
    run(
      page(filter).pipe(
        Effect.flatMap((p) =>
          Catalog.Catalog.use((c) =>
            c.listProducts(merchantId, {
              ...p,
              ...(filter.price_ids !== undefined ? { price_ids: filter.price_ids } : {}),
              ...(filter.status !== undefined ? { status: filter.status } : {})
            })
          )
        ),
        Effect.map(pageJson(Product.Product))
      )
    ),
  createPrice: (merchantId, input) =>
    run(
      decode(RequestBodies.CreatePrice, input).pipe(
        Effect.flatMap((i) => Requests.refusedAsParameter(Catalog.Catalog.use((c) => c.createPrice(merchantId, i)))),
        Effect.map((v) => ({ ...json(Price.PriceVersion)(v), price_id: v.id }))
      )
    ),
  setPriceStatus: (merchantId, priceVersionId, status) =>
    run(
      Effect.all([id("price_version_id", priceVersionId), named("status", PriceStatus, status)]).pipe(
        Effect.flatMap(([v, s]) => Catalog.Catalog.use((c) => c.setVersionStatus(merchantId, v, s))),
        Effect.map((v) => ({ price_version_id: v.price_version_id }))
      )
    ),
  getPriceVersion: (merchantId, priceVersionId) =>
    run(
      id("price_version_id", priceVersionId).pipe(
        Effect.flatMap((v) => Catalog.Catalog.use((c) => c.getVersion(merchantId, v))),
        Effect.map(json(Price.PriceVersion))
      )
    ),
  listPrices: (merchantId, filter = {}) =>
    run(
      page(filter).pipe(
        Effect.flatMap((p) =>
          Catalog.Catalog.use((c) =>
            c.listPrices(merchantId, {
              ...p,
              ...(filter.product_id !== undefined ? { product_id: filter.product_id } : {}),
              ...(filter.status !== undefined ? { status: filter.status } : {}),
              ...(filter.customer_id !== undefined ? { customer_id: filter.customer_id } : {})
            })
          )
        ),
        Effect.map(pageJson(Price.PriceVersion))
      )
    ),
  listPriceVersions: (merchantId, priceId, filter = {}) =>
    run(
      Effect.all([id("price_id", priceId), page(filter)]).pipe(
        Effect.flatMap(([i, p]) => Catalog.Catalog.use((c) => c.listVersions(merchantId, i, p))),
        Effect.map(pageJson(Price.PriceVersion))
      )
    ),
  createPriceVersion: (merchantId, priceId, input) =>
    run(
      Effect.all([id("price_id", priceId), decode(RequestBodies.CreatePrice, input)]).pipe(
        Effect.flatMap(([p, body]) =>
          Requests.refusedAsParameter(Catalog.Catalog.use((c) => c.createVersion(merchantId, p, body)))
        ),
        Effect.map(json(Price.PriceVersion))
      )
    ),
  createMigration: (merchantId, priceId, input) =>
    run(
      Effect.all([
        id("price_id", priceId),
        decode(CatalogRequests.CreatePriceMigration, input).pipe(Effect.flatMap(CatalogRequests.migrationCommand))
      ]).pipe(
        Effect.flatMap(([p, command]) => PriceMigrations.PriceMigrations.use((m) => m.preview(merchantId, p, command))),
        Effect.map(json(PriceMigration.PriceMigration))
      )
    ),
  getMigration: (merchantId, priceId, migrationId) =>
    run(
      Effect.all([id("price_id", priceId), id("migration_id", migrationId)]).pipe(
        Effect.flatMap(([p, i]) => PriceMigrations.PriceMigrations.use((m) => m.get(merchantId, p, i))),
        Effect.map(json(PriceMigration.PriceMigration))
      )
    ),
  listMigrationLines: (merchantId, priceId, migrationId, filter = {}) =>
    run(
      Effect.all([
        id("price_id", priceId),
        id("migration_id", migrationId),
        page(filter),
        CatalogRequests.lineOutcome(filter.outcome)
      ]).pipe(
        Effect.flatMap(([p, i, pg, outcome]) =>
          PriceMigrations.PriceMigrations.use((m) =>
            m.listLines(merchantId, p, i, { ...pg, ...(outcome ? { outcome } : {}) })
          )
        ),
        Effect.map(pageJson(PriceMigration.PriceMigrationLine))
      )
    ),
  runMigration: (merchantId, priceId, migrationId) =>
    run(
      Effect.all([id("price_id", priceId), id("migration_id", migrationId)]).pipe(
        Effect.flatMap(([p, i]) => PriceMigrations.PriceMigrations.use((m) => m.run(merchantId, p, i))),
        Effect.map(json(PriceMigration.PriceMigration))
      )
    ),
  cancelMigration: (merchantId, priceId, migrationId) =>
    run(
      Effect.all([id("price_id", priceId), id("migration_id", migrationId)]).pipe(
        Effect.flatMap(([p, i]) => PriceMigrations.PriceMigrations.use((m) => m.cancel(merchantId, p, i))),
        Effect.map(json(PriceMigration.PriceMigration))
      )
    )
})

const CustomerType = Schema.Literals(["customer", "guest"]).annotate({ identifier: "type" })

/** `customers`. @since 0.1.0 */
export const customers = ({ run }: Kit<Services>): Omit<BillingClient["customers"], "autoTopUp"> => ({
  create: (merchantId, input) =>
    run(
      decode(RequestBodies.CreateCustomer, input).pipe(
        Effect.flatMap((i) => Customers.Customers.use((c) => c.create(merchantId, i))),
        // the customer, and `customer_id` as REST's create answers it
        Effect.map((r) => {
          const customer = json(Customer.Customer)(Customers.toCustomer(r))
          return { ...customer, customer_id: customer.id }
        })
      )
    ),
  update: (merchantId, customerId, input) =>
    run(
      Effect.all([id("customer_id", customerId), decode(RequestBodies.UpdateCustomer, input)]).pipe(
        Effect.flatMap(([c, i]) => Customers.Customers.use((s) => s.update(merchantId, { ...i, customer_id: c }))),
        Effect.map((r) => json(Customer.Customer)(Customers.toCustomer(r)))
      )
    ),
  delete: (merchantId, customerId) =>
    run(
      id("customer_id", customerId).pipe(
        Effect.flatMap((c) => Customers.Customers.use((s) => s.delete(merchantId, { customer_id: c })))
      )
    ),
  get: (merchantId, customerId) =>
    run(
      id("customer_id", customerId).pipe(
        Effect.flatMap((c) => Customers.Customers.use((s) => s.get(merchantId, c))),
        // with its balance per currency, as REST's read of one customer
        Effect.flatMap((r) =>
          CustomerBalances.CustomerBalances.use((b) => b.balances(merchantId, r.id)).pipe(
            Effect.map((balance) => json(Customer.Customer)(Customers.toCustomer(r, balance)))
          )
        )
      )
    ),
  list: (merchantId, filter = {}) =>
    run(
      Effect.all([
        page(filter),
        filter.type === undefined ? Effect.succeed(undefined) : named("type", CustomerType, filter.type)
      ]).pipe(
        Effect.flatMap(([p, type]) =>
          Customers.Customers.use((s) =>
            s.list(merchantId, {
              ...p,
              ...(filter.customer_ids !== undefined ? { customer_ids: filter.customer_ids } : {}),
              ...(filter.emails !== undefined ? { emails: filter.emails } : {}),
              ...(filter.payer_ids !== undefined ? { payer_ids: filter.payer_ids } : {}),
              ...(type !== undefined ? { type } : {})
            })
          )
        ),
        Effect.map((r) => ({
          has_more: r.has_more,
          list: r.list.map((c) => json(Customer.Customer)(Customers.toCustomer(c)))
        }))
      )
    )
})
