/**
 * The Promise facade is the whole API: every operation of the REST API (as `BillingApi` declares
 * it) has a facade method, or is listed here as HTTP-only with the reason. A new endpoint with
 * neither fails this test. Each method's JSDoc names its REST method and path, and a few reads
 * answer exactly what REST answers on the same engine.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type BillingClient, createBilling } from "@recur/embedded"
import { Api, Mount } from "@recur/http"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** REST operation (`group.endpoint` of `BillingApi`) → the facade method that performs it. */
const facade: Record<string, string> = {
  "meterEvents.send": "meterEvents.send",
  "meterEvents.sendBatch": "meterEvents.sendBatch",
  "meterEvents.list": "meterEvents.list",
  "usageAdjustments.voidEvent": "usageAdjustments.voidEvent",
  "usageAdjustments.amendEvent": "usageAdjustments.amendEvent",
  "usageAdjustments.preview": "usageAdjustments.preview",
  "usageAdjustments.list": "usageAdjustments.list",
  "usageAdjustments.apply": "usageAdjustments.apply",
  "invoiceItems.create": "invoiceItems.create",
  "invoiceItems.list": "invoiceItems.list",
  "invoiceItems.get": "invoiceItems.get",
  "invoiceItems.delete": "invoiceItems.delete",
  "invoiceItems.createInvoice": "invoiceItems.createInvoice",
  "entitlements.list": "entitlements.list",
  "notifications.settings": "notifications.settings",
  "notifications.updateSettings": "notifications.updateSettings",
  "notifications.list": "notifications.list",
  "entitlements.check": "entitlements.check",
  "entitlements.settings": "entitlements.settings",
  "entitlements.updateSettings": "entitlements.updateSettings",
  "entitlements.setProductEntitlements": "entitlements.setProductEntitlements",
  "customers.create": "customers.create",
  "customers.update": "customers.update",
  "customers.delete": "customers.delete",
  "customers.get": "customers.get",
  "customers.list": "customers.list",
  "customerBalances.balance": "balances.get",
  "customerBalances.transactions": "balances.transactions",
  "customerBalances.adjust": "balances.adjust",
  "customerBalances.creditNote": "balances.creditNote",
  "creditGrants.create": "creditGrants.create",
  "creditGrants.list": "creditGrants.list",
  "creditGrants.get": "creditGrants.get",
  "creditGrants.void": "creditGrants.void",
  "creditGrants.topUp": "creditGrants.topUp",
  "creditGrants.autoTopUp": "customers.autoTopUp",
  "billableMetrics.create": "billableMetrics.create",
  "billableMetrics.list": "billableMetrics.list",
  "billableMetrics.get": "billableMetrics.get",
  "billableMetrics.update": "billableMetrics.update",
  "billableMetrics.archive": "billableMetrics.archive",
  "usageAlerts.create": "usageAlerts.create",
  "usageAlerts.list": "usageAlerts.list",
  "usageAlerts.get": "usageAlerts.get",
  "usageAlerts.delete": "usageAlerts.delete",
  "usageAlerts.progressiveBilling": "usageAlerts.progressiveBilling",
  "usageAlerts.setProgressiveBilling": "usageAlerts.setProgressiveBilling",
  "catalog.categories": "catalog.categories",
  "catalog.createProduct": "catalog.createProduct",
  "catalog.productStatus": "catalog.setProductStatus",
  "catalog.products": "catalog.listProducts",
  "catalog.createPrice": "catalog.createPrice",
  "catalog.priceStatus": "catalog.setPriceStatus",
  "catalog.priceVersion": "catalog.getPriceVersion",
  "catalog.prices": "catalog.listPrices",
  "catalog.priceVersions": "catalog.listPriceVersions",
  "catalog.createPriceVersion": "catalog.createPriceVersion",
  "catalog.createMigration": "catalog.createMigration",
  "catalog.migration": "catalog.getMigration",
  "catalog.migrationLines": "catalog.listMigrationLines",
  "catalog.runMigration": "catalog.runMigration",
  "catalog.cancelMigration": "catalog.cancelMigration",
  "checkout.create": "checkout.createSession",
  "checkout.get": "checkout.getSession",
  "subscriptions.list": "subscriptions.list",
  "subscriptions.get": "subscriptions.get",
  "subscriptions.change": "subscriptions.change",
  "subscriptions.previewChange": "subscriptions.previewChange",
  "subscriptions.upcomingInvoice": "subscriptions.upcomingInvoice",
  "subscriptions.currentUsage": "subscriptions.currentUsage",
  "subscriptions.revokePriceChange": "subscriptions.revokePriceChange",
  "subscriptions.cancel": "subscriptions.cancel",
  "subscriptions.revokeCancel": "subscriptions.revokeCancel",
  "subscriptions.pause": "subscriptions.pause",
  "subscriptions.resume": "subscriptions.resume",
  "subscriptions.setCollection": "subscriptions.setCollection",
  "subscriptions.updatePaymentMethod": "subscriptions.updatePaymentMethod",
  "subscriptions.renewal": "subscriptions.renewNow",
  "subscriptions.usage": "subscriptions.usage",
  "subscriptions.recordUsage": "subscriptions.recordUsage",
  "subscriptions.recordUsageBatch": "subscriptions.recordUsageBatch",
  "payments.trades": "trades.list",
  "payments.trade": "trades.get",
  "payments.invoices": "invoices.list",
  "payments.invoice": "invoices.get",
  "payments.finalizeInvoice": "invoices.finalize",
  "payments.voidInvoice": "invoices.void",
  "payments.editInvoice": "invoices.edit",
  "payments.markInvoiceUncollectible": "invoices.markUncollectible",
  "payments.invoiceSettings": "merchants.invoiceSettings",
  "payments.updateInvoiceSettings": "merchants.setInvoicePrefix",
  "payments.billingSettings": "merchants.billingSettings",
  "payments.updateBillingSettings": "merchants.setBillingSettings",
  "payments.dunningPreview": "merchants.dunningPreview",
  "payments.disputeSettings": "merchants.disputeSettings",
  "payments.updateDisputeSettings": "merchants.setDisputeSettings",
  "payments.paymentSettings": "merchants.paymentSettings",
  "payments.updatePaymentSettings": "merchants.setPaymentSettings",
  "payments.refund": "refunds.create",
  "payments.getRefund": "refunds.get",
  "payments.refunds": "refunds.list",
  "payments.tradeRefunds": "refunds.ofTrade",
  "sandbox.advanceClock": "advanceClock",
  "sandbox.clock": "clock",
  "webhooks.events": "webhooks.listEvents",
  "webhooks.endpoints": "webhooks.listEndpoints",
  "webhooks.createEndpoint": "webhooks.createEndpoint",
  "webhooks.updateEndpoint": "webhooks.updateEndpoint",
  "webhooks.deleteEndpoint": "webhooks.deleteEndpoint",
  "webhooks.resendEvent": "webhooks.resendEvent",
  "discounts.create": "discounts.create",
  "discounts.list": "discounts.list",
  "discounts.get": "discounts.get",
  "discounts.end": "discounts.end",
  "discounts.applyToSubscription": "discounts.applyToSubscription",
  "discounts.removeFromSubscription": "discounts.removeFromSubscription",
  "items.list": "items.list",
  "items.preview": "items.preview",
  "items.commit": "items.commit",
  "schedules.create": "schedules.create",
  "schedules.get": "schedules.get",
  "schedules.release": "schedules.release",
  "schedules.cancel": "schedules.cancel",
  "taxRates.create": "taxRates.create",
  "taxRates.list": "taxRates.list",
  "taxRates.get": "taxRates.get",
  "taxRates.archive": "taxRates.archive",
  "portal.createSession": "portal.createSession",
  "portal.revokeSession": "portal.revokeSession",
  "portal.settings": "portal.settings",
  "portal.updateSettings": "portal.updateSettings"
}

