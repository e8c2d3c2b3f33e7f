import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Store } from "@recur/core"
import { Http } from "@recur/http"
import { Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { backends, serve } from "./client.js"

// Lost races answer 409 state_conflict (or win after a safe retry), never 500: every write
// operation of the OpenAPI document fired concurrently on one object, and the recovery race of
// issue 29 (an unpaid invoice paid on its page while the customer saves a card in the portal and
// the merchant saves one over REST) — on PGlite, and on PostgreSQL (where writers really run at
// once) when RECUR_TEST_DATABASE_URL is set.

const card = { exp_month: "12", exp_year: "2030", cvc: "123" }
/** Copies of each request fired at once. */
const AT_ONCE = 6

for (const [name, storage] of backends()) {
  describe(`lost races (${name})`, { timeout: 300_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    /** A customer subscribed to a monthly 30.00 price, paid with `number`: the ids a write needs. */
    const subscribed = async (key: string, priceId: string, number = "4242424242424242") => {
      const s = await api.call("POST", "/api/v1/session", key, {
        payer_id: `payer-${Math.random()}`,
        line_items: [{ price_id: priceId }]
      })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const sessionId = s.body.data.session_id as string
      const paid = await api.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { card_number: number, ...card },
        { accept: "application/json" }
      )
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      const session = (await api.call("GET", `/api/v1/session/${sessionId}`, key)).body.data.session
      const invoice = (await api.call("GET", "/api/v1/invoices?limit=100", key)).body.data.list.find(
        (i: any) => i.subscription_id === session.subscription_id
      )?.invoice_id as string
      return {
        invoice,
        customer: session.customer_id as string,
        sub: session.subscription_id as string,
        trade: paid.body.data.trade_id as string
      }
    }

    /** Every object a write operation can name, of one merchant. */
    const world = async () => {
      const { api_key: key } = await api.merchant()
      const productId = (await api.call("POST", "/api/v1/products", key, { product_name: "Pro" })).body.data
        .product_id as string
      const priceOf = async (amount: string) => {
        const r = await api.call("POST", "/api/v1/prices", key, {
          name: `Monthly ${amount}`,
          product_id: productId,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: amount }
        })
        expect(r.status, JSON.stringify(r.body)).toBe(200)
        return r.body.data as { price_id: string; price_version_id: string }
      }
      const price = await priceOf("30.00")
      const bigger = await priceOf("50.00")
      const priceId = price.price_id
      const a = await subscribed(key, priceId)
      const discount = (
        await api.call("POST", "/api/v1/discounts", key, {
          name: "Race",
          code: `RACE${Math.random().toString(36).slice(2, 8).toUpperCase()}`,
          discount_type: "percentage",
          percent_off: 10,
          duration: "forever"
        })
      ).body.data.discount
      const rate = (await api.call("POST", "/api/v1/tax_rates", key, { name: "VAT", percentage: "19", country: "DE" }))
        .body.data.tax_rate
      const metric = (
        await api.call("POST", "/api/v1/billable_metrics", key, {
          code: `race_${Math.random().toString(36).slice(2, 8)}`,
          name: "Race",
          aggregation: "count"
        })
      ).body.data.billable_metric
      const grant = (
        await api.call("POST", `/api/v1/customers/${a.customer}/credit_grants`, key, {
          amount: "5.00",
          currency: "USD",
          reason: "race",
          category: "promotional"
        })
      ).body.data.credit_grant.credit_grant_id as string
      const usageAlert = (
        await api.call("POST", "/api/v1/usage_alerts", key, {
          subscription_id: a.sub,
          billable_metric_id: metric.code,
          thresholds: [{ type: "value", value: "10" }]
        })
      ).body.data.usage_alert.usage_alert_id as string
      const invoiceItem = (
        await api.call("POST", "/api/v1/invoice_items", key, {
          customer_id: a.customer,
          currency: "USD",
          unit_amount: "7.00"
        })
      ).body.data.invoice_item.invoice_item_id as string
      const endpoint = (
        await api.call("POST", "/api/v2/webhook/endpoints", key, {
          url: "https://hooks.example/race",
          all_events: true
        })
      ).body.data.id as string
      const event = (await api.call("GET", `/api/v2/webhook/events?business_ids=${a.sub}`, key)).body.data.list[0]
        .id as string
      const portalSession = (await api.call("POST", "/api/v1/customer-portal/auth", key, { customer_id: a.customer }))
        .body.data.portal_session_id as string
      // a second version of the bigger price, and a migration to it (of no subscription)
      const biggerV2 = (
        await api.call("POST", `/api/v1/price/${bigger.price_id}/versions`, key, {
          name: "Monthly 55.00",
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "55.00" }
        })
      ).body.data.price_version_id as string
      const migration = (
        await api.call("POST", `/api/v1/price/${bigger.price_id}/migrations`, key, {
          from_version_id: bigger.price_version_id,
          to_version_id: biggerV2
        })
      ).body.data.migration_id as string
      return {
        key,
        productId,
        priceId,
        priceVersionId: price.price_version_id,
        bigger: bigger.price_id,
        biggerVersions: [bigger.price_version_id, biggerV2] as const,
        migration,
        ...a,
        invoice: (await api.call("GET", `/api/v1/invoices?subscription_id=${a.sub}`, key)).body.data.list[0]
          .invoice_id as string,
        discountId: discount.discount_id as string,
        discountCode: discount.code as string,
        taxRateId: rate.tax_rate_id as string,
        metricId: metric.billable_metric_id as string,
        metricCode: metric.code as string,
        invoiceItem,
        grant,
        usageAlert,
        endpoint,
        event,
        portalSession
      }
    }
    type World = Awaited<ReturnType<typeof world>>

    /**
     * One request per write operation of the OpenAPI document, on the world's one object of its
     * kind: `[path, body]`. Destructive ones (cancel now, delete) come last in the document's
     * order of the groups below, so that the others still find their object.
     */
    const writes: Record<string, (w: World) => readonly [string, unknown?]> = {
      "POST /api/v1/front/customer/create": () => ["/api/v1/front/customer/create", { payer_id: "same-payer" }],
      "POST /api/v1/front/customer/update": (w) => [
        "/api/v1/front/customer/update",
        { customer_id: w.customer, name: `Ada ${Math.random()}` }
      ],
      "POST /api/v1/customers/{customer_id}/balance_transactions": (w) => [
        `/api/v1/customers/${w.customer}/balance_transactions`,
        { amount: "1.00", currency: "USD", reason: "goodwill" }
      ],
      "POST /api/v1/customers/{customer_id}/credit_grants": (w) => [
        `/api/v1/customers/${w.customer}/credit_grants`,
        { amount: "1.00", currency: "USD", reason: "race", category: "paid" }
      ],
      "POST /api/v1/customers/{customer_id}/credit_top_ups": (w) => [
        `/api/v1/customers/${w.customer}/credit_top_ups`,
        { amount: "5.00", currency: "USD" }
      ],
      "POST /api/v1/customers/{customer_id}/auto_top_up": (w) => [
        `/api/v1/customers/${w.customer}/auto_top_up`,
        { enabled: true, threshold: "2.00", amount: "10.00", currency: "USD" }
      ],
      "POST /api/v1/invoices/{invoice_id}/credit_notes": (w) => [
        `/api/v1/invoices/${w.invoice}/credit_notes`,
        { amount: "1.00", reason: "goodwill" }
      ],
      "POST /api/v1/products": () => ["/api/v1/products", { product_name: "Same" }],
      "POST /api/v1/product/{product_id}/status": (w) => [
        `/api/v1/product/${w.productId}/status`,
        { status: "active" }
      ],
      "POST /api/v1/product/{product_id}/entitlements": (w) => [
        `/api/v1/product/${w.productId}/entitlements`,
        { entitlements: { seats: 10, sso: true } }
      ],
      "POST /api/v1/entitlement_settings": () => [
        "/api/v1/entitlement_settings",
        { granting_statuses: ["trial", "active", "past_due"] }
      ],
      "POST /api/v1/prices": (w) => [
        "/api/v1/prices",
        {
          name: "Same",
          product_id: w.productId,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "10.00" }
        }
      ],
      "POST /api/v1/price/{price_id}/versions": (w) => [
        `/api/v1/price/${w.bigger}/versions`,
        {
          name: "Same",
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "56.00" }
        }
      ],
      "POST /api/v1/price/{price_id}/migrations": (w) => [
        `/api/v1/price/${w.bigger}/migrations`,
        { from_version_id: w.biggerVersions[0], to_version_id: w.biggerVersions[1] }
      ],
      "POST /api/v1/price/{price_id}/migrations/{migration_id}/run": (w) => [
        `/api/v1/price/${w.bigger}/migrations/${w.migration}/run`
      ],
      "POST /api/v1/price/{price_id}/migrations/{migration_id}/cancel": (w) => [
        `/api/v1/price/${w.bigger}/migrations/${w.migration}/cancel`
      ],
      "POST /api/v1/prices/{price_version_id}/status": (w) => [
        `/api/v1/prices/${w.priceVersionId}/status`,
        { status: "active" }
      ],
      "POST /api/v1/session": (w) => [
        "/api/v1/session",
        { customer_id: w.customer, line_items: [{ price_id: w.priceId }] }
      ],
      "POST /api/v1/subscription/{subscription_id}/preview-change": (w) => [
        `/api/v1/subscription/${w.sub}/preview-change`,
        { price_id: w.bigger }
      ],
      "POST /api/v1/subscription/{subscription_id}": (w) => [
        `/api/v1/subscription/${w.sub}`,
        { price_id: w.bigger, effective_type: "end_of_period" }
      ],
      "POST /api/v1/subscription/{subscription_id}/revoke-price-change": (w) => [
        `/api/v1/subscription/${w.sub}/revoke-price-change`
      ],
      "POST /api/v1/subscription/{subscription_id}/payment_method": (w) => [
        `/api/v1/subscription/${w.sub}/payment_method`,
        { card_number: "5555555555554444", exp_month: 12, exp_year: 2030, cvc: "123" }
      ],
      "POST /api/v1/subscription/{subscription_id}/usage": (w) => [
        `/api/v1/subscription/${w.sub}/usage`,
        { usage_count: 1, event_id: "same-event" }
      ],
      "POST /api/v1/usage/batch": (w) => [
        "/api/v1/usage/batch",
        { records: [{ subscription_id: w.sub, usage_count: 1, event_id: "same-batch-event" }] }
      ],
      "POST /api/v1/subscription/{subscription_id}/discount": (w) => [
        `/api/v1/subscription/${w.sub}/discount`,
        { discount_code: w.discountCode }
      ],
      "POST /api/v1/subscription/{subscription_id}/discount/remove": (w) => [
        `/api/v1/subscription/${w.sub}/discount/remove`,
        { discount_id: w.discountId }
      ],
      "POST /api/v1/subscription/{subscription_id}/schedule": (w) => [
        `/api/v1/subscription/${w.sub}/schedule`,
        { start: "next_period", phases: [{ items: [{ price_id: w.bigger }], cycles: 2 }] }
      ],
      "POST /api/v1/subscription/{subscription_id}/schedule/release": (w) => [
        `/api/v1/subscription/${w.sub}/schedule/release`
      ],
      "POST /api/v1/subscription/{subscription_id}/schedule/cancel": (w) => [
        `/api/v1/subscription/${w.sub}/schedule/cancel`
      ],
      "POST /api/v1/subscription/{subscription_id}/items/preview": (w) => [
        `/api/v1/subscription/${w.sub}/items/preview`,
        { items: [{ price_id: w.bigger }] }
      ],
      "POST /api/v1/subscription/{subscription_id}/items": (w) => [
        `/api/v1/subscription/${w.sub}/items`,
        { items: [{ price_id: w.bigger }], proration: "none" }
      ],
      "POST /api/v1/subscription/{subscription_id}/pause": (w) => [`/api/v1/subscription/${w.sub}/pause`],
      "POST /api/v1/subscription/{subscription_id}/resume": (w) => [`/api/v1/subscription/${w.sub}/resume`],
      "POST /api/v1/subscription/{subscription_id}/collection_method": (w) => [
        `/api/v1/subscription/${w.sub}/collection_method`,
        { collection_method: "send_invoice", days_until_due: 30 }
      ],
      "POST /api/v1/subscription/{subscription_id}/renewal": (w) => [`/api/v1/subscription/${w.sub}/renewal`],
      "POST /api/v1/refund": (w) => ["/api/v1/refund", { trade_id: w.trade, amount: "1.00" }],
      // the world's invoice is paid: each is refused with 409 (a draft's races: Drafts.test.ts)
      "POST /api/v1/invoices/{invoice_id}/finalize": (w) => [`/api/v1/invoices/${w.invoice}/finalize`],
      "POST /api/v1/invoices/{invoice_id}/edit": (w) => [
        `/api/v1/invoices/${w.invoice}/edit`,
        { add_lines: [{ description: "Setup", amount: "5.00" }] }
      ],
      "POST /api/v1/invoices/{invoice_id}/mark_uncollectible": (w) => [
        `/api/v1/invoices/${w.invoice}/mark_uncollectible`
      ],
      "POST /api/v1/invoices/{invoice_id}/void": (w) => [`/api/v1/invoices/${w.invoice}/void`],
      "POST /api/v1/invoice_settings": () => ["/api/v1/invoice_settings", { invoice_prefix: "RACE" }],
      "POST /api/v1/dispute_settings": () => ["/api/v1/dispute_settings", { fraud_dispute_renewals: "charge" }],
      "POST /api/v1/billing_settings": () => [
        "/api/v1/billing_settings",
        { proration_policy: "per_day", dunning_retry_days: [1, 3] }
      ],
      "POST /api/v1/dunning/preview": () => ["/api/v1/dunning/preview", { decline_class: "hard" }],
      "POST /api/v1/notification_settings": () => [
        "/api/v1/notification_settings",
        { enabled: true, sender: "billing@race.example" }
      ],
      "POST /api/v1/payment_settings": () => ["/api/v1/payment_settings", { provider: "sandbox" }],
      "POST /api/v1/portal_settings": () => ["/api/v1/portal_settings", { cancel: true }],
      "POST /api/v1/customer-portal/auth": (w) => ["/api/v1/customer-portal/auth", { customer_id: w.customer }],
      "POST /api/v1/customer-portal/session/{portal_session_id}/revoke": (w) => [
        `/api/v1/customer-portal/session/${w.portalSession}/revoke`
      ],
      "POST /api/v1/discounts": (w) => [
        "/api/v1/discounts",
        { name: "Same", code: `${w.discountCode}X`, discount_type: "percentage", percent_off: 5, duration: "once" }
      ],
      "POST /api/v1/tax_rates": () => ["/api/v1/tax_rates", { name: "Same", percentage: "7", country: "FR" }],
      "POST /api/v1/billable_metrics": (w) => [
        "/api/v1/billable_metrics",
        { code: `${w.metricCode}_x`, name: "Same", aggregation: "sum", property: "bytes" }
      ],
      "POST /api/v1/billable_metrics/{billable_metric_id}": (w) => [
        `/api/v1/billable_metrics/${w.metricId}`,
        { name: `edited ${Math.random()}` }
      ],
      "POST /api/v1/invoice_items": (w) => [
        "/api/v1/invoice_items",
        { customer_id: w.customer, currency: "USD", unit_amount: "3.00" }
      ],
      "POST /api/v1/invoices": (w) => ["/api/v1/invoices", { customer_id: w.customer }],
      "POST /api/v1/meter_events": (w) => [
        "/api/v1/meter_events",
        { transaction_id: "same-meter-event", customer_id: w.customer, code: w.metricCode, properties: { n: 1 } }
      ],
      "POST /api/v1/meter_events/batch": (w) => [
        "/api/v1/meter_events/batch",
        { events: [{ transaction_id: "same-meter-batch", customer_id: w.customer, code: w.metricCode }] }
      ],
      "POST /api/v1/meter_events/{transaction_id}/void": () => ["/api/v1/meter_events/same-meter-event/void"],
      "POST /api/v1/meter_events/{transaction_id}/amend": () => [
        "/api/v1/meter_events/same-meter-batch/amend",
        { transaction_id: "same-meter-amended" }
      ],
      "POST /api/v1/subscription/{subscription_id}/usage_adjustments/preview": (w) => [
        `/api/v1/subscription/${w.sub}/usage_adjustments/preview`,
        { timestamp: "2026-01-02T00:00:00Z" }
      ],
      "POST /api/v1/usage_adjustments/{usage_adjustment_id}/apply": () => ["/api/v1/usage_adjustments/uadj_none/apply"],
      "POST /api/v1/invoice_item/{invoice_item_id}/delete": (w) => [`/api/v1/invoice_item/${w.invoiceItem}/delete`],
      "POST /api/v1/usage_alerts": (w) => [
        "/api/v1/usage_alerts",
        { subscription_id: w.sub, billable_metric_id: w.metricCode, thresholds: [{ type: "value", value: "5" }] }
      ],
      "POST /api/v1/subscription/{subscription_id}/progressive_billing": (w) => [
        `/api/v1/subscription/${w.sub}/progressive_billing`,
        { progressive_billing_threshold: "25.00" }
      ],
      "POST /api/v1/usage_alerts/{usage_alert_id}/delete": (w) => [`/api/v1/usage_alerts/${w.usageAlert}/delete`],
      "POST /api/v2/webhook/endpoints": () => ["/api/v2/webhook/endpoints", { url: "https://hooks.example/same" }],
      "POST /api/v2/webhook/endpoints/{endpoint_id}": (w) => [
        `/api/v2/webhook/endpoints/${w.endpoint}`,
        { desc: `edited ${Math.random()}` }
      ],
      "POST /api/v2/webhook/events/{event_id}/resend": (w) => [`/api/v2/webhook/events/${w.event}/resend`],
      "POST /api/v1/test_helpers/advance_clock": () => [
        "/api/v1/test_helpers/advance_clock",
        { frozen_time: "2026-01-10T00:00:00Z" }
      ],
      // destructive: last
      "POST /api/v1/subscription/{subscription_id}/cancel": (w) => [
        `/api/v1/subscription/${w.sub}/cancel`,
        { cancel_type: "end_of_period" }
      ],
      "POST /api/v1/subscription/{subscription_id}/revoke-cancel": (w) => [
        `/api/v1/subscription/${w.sub}/revoke-cancel`
      ],
      "POST /api/v1/discount/{discount_id}/end": (w) => [`/api/v1/discount/${w.discountId}/end`],
      "POST /api/v1/tax_rate/{tax_rate_id}/archive": (w) => [`/api/v1/tax_rate/${w.taxRateId}/archive`],
      "POST /api/v1/credit_grants/{credit_grant_id}/void": (w) => [`/api/v1/credit_grants/${w.grant}/void`],
      "POST /api/v1/billable_metrics/{billable_metric_id}/archive": (w) => [
        `/api/v1/billable_metrics/${w.metricId}/archive`
      ],
      "POST /api/v2/webhook/endpoints/{endpoint_id}/delete": (w) => [`/api/v2/webhook/endpoints/${w.endpoint}/delete`],
      "POST /api/v1/front/customer/delete": (w) => ["/api/v1/front/customer/delete", { customer_id: w.customer }]
    }

    it("a lost race's 409 is not kept for its Request-Id: the retry runs again (a real conflict's answer is replayed)", async () => {
      const { api_key: key } = await api.merchant()
      let runs = 0
      const answer = (requestId: string, outcome: "race" | "conflict") => {
        const request = HttpServerRequest.fromWeb(
          new Request("http://localhost/api/v1/anything", {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "request-id": requestId, "content-type": "application/json" },
            body: "{}"
          })
        )
        const app = Effect.suspend(() => {
          runs++
          return outcome === "race"
            ? Effect.die(new Store.VersionConflict({ entity: "subscription", id: "sub_x" }))
            : Effect.succeed(HttpServerResponse.jsonUnsafe({ code: "state_conflict" }, { status: 409 }))
        })
        return api.runtime
          .runPromise(
            Http.middleware(app).pipe(
              Effect.provideService(HttpServerRequest.HttpServerRequest, request)
            ) as Effect.Effect<HttpServerResponse.HttpServerResponse, never, never>
          )
          .then((r) => [r.status, r.headers["idempotent-replayed"] ?? null])
      }
      expect(await answer("race-1", "race")).toEqual([409, null])
      expect(await answer("race-1", "race")).toEqual([409, null])
      expect(runs).toBe(2)
      expect(await answer("conflict-1", "conflict")).toEqual([409, null])
      expect(await answer("conflict-1", "conflict")).toEqual([409, "true"])
      expect(runs).toBe(3)
    })

    /** The write operations of the API's own OpenAPI document. */
    const documentedWrites = async () => {
      const doc = (await (await api.handler(new Request("http://localhost/openapi.json"))).json()) as {
        paths: Record<string, Record<string, unknown>>
      }
      return Object.entries(doc.paths).flatMap(([path, operations]) =>
        Object.keys(operations)
          .filter((method) => ["post", "put", "patch", "delete"].includes(method))
          .map((method) => `${method.toUpperCase()} ${path}`)
      )
    }

    const fire = (w: World, operation: string) => {
      const [path, body] = writes[operation]!(w)
      return api.call(operation.split(" ")[0]!, path, w.key, body ?? {})
    }

    it("every write operation of the OpenAPI document, fired at once on one object: 2xx or 4xx, never 500", async () => {
      const operations = await documentedWrites()
      expect(operations.length).toBeGreaterThan(30)
      // a new write operation needs its row here: the test covers the whole document
      expect(operations.filter((o) => !(o in writes))).toEqual([])
      const w = await world()
      const failures: Array<string> = []
      for (const operation of Object.keys(writes)) {
        const answers = await Promise.all(Array.from({ length: AT_ONCE }, () => fire(w, operation)))
        for (const r of answers) {
          if (r.status >= 500) failures.push(`${operation}: ${r.status} ${JSON.stringify(r.body)}`)
          // a lost race is said so: 409 state_conflict (or the operation's own 4xx)
          else expect(r.status === 200 || (r.status >= 400 && r.status < 500), `${operation}: ${r.status}`).toBe(true)
        }
      }
      expect(failures).toEqual([])
    })

    it("all the subscription's writes at once, together, on one subscription: never 500, and it is still one subscription", async () => {
      const w = await world()
      const onSubscription = Object.keys(writes).filter(
        (o) => o.includes("{subscription_id}") && !o.endsWith("/cancel") && !o.endsWith("/revoke-cancel")
      )
      expect(onSubscription.length).toBeGreaterThanOrEqual(10)
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all(onSubscription.flatMap((o) => [fire(w, o), fire(w, o)]))
        const failed = answers.filter((r) => r.status >= 500).map((r) => JSON.stringify(r.body))
        expect(failed).toEqual([])
      }
      const after = await api.call("GET", `/api/v1/subscription/${w.sub}`, w.key)
      expect(after.status).toBe(200)
      // the changes that won were applied whole: one pending price change at most, a known status
      expect(["active", "paused", "past_due"]).toContain(after.body.data.subscription.status)
    })

    it("two item changes racing on one subscription: one succeeds, the other is 409, the items are exactly one change's", async () => {
      const { api_key: key } = await api.merchant({ frozen: "2026-01-01T00:00:00Z" })
      const { priceId, productId } = await api.priceOf(key)
      const seat = (
        await api.call("POST", "/api/v1/prices", key, {
          name: "Seat",
          product_id: productId,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "12.00" }
        })
      ).body.data.price_id as string
      for (let round = 0; round < 3; round++) {
        const { sub } = await subscribed(key, priceId)
        const base = (await api.call("GET", `/api/v1/subscription/${sub}/items`, key)).body.data.items[0].id as string
        const changes = [{ items: [{ price_id: seat, quantity: 4 }] }, { items: [{ id: base, quantity: 3 }] }]
        const quotes = await Promise.all(
          changes.map((c) => api.call("POST", `/api/v1/subscription/${sub}/items/preview`, key, c))
        )
        for (const q of quotes) expect(q.status, JSON.stringify(q.body)).toBe(200)
        const answers = await Promise.all(
          changes.map((c, i) =>
            api.call("POST", `/api/v1/subscription/${sub}/items`, key, {
              ...c,
              quote_id: quotes[i]!.body.data.quote_id
            })
          )
        )
        expect(answers.map((r) => r.status).sort()).toEqual([200, 409])
        const lost = answers.find((r) => r.status === 409)!
        expect(lost.body.code).toBe("state_conflict")
        const won = answers.findIndex((r) => r.status === 200)
        const items = (await api.call("GET", `/api/v1/subscription/${sub}/items`, key)).body.data.items.map(
          (i: { price_id: string; quantity: string }) => [i.price_id, i.quantity]
        )
        expect(items).toEqual(
          won === 0
            ? [
                [priceId, "1"],
                [seat, "4"]
              ]
            : [[priceId, "3"]]
        )
        // one upgrade invoice, the winner's
        const upgrades = (await api.call("GET", "/api/v1/invoices?limit=100", key)).body.data.list.filter(
          (i: { subscription_id: string; invoice_type: string }) =>
            i.subscription_id === sub && i.invoice_type === "upgrade"
        )
        expect(upgrades).toHaveLength(1)
      }
    })

    for (const [state, until] of [
      ["past_due", "2026-02-01T12:00:00Z"],
      ["unpaid", "2026-02-20T00:00:00Z"]
    ] as const)
      it(`a ${state} subscription's invoice paid on its page while the customer saves a card in the portal and the merchant one over REST: no 500, paid once`, async () => {
        const { api_key: key } = await api.merchant({ frozen: "2026-01-01T00:00:00Z" })
        const { priceId } = await api.priceOf(key)
        // this card pays the checkout, then declines the renewal (and every retry): its invoice stays unpaid
        const { sub, customer } = await subscribed(key, priceId, "4000000000000341")
        await api.call("POST", "/api/v1/test_helpers/advance_clock", key, { frozen_time: until })
        expect((await api.call("GET", `/api/v1/subscription/${sub}`, key)).body.data.subscription.status).toBe(state)
        const unpaid = (
          await api.call("GET", `/api/v1/invoices?subscription_id=${sub}&limit=10`, key)
        ).body.data.list.find((i: { biz_status: string }) => i.biz_status !== "success")
        const invoicePage = new URL(unpaid.hosted_invoice_url).pathname
        const portal = (await api.call("POST", "/api/v1/customer-portal/auth", key, { customer_id: customer })).body
          .data.portal_session
        const portalPath = new URL(portal.url).pathname
        const form = (fields: Record<string, string>) =>
          ({
            method: "POST",
            redirect: "manual",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams(fields).toString()
          }) as const
        const visa = { card_number: "4242424242424242", ...card }
        const answers = await Promise.all(
          Array.from({ length: 8 }, () => [
            api.handler(new Request(`http://localhost${invoicePage}/pay`, form(visa))).then((r) => r.status),
            api
              .handler(new Request(`http://localhost${portalPath}/subscription/${sub}/payment_method`, form(visa)))
              .then((r) => r.status),
            api
              .call("POST", `/api/v1/subscription/${sub}/payment_method`, key, {
                card_number: "5555555555554444",
                exp_month: 12,
                exp_year: 2030,
                cvc: "123"
              })
              .then((r) => {
                // a lost race over REST is the API's 409, said so
                if (r.status === 409) expect(r.body.code).toMatch(/^(state_conflict|session_conflict)$/)
                return r.status
              })
          ]).flat()
        )
        expect(answers.filter((s) => s >= 500)).toEqual([])
        // money stays right: the invoice is paid, once
        const after = (await api.call("GET", `/api/v1/invoice/${unpaid.invoice_id}`, key)).body.data.invoice
        expect(after.biz_status).toBe("success")
        // two payments succeeded in all: the checkout's, and this invoice's once
        const succeeded = (await api.call("GET", "/api/v1/trades?limit=100", key)).body.data.list.filter(
          (t: { trade_status: string }) => t.trade_status === "succeeded"
        )
        expect(succeeded).toHaveLength(2)
        expect((await api.call("GET", `/api/v1/subscription/${sub}`, key)).body.data.subscription.status).toBe("active")
      })
  })
}
