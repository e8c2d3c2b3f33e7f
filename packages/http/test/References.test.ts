/**
 * A referenced object that does not exist is 404 `resource_not_found` wherever it is named: in
 * the path (no `param`) or in a body (`param` names the field as the request spells it). "Does
 * not exist" includes another merchant's object and an id of the wrong shape. The rule is in
 * docs/decisions.md ("Issue 32 (3)").
 *
 * The tables guard drift: every operation of `BillingApi` with a path parameter is called here
 * with ids that name nothing (taken from `BillingApi` itself, so a new endpoint is covered the
 * day it is declared), and every `…_id` / `…_ids` field of the request bodies
 * (`@recur/contract`'s `RequestBodies`) is either a reference tested below or listed as not one,
 * with the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type BillingClient, createBilling, NotFoundError } from "@recur/embedded"
import { Api, Mount } from "@recur/http"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

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
const withPathIds = operations.filter((o) => o.path.includes("/:"))

/** Body fields that carry an id but reference no object of the merchant, and why. */
const notReferences: Record<string, string> = {
  event_id: "a usage event's own idempotency key, chosen by the merchant",
  merchant_id:
    "the caller's merchant comes from the key; a body's merchant_id is ignored (a spoofed one finds nothing)",
  merchant_product_id: "the merchant's own label for a product, set at creation",
  order_id: "the merchant's own order reference, stored as given",
  quote_id:
    "a preview's token: one that does not match the subscription is 409 (stale or expired), not a missing object",
  subscription_id:
    "in a change's body it is ignored (the path names the subscription); in a usage batch it is a reference, tested below"
}

/** Body fields that reference an object, each tested below. */
const referenceFields = [
  "category_id",
  "customer_id",
  "discount_id",
  "payer_id",
  "price_id",
  "product_id",
  "product_ids",
  "trade_id",
  "subscription_id"
]

const source = (relative: string) => readFileSync(fileURLToPath(new URL(relative, import.meta.url)), "utf8")