/**
 * REST operations with no facade method, each with its reason. Routes outside `BillingApi` are
 * HTTP-only by nature and not listed: the hosted checkout, invoice and portal pages (a browser's),
 * the sandbox's 3-D Secure page, processors' webhooks (`/webhooks/stripe/…`: signed by the
 * processor, for its HTTP calls), the health and OpenAPI routes.
 */
const httpOnly: Record<string, string> = {}

interface Declared {
  readonly identifier: string
  readonly endpoints: Record<string, { readonly identifier: string; readonly method: string; readonly path: string }>
}
const operations = (Object.values(Api.BillingApi.groups) as ReadonlyArray<Declared>).flatMap((group) =>
  Object.values(group.endpoints).map((endpoint) => ({
    operation: `${group.identifier}.${endpoint.identifier}`,
    method: endpoint.method,
    path: endpoint.path
  }))
)

const resolve = (client: BillingClient, path: string): unknown =>
  path.split(".").reduce<any>((at, key) => (at === undefined ? undefined : at[key]), client)

/** The JSDoc just above `readonly <method>:` in the facade's interface (inside its group's block). */
const clientSource = readFileSync(
  fileURLToPath(new URL("../../embedded/src/facade/Client.ts", import.meta.url)),
  "utf8"
)
const jsDocOf = (facadePath: string): string | undefined => {
  const parts = facadePath.split(".")
  const source = clientSource
  let from = 0
  if (parts.length === 2) {
    from = source.indexOf(`\n  readonly ${parts[0]}: {`)
    if (from < 0) return undefined
  }
  const indent = parts.length === 2 ? "    " : "  "
  const at = source.indexOf(`\n${indent}readonly ${parts.at(-1)}:`, from)
  if (at < 0) return undefined
  const open = source.lastIndexOf("/**", at)
  return source.slice(open, at)
}

describe("the facade is the whole API", () => {
  let billing: BillingClient
  beforeAll(async () => {
    billing = await createBilling({ storage: "memory", publicUrl: "http://shop.test" })
  }, 120_000)
  afterAll(() => billing.close())

  it("the HttpApi declares the operations this test expects to enumerate", () => {
    expect(operations.length).toBeGreaterThan(60)
    expect(operations).toContainEqual({
      operation: "customers.get",
      method: "GET",
      path: "/api/v1/front/customer/:customer_id"
    })
  })

  it("every REST operation has a facade method or an HTTP-only reason", () => {
    const missing = operations
      .filter(({ operation }) => facade[operation] === undefined && !httpOnly[operation]?.trim())
      .map(({ operation, method, path }) => `${operation} (${method} ${path})`)
    expect(missing).toEqual([])
    const notMethods = Object.entries(facade)
      .filter(([, path]) => typeof resolve(billing, path) !== "function")
      .map(([operation, path]) => `${operation} → billing.${path}`)
    expect(notMethods).toEqual([])
  })

  it("the tables name only operations the HttpApi declares", () => {
    const declared = new Set(operations.map((o) => o.operation))
    expect([...Object.keys(facade), ...Object.keys(httpOnly)].filter((o) => !declared.has(o))).toEqual([])
  })

  it("each method's JSDoc names its REST method and path", () => {
    const wrong = operations
      .filter(({ operation }) => facade[operation] !== undefined)
      .flatMap(({ operation, method, path }) => {
        const expected = `${method} ${path.replace(/:([a-z_]+)/g, "{$1}")}`
        const doc = jsDocOf(facade[operation]!)
        return doc?.includes(expected) ? [] : [`billing.${facade[operation]} should name ${expected}`]
      })
    expect(wrong).toEqual([])
  })

  it("reads answer what REST answers on the same engine", async () => {
    const recur = await Mount.fetchHandler(billing)
    try {
      const { merchant_id: m, api_key: key } = await billing.merchants.create({ name: "Parity", currency: "USD" })
      let n = 0
      const get = async (path: string) => {
        const res = await recur.fetch(
          new Request(`http://shop.test${path}`, {
            headers: { authorization: `Bearer ${key}`, "request-id": `parity-${++n}` }
          })
        )
        return ((await res.json()) as any).data
      }
      const product = await billing.catalog.createProduct(m, { product_name: "Pro" })
      const price = await billing.catalog.createPrice(m, {
        name: "Pro monthly",
        product_id: product.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
      })
      expect(price.price_id).toBe(price.id)
      const customer = await billing.customers.create(m, { email: "ada@example.com", name: "Ada" })
      const updated = await billing.customers.update(m, customer.id, { name: "Ada L." })
      expect(updated.name).toBe("Ada L.")

      expect(await billing.customers.get(m, customer.id)).toEqual(
        (await get(`/api/v1/front/customer/${customer.id}`)).customer
      )
      expect(await billing.customers.list(m)).toEqual(await get("/api/v1/front/customer"))
      expect(await billing.catalog.listPrices(m)).toEqual(await get("/api/v1/prices"))
      expect(await billing.catalog.getPriceVersion(m, price.price_version_id)).toEqual(
        await get(`/api/v1/prices/version/${price.price_version_id}`)
      )
      expect(await billing.catalog.listProducts(m)).toEqual(await get("/api/v1/products"))
      expect(await billing.merchants.invoiceSettings(m)).toEqual(await get("/api/v1/invoice_settings"))
      expect(await billing.clock(m)).toEqual(await get("/api/v1/test_helpers/clock"))

      const session = await billing.checkout.createSession(m, {
        line_items: [{ price_id: price.price_id, quantity: "1" }],
        customer_id: customer.id
      })
      expect(await billing.checkout.getSession(m, session.session_id)).toEqual(
        (await get(`/api/v1/session/${session.session_id}`)).session
      )
      const paid = await billing.checkout.pay(m, session.session_id, {
        number: "4242424242424242",
        exp_month: 12,
        exp_year: 2040,
        cvc: "123"
      })
      const sub = paid.subscription!
      expect(await billing.subscriptions.list(m)).toEqual(await get("/api/v1/subscription"))
      expect(await billing.trades.list(m)).toEqual(await get("/api/v1/trades"))
      expect(await billing.trades.get(m, paid.trade.trade_id)).toEqual(
        (await get(`/api/v1/trade/${paid.trade.trade_id}`)).trade
      )
      const invoices = await billing.invoices.list(m, { limit: 10 })
      expect(invoices).toEqual(await get("/api/v1/invoices"))
      expect(await billing.invoices.get(m, invoices.list[0]!.invoice_id)).toEqual(
        (await get(`/api/v1/invoice/${invoices.list[0]!.invoice_id}`)).invoice
      )

      // its customer is not deleted while the subscription is live: the same 409 as over REST
      await expect(billing.customers.delete(m, sub.customer_id)).rejects.toMatchObject({
        status: 409,
        code: "state_conflict"
      })
      expect((await billing.customers.get(m, sub.customer_id)).id).toBe(sub.customer_id)

      // a scheduled cancel and a scheduled change, revoked
      const ending = await billing.subscriptions.cancel(m, sub.id, { cancel_type: "end_of_period" })
      expect(ending.cancel_at_period_end).toBe(true)
      const kept = await billing.subscriptions.revokeCancel(m, sub.id)
      expect(kept.status).toBe("active")
      const bigger = await billing.catalog.createPrice(m, {
        name: "Pro plus monthly",
        product_id: product.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "50.00" }
      })
      await billing.subscriptions.change(m, sub.id, { price_id: bigger.price_id, effective_type: "end_of_period" })
      expect(await billing.subscriptions.revokePriceChange(m, sub.id)).toMatchObject({
        result: "revoked"
      })

      const endpoint = await billing.webhooks.createEndpoint(m, { url: "https://hooks.example/a", all_events: true })
      const disabled = await billing.webhooks.updateEndpoint(m, endpoint.id, { status: "disabled" })
      expect(disabled.status).toBe("disabled")
      expect(await billing.webhooks.listEndpoints(m)).toEqual(await get("/api/v2/webhook/endpoints"))
      expect(await billing.webhooks.listEvents(m)).toEqual(await get("/api/v2/webhook/events"))
      await billing.webhooks.deleteEndpoint(m, endpoint.id)
      expect((await billing.webhooks.listEndpoints(m)).list).toEqual([])
    } finally {
      await recur.close()
    }
  }, 120_000)

  it("writes through the facade are seen over REST: statuses, refunds, renewal, events, deletion", async () => {
    const recur = await Mount.fetchHandler(billing)
    try {
      const { merchant_id: m, api_key: key } = await billing.merchants.create({
        name: "Parity writes",
        currency: "USD",
        frozen_time: Date.parse("2026-01-01T00:00:00Z")
      })
      let n = 0
      const get = async (path: string) => {
        const res = await recur.fetch(
          new Request(`http://shop.test${path}`, {
            headers: { authorization: `Bearer ${key}`, "request-id": `parity-w-${++n}` }
          })
        )
        return ((await res.json()) as any).data
      }
      await billing.webhooks.createEndpoint(m, { url: "https://hooks.example/w", all_events: true })
      expect(await billing.catalog.categories(m)).toEqual(await get("/api/v1/product-categories"))
      expect(await billing.merchants.disputeSettings(m)).toEqual(await get("/api/v1/dispute_settings"))
      expect(await billing.merchants.setBillingSettings(m, { proration_policy: "fixed_days(30)" })).toEqual(
        await get("/api/v1/billing_settings")
      )
      const product = await billing.catalog.createProduct(m, { product_name: "Basic", product_status: "draft" })
      expect(await billing.catalog.setProductStatus(m, product.product_id, "active")).toEqual({
        product_id: product.product_id,
        product_status: "active"
      })
      const price = await billing.catalog.createPrice(m, {
        name: "Basic monthly",
        product_id: product.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "10.00" }
      })
      expect(await billing.catalog.listPriceVersions(m, price.price_id)).toEqual(
        await get(`/api/v1/price/${price.price_id}/versions`)
      )
      const session = await billing.checkout.createSession(m, {
        line_items: [{ price_id: price.price_id, quantity: "1" }],
        payer_id: "payer-1"
      })
      const paid = await billing.checkout.pay(m, session.session_id, {
        number: "4242424242424242",
        exp_month: 12,
        exp_year: 2040,
        cvc: "123"
      })
      expect(paid.status).toBe("succeeded")
      const sub = paid.subscription!
      expect(await billing.subscriptions.list(m, { status: ["active"] })).toEqual(
        await get("/api/v1/subscription?status=active")
      )

      const refund = await billing.refunds.create(m, { trade_id: paid.trade.trade_id, amount: "1.00" })
      expect(await billing.refunds.get(m, refund.refund_id)).toEqual(
        (await get(`/api/v1/refund/${refund.refund_id}`)).refund
      )
      expect(await billing.refunds.list(m)).toEqual(await get("/api/v1/refunds"))
      expect(await billing.refunds.ofTrade(m, paid.trade.trade_id)).toEqual(
        await get(`/api/v1/trades/${paid.trade.trade_id}/refunds`)
      )

      await billing.advanceClock(m, new Date("2026-01-20T00:00:00Z"))
      const renewed = await billing.subscriptions.renewNow(m, sub.id)
      expect(renewed.id).toBe(sub.id)
      expect(await billing.subscriptions.get(m, sub.id)).toEqual(
        (await get(`/api/v1/subscription/${sub.id}`)).subscription
      )

      const events = await billing.webhooks.listEvents(m)
      expect(events.list.length).toBeGreaterThan(0)
      const resent = await billing.webhooks.resendEvent(m, events.list[0]!.id)
      expect(resent.id).toBe(events.list[0]!.id)

      expect(await billing.catalog.setPriceStatus(m, price.price_version_id, "frozen")).toEqual({
        price_version_id: price.price_version_id
      })
      const customer = await billing.customers.create(m, { email: "gone@example.com" })
      await billing.customers.delete(m, customer.id)
      await expect(billing.customers.get(m, customer.id)).rejects.toMatchObject({ status: 404 })
    } finally {
      await recur.close()
    }
  }, 120_000)

  it("list filters are checked as over REST", async () => {
    const { merchant_id: m } = await billing.merchants.create({ name: "Limits", currency: "USD" })
    await expect(billing.customers.list(m, { limit: 0 })).rejects.toMatchObject({ status: 400, param: "limit" })
    await expect(billing.trades.list(m, { starting_after: "a", ending_before: "b" })).rejects.toMatchObject({
      status: 400
    })
    await expect(billing.subscriptions.list(m, { status: ["nope" as "active"] })).rejects.toMatchObject({ status: 400 })
  })
})