describe("an object that does not exist is 404 resource_not_found wherever it is named", () => {
  let billing: BillingClient
  let recur: Awaited<ReturnType<typeof Mount.fetchHandler>>
  let n = 0
  const call = async (key: string, method: string, path: string, body?: unknown) => {
    const res = await recur.fetch(
      new Request(`http://shop.test${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          "request-id": `ref-${++n}`,
          ...(body !== undefined ? { "content-type": "application/json" } : {})
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {})
      })
    )
    return { status: res.status, body: (await res.json()) as any }
  }
  const answer = (r: { status: number; body: any }) => [r.status, r.body.code, r.body.data?.param]

  /** A merchant with a product, a monthly price, a paid subscription, a discount and a tax rate. */
  const world = async (name: string) => {
    const { merchant_id: m, api_key: key } = await billing.merchants.create({ name, currency: "USD" })
    const product = await billing.catalog.createProduct(m, { product_name: "Pro" })
    const price = await billing.catalog.createPrice(m, {
      name: "Pro monthly",
      product_id: product.product_id,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
    })
    const session = await billing.checkout.createSession(m, { payer_id: "ada", line_items: [{ price_id: price.id }] })
    const paid = await billing.checkout.pay(m, session.session_id, {
      number: "4242424242424242",
      exp_month: 12,
      exp_year: 2099,
      cvc: "123"
    })
    const discount = await billing.discounts.create(m, {
      name: "Ten",
      code: `TEN${name.toUpperCase()}`,
      discount_type: "percentage",
      percent_off: 10
    })
    const tax = await billing.taxRates.create(m, { name: "VAT", percentage: "20", country: "DE" })
    const endpoint = await billing.webhooks.createEndpoint(m, { url: "https://example.com/hook", all_events: true })
    const trade = paid.trade!.trade_id as string
    const invoice = (await billing.invoices.list(m, { limit: 1 })).list[0]!.invoice_id as string
    return {
      m,
      key,
      ids: {
        product_id: product.product_id,
        price_id: price.id,
        price_version_id: price.price_version_id,
        session_id: session.session_id,
        subscription_id: paid.subscription!.id,
        trade_id: trade,
        invoice_id: invoice,
        customer_id: session.customer_id!,
        discount_id: discount.discount_id,
        tax_rate_id: tax.tax_rate_id,
        endpoint_id: endpoint.id
      } as Record<string, string>
    }
  }
  let mine: Awaited<ReturnType<typeof world>>
  let theirs: Awaited<ReturnType<typeof world>>

  beforeAll(async () => {
    billing = await createBilling({ storage: "memory", publicUrl: "http://shop.test" })
    recur = await Mount.fetchHandler(billing, { rateLimit: false })
    mine = await world("mine")
    theirs = await world("theirs")
  }, 120_000)
  afterAll(async () => {
    await recur.close()
    await billing.close()
  })

  /** A body each POST with a path id takes, so that what is refused is the id and not the body. */
  const bodies: Record<string, unknown> = {
    "catalog.productStatus": { product_status: "active" },
    "creditGrants.create": { amount: "5.00", currency: "USD", reason: "gift", category: "promotional" },
    "creditGrants.topUp": { amount: "5.00", currency: "USD" },
    "creditGrants.autoTopUp": { enabled: true, threshold: "2.00", amount: "10.00", currency: "USD" },
    "catalog.priceStatus": { status: "active" },
    "catalog.createMigration": { from_version_id: "prv_x", to_version_id: "prv_y" },
    "subscriptions.change": { quantity: "2" },
    "subscriptions.previewChange": { quantity: "2" },
    "subscriptions.updatePaymentMethod": {
      card_number: "4242424242424242",
      exp_month: 12,
      exp_year: 2099,
      cvc: "123"
    },
    "subscriptions.recordUsage": { usage_count: 1 },
    "webhooks.updateEndpoint": { desc: "x" },
    "discounts.applyToSubscription": { discount_code: "TENMINE" },
    "discounts.removeFromSubscription": { discount_id: "dis_x" },
    "entitlements.setProductEntitlements": { entitlements: {} },
    "schedules.create": { phases: [{ items: [{ price_id: "pri_01m8djyj2de45vy8qwk7yc8p10" }], cycles: 1 }] },
    "items.preview": { items: [{ price_id: "pri_01m8djyj2de45vy8qwk7yc8p10" }] },
    "items.commit": { items: [{ price_id: "pri_01m8djyj2de45vy8qwk7yc8p10" }] },
    "subscriptions.setCollection": { collection_method: "send_invoice", days_until_due: 30 },
    "customerBalances.adjust": { amount: "1.00", currency: "USD", reason: "courtesy" },
    "customerBalances.creditNote": { amount: "1.00", method: "credit_balance" },
    "usageAdjustments.amendEvent": { transaction_id: "replacement-1" },
    "usageAdjustments.preview": { timestamp: "2026-01-15T00:00:00Z" },
    "usageAlerts.setProgressiveBilling": { progressive_billing_threshold: "10.00" }
  }

  it("every operation with an id in its path: an unknown, malformed or another merchant's id is 404, no param", async () => {
    expect(withPathIds.length).toBeGreaterThan(30)
    const wrong: Array<string> = []
    for (const { operation, method, path } of withPathIds) {
      const names = [...path.matchAll(/:([a-z_]+)/g)].map((x) => x[1]!)
      // each id in turn names nothing; the other path parameters are the caller's own (a feature's key is no id)
      for (const [i, name] of names.entries()) {
        if (!name.endsWith("_id")) continue
        for (const unknown of ["nope_0", theirs.ids[name]].filter((v): v is string => v !== undefined)) {
          const url = names.reduce(
            (at, other, j) => at.replace(`:${other}`, j === i ? unknown : (mine.ids[other] ?? "basic")),
            path
          )
          const query = operation === "subscriptions.usage" ? `?merchant_id=${mine.m}` : ""
          const r = await call(mine.key, method, url + query, method === "POST" ? (bodies[operation] ?? {}) : undefined)
          const got = answer(r)
          if (got[0] !== 404 || got[1] !== "resource_not_found" || got[2] !== undefined)
            wrong.push(`${operation} ${method} ${url}: ${JSON.stringify(got)} ${r.body.message}`)
        }
      }
    }
    expect(wrong).toEqual([])
  }, 60_000)

  it("every reference in a body: 404 resource_not_found naming the field, nothing created", async () => {
    const sub = mine.ids.subscription_id!
    const priceBody = (product_id: string) => ({
      name: "X",
      product_id,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", base_price_val: "1" }
    })
    const table: ReadonlyArray<readonly [string, string, unknown, string]> = [
      ["POST", "/api/v1/products", { product_name: "X", category_id: "cat_nope" }, "category_id"],
      ["POST", "/api/v1/prices", priceBody(theirs.ids.product_id!), "product_id"],
      ["POST", "/api/v1/prices", priceBody("nope"), "product_id"],
      [
        "POST",
        "/api/v1/session",
        { customer_id: theirs.ids.customer_id, line_items: [{ price_id: mine.ids.price_id }] },
        "customer_id"
      ],
      [
        "POST",
        "/api/v1/session",
        { customer_id: "nope", line_items: [{ price_id: mine.ids.price_id }] },
        "customer_id"
      ],
      [
        "POST",
        "/api/v1/session",
        { payer_id: "p", line_items: [{ price_id: theirs.ids.price_id }] },
        "line_items[0].price_id"
      ],
      ["POST", "/api/v1/session", { payer_id: "p", line_items: [{ price_id: "nope" }] }, "line_items[0].price_id"],
      [
        "POST",
        "/api/v1/session",
        { payer_id: "p", line_items: [{ price_id: mine.ids.price_id }], discount_code: "TENTHEIRS" },
        "discount_code"
      ],
      ["POST", `/api/v1/subscription/${sub}`, { price_id: theirs.ids.price_id }, "price_id"],
      ["POST", `/api/v1/subscription/${sub}/preview-change`, { price_id: "nope" }, "price_id"],
      ["POST", "/api/v1/refund", { trade_id: theirs.ids.trade_id, amount: "1.00" }, "trade_id"],
      ["POST", "/api/v1/refund", { trade_id: "nope", amount: "1.00" }, "trade_id"],
      ["POST", "/api/v1/front/customer/update", { customer_id: theirs.ids.customer_id, name: "x" }, "customer_id"],
      ["POST", "/api/v1/front/customer/update", { payer_id: "nobody", name: "x" }, "payer_id"],
      ["POST", "/api/v1/front/customer/delete", { customer_id: "nope" }, "customer_id"],
      [
        "POST",
        "/api/v1/usage/batch",
        {
          records: [
            { subscription_id: sub, usage_count: 1 },
            { subscription_id: "nope", usage_count: 1 }
          ]
        },
        "records[1].subscription_id"
      ],
      [
        "POST",
        "/api/v1/discounts",
        {
          name: "D",
          discount_type: "percentage",
          percent_off: 5,
          product_ids: [mine.ids.product_id, theirs.ids.product_id]
        },
        "product_ids[1]"
      ],
      ["POST", `/api/v1/subscription/${sub}/discount`, { discount_id: theirs.ids.discount_id }, "discount_id"],
      ["POST", `/api/v1/subscription/${sub}/discount`, { discount_code: "NOSUCH" }, "discount_code"],
      ["POST", `/api/v1/subscription/${sub}/discount/remove`, { discount_id: mine.ids.discount_id }, "discount_id"],
      ["POST", "/api/v1/customer-portal/auth", { customer_id: theirs.ids.customer_id }, "customer_id"],
      ["POST", "/api/v1/customer-portal/auth", { customer_id: "nope" }, "customer_id"],
      ["POST", "/api/v1/portal_settings", { switch_prices: [theirs.ids.price_id] }, "switch_prices[0]"]
    ]
    const wrong: Array<string> = []
    for (const [method, path, body, param] of table) {
      const r = await call(mine.key, method, path, body)
      const got = answer(r)
      if (JSON.stringify(got) !== JSON.stringify([404, "resource_not_found", param]))
        wrong.push(`${path} ${JSON.stringify(body)}: ${JSON.stringify(got)} ${r.body.message}`)
      if (typeof r.body.data?.request_id !== "string" || r.body.data.request_id === "")
        wrong.push(`${path}: no request_id`)
    }
    expect(wrong).toEqual([])
    // nothing was created by the refused writes
    expect((await billing.catalog.listProducts(mine.m, { limit: 100 })).list).toHaveLength(1)
    expect((await billing.discounts.list(mine.m, { limit: 100 })).list).toHaveLength(1)
    // every reference field of a body is tested above or named as no reference, with its reason
    const fields = new Set(
      [...source("../../contract/src/RequestBodies.ts").matchAll(/\b([a-z_]+_ids?)\s*:/g)].map((x) => x[1]!)
    )
    fields.add("product_id") // a price's, declared with the price rules in core
    const covered = new Set([...referenceFields, ...Object.keys(notReferences)])
    expect([...fields].filter((f) => !covered.has(f))).toEqual([])
  }, 60_000)

  it("the facade rejects the same references with NotFoundError naming the same field", async () => {
    const reject = async (p: Promise<unknown>) => {
      try {
        await p
      } catch (e) {
        return e as NotFoundError
      }
      throw new Error("expected a rejection")
    }
    const cases: ReadonlyArray<readonly [Promise<unknown>, string]> = [
      [
        billing.checkout.createSession(mine.m, { payer_id: "p", line_items: [{ price_id: theirs.ids.price_id! }] }),
        "line_items[0].price_id"
      ],
      [billing.refunds.create(mine.m, { trade_id: theirs.ids.trade_id!, amount: "1.00" }), "trade_id"],
      [billing.portal.createSession(mine.m, { customer_id: theirs.ids.customer_id! }), "customer_id"],
      [billing.subscriptions.change(mine.m, mine.ids.subscription_id!, { price_id: "nope" }), "price_id"]
    ]
    for (const [call, param] of cases) {
      const e = await reject(call)
      expect([e.constructor, e.status, e.code, e.param]).toEqual([NotFoundError, 404, "resource_not_found", param])
    }
    // a path's id: not found, no param
    const path = await reject(billing.subscriptions.get(mine.m, theirs.ids.subscription_id!))
    expect([path.constructor, path.param]).toEqual([NotFoundError, undefined])
  })
})
