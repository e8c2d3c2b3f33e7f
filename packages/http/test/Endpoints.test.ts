import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"

// Every endpoint through the real adapter, in process: its success and each documented error,
// on PGlite (and once more on PostgreSQL when RECUR_TEST_DATABASE_URL is set).

const card = { exp_month: "12", exp_year: "2030", cvc: "123" }

for (const [name, storage] of backends()) {
  describe(`every endpoint on ${name}`, () => {
    let app: ReturnType<typeof serve>
    // the store (PGlite start and migrations) is built here, not inside the first test's time limit
    beforeAll(async () => {
      app = serve(storage())
      await app.ready()
    }, 120_000)
    afterAll(() => app.dispose())

    const err = (r: { status: number; body: any }) => [r.status, r.body.code, r.body.data?.param]
    const expectEnvelopeError = (r: { status: number; body: any }, status: number, code: string, param?: string) => {
      expect(err(r)).toEqual([status, code, param])
      expect(typeof r.body.message).toBe("string")
      expect(typeof r.body.data.request_id).toBe("string")
    }

    /** A sandbox merchant with a product, a monthly 30.00 price and a paid subscription. */
    const world = async () => {
      const { api_key: key, merchant } = await app.merchant()
      const product = (await app.call("POST", "/api/v1/products", key, { product_name: "Pro" })).body.data
        .product_id as string
      const price = (
        await app.call("POST", "/api/v1/prices", key, {
          name: "Pro monthly",
          product_id: product,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
        })
      ).body.data
      const session = (
        await app.call("POST", "/api/v1/session", key, {
          payer_id: `buyer-${Math.random()}`,
          line_items: [{ price_id: price.price_id }]
        })
      ).body.data.session_id as string
      const paid = await app.call(
        "POST",
        `/checkout/${session}/pay`,
        null,
        { card_number: "4242424242424242", ...card },
        { accept: "application/json" }
      )
      expect([paid.status, paid.body.data.trade_status]).toEqual([200, "succeeded"])
      const sub = (await app.call("GET", "/api/v1/subscription?status=active", key)).body.data.list[0]
      return {
        key,
        merchant_id: merchant.merchant_id as string,
        product,
        price,
        session,
        trade: paid.body.data.trade_id as string,
        sub: sub.id as string
      }
    }

    it("auth and Request-Id: every 401 cause, 400 without Request-Id, 404 for unknown routes", async () => {
      const { api_key } = await app.merchant()
      const rotated = await app.merchant()
      for (const header of [
        undefined,
        "",
        "Bearer",
        `Bearer  ${api_key}`,
        `Bearer\t${api_key}`,
        `bearer ${api_key}`,
        `Basic ${api_key}`,
        api_key,
        `Bearer ${api_key} x`,
        "Bearer sk_test_nope"
      ]) {
        const r = await app.call(
          "GET",
          "/api/v1/products",
          null,
          undefined,
          header === undefined ? {} : { authorization: header }
        )
        expectEnvelopeError(r, 401, "unauthorizedError")
        expect(r.body.message).toContain("ApiKey authentication is required")
        // a key sent and refused is told apart from no key sent
        expect([header, r.body.message.includes("the API key sent is not valid")]).toEqual([
          header,
          header === "Bearer sk_test_nope"
        ])
      }
      expect((await app.call("GET", "/api/v1/products", rotated.api_key)).status).toBe(200)
      expectEnvelopeError(
        await app.call("GET", "/api/v1/products", api_key, undefined, { "request-id": "" }),
        400,
        "InvalidParameter",
        "Request-Id"
      )
      expectEnvelopeError(
        await app.call("GET", "/api/v1/products", api_key, undefined, { "request-id": "x".repeat(256) }),
        400,
        "InvalidParameter",
        "Request-Id"
      )
      expectEnvelopeError(await app.call("GET", "/api/v1/no/such/route", api_key), 404, "resource_not_found")
      expectEnvelopeError(
        await app.call("POST", "/api/v1/front/customer/create", api_key, "{oops"),
        400,
        "invalid_request_error"
      )
    })

    it("customers: create, update, delete, get, list — and their errors", async () => {
      const { api_key: key } = await app.merchant()
      const created = await app.call("POST", "/api/v1/front/customer/create", key, {
        payer_id: "c-1",
        name: "Ada",
        sub_merchant_id: "ignored"
      })
      expect(created.status).toBe(200)
      const id = created.body.data.customer_id
      expectEnvelopeError(
        await app.call("POST", "/api/v1/front/customer/create", key, { payer_id: "c-1" }),
        409,
        "duplicate_resource",
        "payer_id"
      )
      expectEnvelopeError(
        await app.call("POST", "/api/v1/front/customer/create", key, { name: "nobody" }),
        400,
        "InvalidParameter",
        "email"
      )
      expectEnvelopeError(
        await app.call("POST", "/api/v1/front/customer/create", key, { payer_id: "c-9", email: "c9@b.co" }),
        400,
        "invalid_request_error",
        "payer_id"
      )
      expectEnvelopeError(
        await app.call("POST", "/api/v1/front/customer/create", key, { email: "not-an-email" }),
        400,
        "InvalidParameter",
        "email"
      )
      expectEnvelopeError(
        await app.call("POST", "/api/v1/front/customer/create", key, { payer_id: 7 }),
        400,
        "InvalidParameter",
        "payer_id"
      )

      expect(
        (await app.call("POST", "/api/v1/front/customer/update", key, { customer_id: id, name: "Ada L." })).body.data
          .customer_id
      ).toBe(id)
      expectEnvelopeError(
        await app.call("POST", "/api/v1/front/customer/update", key, { customer_id: "cus_nope", name: "x" }),
        404,
        "resource_not_found",
        "customer_id"
      )

      const got = await app.call("GET", `/api/v1/front/customer/${id}`, key)
      expect(got.body.data.customer).toMatchObject({ id, payer_id: "c-1", name: "Ada L." })
      expectEnvelopeError(await app.call("GET", "/api/v1/front/customer/cus_nope", key), 404, "resource_not_found")

      await app.call("POST", "/api/v1/front/customer/create", key, { payer_id: "c-2" })
      const byEmail = (await app.call("POST", "/api/v1/front/customer/create", key, { email: "a@b.co" })).body.data
        .customer_id
      const listed = await app.call("GET", "/api/v1/front/customer?payer_ids=c-1,c-2&limit=1", key)
      expect(listed.body.data.has_more).toBe(true)
      expect(listed.body.data.list).toHaveLength(1)
      expect(
        (await app.call("GET", "/api/v1/front/customer?emails=a@b.co", key)).body.data.list.map((c: any) => c.id)
      ).toEqual([byEmail])
      expect(
        (
          await app.call(
            "GET",
            "/api/v1/front/customer?created_at.gte=2026-01-01T00:00:00Z&created_at.lt=2026-01-02T00:00:00Z",
            key
          )
        ).body.data.list
      ).toHaveLength(3)
      expectEnvelopeError(
        await app.call("GET", "/api/v1/front/customer?limit=0", key),
        400,
        "InvalidParameter",
        "limit"
      )
      expectEnvelopeError(
        await app.call("GET", "/api/v1/front/customer?limit=abc", key),
        400,
        "InvalidParameter",
        "limit"
      )
      expectEnvelopeError(
        await app.call("GET", "/api/v1/front/customer?created_at.gt=yesterday", key),
        400,
        "InvalidParameter",
        "created_at.gt"
      )
      expectEnvelopeError(
        await app.call("GET", "/api/v1/front/customer?type=robot", key),
        400,
        "InvalidParameter",
        "type"
      )
      expectEnvelopeError(
        await app.call(
          "GET",
          `/api/v1/front/customer?payer_ids=${Array.from({ length: 11 }, (_, i) => `p${i}`).join(",")}`,
          key
        ),
        400,
        "InvalidParameter",
        "payer_ids"
      )
      expectEnvelopeError(
        await app.call("GET", `/api/v1/front/customer?starting_after=${id}&ending_before=${id}`, key),
        400,
        "invalid_request_error"
      )
      expectEnvelopeError(
        await app.call("GET", "/api/v1/front/customer?starting_after=cus_01jzzzzzzzzzzzzzzzzzzzzzzz", key),
        400,
        "invalid_request_error",
        "starting_after"
      )

      expect((await app.call("POST", "/api/v1/front/customer/delete", key, { customer_id: id })).body).toEqual({
        code: "success",
        message: "success",
        data: {}
      })
      expectEnvelopeError(
        await app.call("POST", "/api/v1/front/customer/delete", key, { customer_id: id }),
        404,
        "resource_not_found",
        "customer_id"
      )
      // the payer_id is free again
      expect((await app.call("POST", "/api/v1/front/customer/create", key, { payer_id: "c-1" })).status).toBe(200)
    })

    it("a customer whose subscription is not canceled is not deleted (409, nothing changes); once it is canceled, it is", async () => {
      const w = await world()
      const customer = (await app.call("GET", `/api/v1/subscription/${w.sub}`, w.key)).body.data.subscription
        .customer_id as string
      const before = (await app.call("GET", `/api/v1/front/customer/${customer}`, w.key)).body
      const refused = await app.call("POST", "/api/v1/front/customer/delete", w.key, { customer_id: customer })
      expectEnvelopeError(refused, 409, "state_conflict")
      expect(refused.body.message).toContain(w.sub)
      expect(refused.body.message).toContain("cancel it first")
      expect((await app.call("GET", `/api/v1/front/customer/${customer}`, w.key)).body).toEqual(before)
      expect((await app.call("GET", `/api/v1/subscription/${w.sub}`, w.key)).body.data.subscription.status).toBe(
        "active"
      )

      // a cancellation at period end still bills nothing more, but the subscription is live until then
      await app.call("POST", `/api/v1/subscription/${w.sub}/cancel`, w.key, { cancel_type: "end_of_period" })
      expectEnvelopeError(
        await app.call("POST", "/api/v1/front/customer/delete", w.key, { customer_id: customer }),
        409,
        "state_conflict"
      )
      await app.call("POST", `/api/v1/subscription/${w.sub}/cancel`, w.key, { cancel_type: "immediate" })
      expect((await app.call("GET", `/api/v1/subscription/${w.sub}`, w.key)).body.data.subscription.status).toBe(
        "canceled"
      )
      expect((await app.call("POST", "/api/v1/front/customer/delete", w.key, { customer_id: customer })).status).toBe(
        200
      )
      expectEnvelopeError(await app.call("GET", `/api/v1/front/customer/${customer}`, w.key), 404, "resource_not_found")
      // its history stays readable by id
      expect((await app.call("GET", `/api/v1/subscription/${w.sub}`, w.key)).status).toBe(200)
    }, 120_000)

    it("catalog: categories, products and their status, prices, versions and their status — and their errors", async () => {
      const { api_key: key } = await app.merchant()
      const categories = await app.call("GET", "/api/v1/product-categories", key)
      expect(categories.body.data).toMatchObject({ total: 1, list: [{ is_default: true }] })

      const product = await app.call("POST", "/api/v1/products", key, {
        product_name: "Team",
        description: "for teams"
      })
      expect(product.status).toBe(200)
      const productId = product.body.data.product_id
      expectEnvelopeError(
        await app.call("POST", "/api/v1/products", key, { description: "no name" }),
        400,
        "InvalidParameter",
        "product_name"
      )
      // features and metadata round-trip (found by the OpenAPI fuzzer: features once answered 500)
      const features = [
        { id: "seats", name: "Seats ✓", type: "quantity" },
        { id: "ﾋ⌶", name: "[]", type: "f-[=+W~k!/" }
      ]
      const featured = await app.call("POST", "/api/v1/products", key, {
        product_name: "Featured",
        product_status: "draft",
        features,
        metadata: { tier: "gold" },
        quantity_unit: "seat"
      })
      expect(featured.status).toBe(200)
      const listed = (await app.call("GET", "/api/v1/products", key)).body.data.list.find(
        (p: any) => p.product_id === featured.body.data.product_id
      )
      expect(listed).toMatchObject({
        product_name: "Featured",
        product_status: "draft",
        features,
        metadata: { tier: "gold" },
        quantity_unit: "seat"
      })
      expectEnvelopeError(
        await app.call("POST", "/api/v1/products", key, { product_name: "X", category_id: "cat_nope" }),
        404,
        "resource_not_found",
        "category_id"
      )

      const price = await app.call("POST", "/api/v1/prices", key, {
        name: "Team",
        product_id: productId,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        merchant_price_id: "team-m",
        price_plan: { billing_cycle_unit: "month", base_price_val: "12.5" }
      })
      expect(price.status).toBe(200)
      const { price_id, price_version_id } = price.body.data
      expectEnvelopeError(
        await app.call("POST", "/api/v1/prices", key, {
          name: "Team",
          product_id: productId,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          merchant_price_id: "team-m",
          price_plan: { billing_cycle_unit: "month", base_price_val: "1" }
        }),
        409,
        "duplicate_resource",
        "merchant_price_id"
      )
      expectEnvelopeError(
        await app.call("POST", "/api/v1/prices", key, {
          name: "Team",
          product_id: "prd_nope",
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "1" }
        }),
        404,
        "resource_not_found",
        "product_id"
      )
      expectEnvelopeError(
        await app.call("POST", "/api/v1/prices", key, {
          name: "Team",
          product_id: productId,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "1.005" }
        }),
        400,
        "InvalidParameter",
        "price_plan.base_price_val"
      )
      expectEnvelopeError(
        await app.call("POST", "/api/v1/prices", key, {
          name: "Team",
          product_id: productId,
          currency: "XXQ",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "1" }
        }),
        400,
        "InvalidParameter",
        "currency"
      )

      const version = await app.call("GET", `/api/v1/prices/version/${price_version_id}`, key)
      expect(version.body.data).toMatchObject({
        id: price_id,
        price_version_id,
        biz_status: "active",
        created_at: "2026-01-01T00:00:00Z",
        price_plan: { base_price_val: "12.50" }
      })
      expectEnvelopeError(await app.call("GET", "/api/v1/prices/version/prv_nope", key), 404, "resource_not_found")
      expect(
        (await app.call("GET", `/api/v1/prices?product_id=${productId}`, key)).body.data.list.map(
          (v: any) => v.price_version_id
        )
      ).toEqual([price_version_id])
      expect((await app.call("GET", `/api/v1/price/${price_id}/versions`, key)).body.data.list).toHaveLength(1)
      expectEnvelopeError(await app.call("GET", "/api/v1/price/pri_nope/versions", key), 404, "resource_not_found")

      expect(
        (await app.call("POST", `/api/v1/prices/${price_version_id}/status`, key, { status: "frozen" })).body.data
          .price_version_id
      ).toBe(price_version_id)
      expectEnvelopeError(
        await app.call("POST", `/api/v1/prices/${price_version_id}/status`, key, { status: "melted" }),
        400,
        "InvalidParameter",
        "status"
      )
      expectEnvelopeError(
        await app.call("POST", "/api/v1/prices/prv_nope/status", key, { status: "frozen" }),
        404,
        "resource_not_found"
      )
      // a frozen price cannot be sold
      expectEnvelopeError(
        await app.call("POST", "/api/v1/session", key, { payer_id: "p", line_items: [{ price_id }] }),
        409,
        "state_conflict"
      )

      expect(
        (await app.call("POST", `/api/v1/product/${productId}/status`, key, { status: "disabled" })).body.data
      ).toEqual({ product_id: productId, product_status: "disabled" })
      expectEnvelopeError(
        await app.call("POST", `/api/v1/product/${productId}/status`, key, { status: "gone" }),
        400,
        "InvalidParameter",
        "status"
      )
      expectEnvelopeError(
        await app.call("POST", "/api/v1/product/prd_nope/status", key, { status: "active" }),
        404,
        "resource_not_found"
      )
      expect(
        (await app.call("GET", "/api/v1/products?status=disabled", key)).body.data.list.map((p: any) => p.product_id)
      ).toEqual([productId])
      expect((await app.call("GET", "/api/v1/products?status=active", key)).body.data.list).toEqual([])
      expectEnvelopeError(
        await app.call("GET", "/api/v1/products?status=sleeping", key),
        400,
        "InvalidParameter",
        "status"
      )
    })

    it("checkout: create and get a session, pay it in code (200, 402 decline, 400 bad card, 409 paid)", async () => {
      const w = await world()
      const created = await app.call("POST", "/api/v1/session", w.key, {
        payer_id: "s-1",
        line_items: [{ price_id: w.price.price_id }],
        return_url: "https://shop.example/ok"
      })
      expect(created.body.data.session_url).toBe(`http://localhost:4000/checkout/${created.body.data.session_id}`)
      const session = (await app.call("GET", `/api/v1/session/${created.body.data.session_id}`, w.key)).body.data
        .session
      expect(session).toMatchObject({
        session_id: created.body.data.session_id,
        status: "open",
        amount: "30.00",
        currency: "USD"
      })
      expectEnvelopeError(await app.call("GET", "/api/v1/session/ses_nope", w.key), 404, "resource_not_found")
      expectEnvelopeError(
        await app.call("POST", "/api/v1/session", w.key, { payer_id: "s-2", line_items: [] }),
        400,
        "InvalidParameter",
        "line_items"
      )
      expectEnvelopeError(
        await app.call("POST", "/api/v1/session", w.key, { payer_id: "s-2", line_items: [{ price_id: "pri_nope" }] }),
        404,
        "resource_not_found",
        "line_items[0].price_id"
      )

      const pay = (number: string) =>
        app.call(
          "POST",
          `/checkout/${created.body.data.session_id}/pay`,
          null,
          { card_number: number, ...card },
          { accept: "application/json" }
        )
      expectEnvelopeError(await pay("4242424242424241"), 400, "InvalidParameter", "card_number")
      const declined = await pay("4000000000000002")
      expect([declined.status, declined.body.code, declined.body.data.last_payment_error.code]).toEqual([
        402,
        "payment_failed",
        "card_declined"
      ])
      // the decline's class, as the trade keeps it
      expect(declined.body.data.last_payment_error.decline_class).toBe("soft")
      const stolen = await pay("4000000000009979")
      expect([stolen.status, stolen.body.data.last_payment_error]).toEqual([
        402,
        { code: "stolen_card", message: "Your card was declined.", decline_class: "hard" }
      ])
      const paid = await pay("4242424242424242")
      expect([paid.status, paid.body.data.trade_status]).toEqual([200, "succeeded"])
      expectEnvelopeError(await pay("4242424242424242"), 409, "state_conflict")
    })

    it("subscriptions: list with filters, get, preview + change, revoke change, pause/resume, renewal, cancel/revoke — and their errors", async () => {
      const w = await world()
      const sub = (await app.call("GET", `/api/v1/subscription/${w.sub}`, w.key)).body.data.subscription
      expect(sub).toMatchObject({ id: w.sub, status: "active", cancel_at_period_end: false, credit_balance: "0.00" })
      expectEnvelopeError(await app.call("GET", "/api/v1/subscription/sub_nope", w.key), 404, "resource_not_found")
      expect(
        (
          await app.call("GET", `/api/v1/subscription?search_type=trade_id&search_value=${w.trade}`, w.key)
        ).body.data.list.map((s: any) => s.id)
      ).toEqual([w.sub])
      expect(
        (await app.call("GET", `/api/v1/subscription?search_type=customer_id&search_value=${sub.customer_id}`, w.key))
          .body.data.list
      ).toHaveLength(1)
      expect((await app.call("GET", "/api/v1/subscription?billing_cycle_unit=year", w.key)).body.data.list).toEqual([])
      expectEnvelopeError(
        await app.call("GET", "/api/v1/subscription?search_type=nickname&search_value=x", w.key),
        400,
        "InvalidParameter",
        "search_type"
      )

      const bigger = (
        await app.call("POST", "/api/v1/prices", w.key, {
          name: "Pro+",
          product_id: w.product,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" }
        })
      ).body.data.price_id
      const preview = await app.call("POST", `/api/v1/subscription/${w.sub}/preview-change`, w.key, {
        price_id: bigger,
        effective_type: "end_of_period"
      })
      expect(preview.body.data).toMatchObject({
        outcome: "scheduled",
        net: "0.00",
        effective_at: "2026-02-01T00:00:00Z"
      })
      expectEnvelopeError(
        await app.call("POST", `/api/v1/subscription/${w.sub}/preview-change`, w.key, {
          price_id: bigger,
          effective_type: "someday"
        }),
        400,
        "InvalidParameter",
        "effective_type"
      )
      expectEnvelopeError(
        await app.call("POST", `/api/v1/subscription/${w.sub}`, w.key, { price_id: bigger, proration: "sometimes" }),
        400,
        "InvalidParameter",
        "proration"
      )
      expectEnvelopeError(
        await app.call("POST", `/api/v1/subscription/${w.sub}`, w.key, { price_id: "pri_nope" }),
        404,
        "resource_not_found",
        "price_id"
      )
      expect(
        (
          await app.call("POST", `/api/v1/subscription/${w.sub}`, w.key, {
            price_id: bigger,
            effective_type: "end_of_period"
          })
        ).status
      ).toBe(200)
      expect((await app.call("POST", `/api/v1/subscription/${w.sub}/revoke-price-change`, w.key)).body.data).toEqual({
        subscription_id: w.sub,
        result: "revoked"
      })
      expect((await app.call("POST", `/api/v1/subscription/${w.sub}/revoke-price-change`, w.key)).body.data).toEqual({
        subscription_id: w.sub,
        result: "no_pending_change"
      })

      expect((await app.call("POST", `/api/v1/subscription/${w.sub}/pause`, w.key)).body.data).toEqual({
        subscription_id: w.sub,
        status: "paused"
      })
      expectEnvelopeError(await app.call("POST", `/api/v1/subscription/${w.sub}/pause`, w.key), 409, "state_conflict")
      expect((await app.call("POST", `/api/v1/subscription/${w.sub}/resume`, w.key)).body.data.status).toBe("active")
      expectEnvelopeError(await app.call("POST", `/api/v1/subscription/${w.sub}/resume`, w.key), 409, "state_conflict")

      // resuming restarts the period (a new cycle, charged); /renewal charges the next one now
      const renewals = async () =>
        (
          await app.call("GET", `/api/v1/invoices?subscription_id=${w.sub}&invoice_types=renewal`, w.key)
        ).body.data.list.map((i: any) => [i.cycle_index, i.amount, i.biz_status])
      expect(await renewals()).toEqual([[1, "30.00", "success"]])
      expect((await app.call("POST", `/api/v1/subscription/${w.sub}/renewal`, w.key)).body.data).toEqual({
        subscription_id: w.sub,
        status: "active"
      })
      expect(await renewals()).toEqual([
        [2, "30.00", "success"],
        [1, "30.00", "success"]
      ])

      expectEnvelopeError(
        await app.call("POST", `/api/v1/subscription/${w.sub}/cancel`, w.key, { cancel_type: "later" }),
        400,
        "InvalidParameter",
        "cancel_type"
      )
      expect(
        (
          await app.call("POST", `/api/v1/subscription/${w.sub}/cancel`, w.key, {
            cancel_type: "end_of_period",
            cancel_reason: "too pricey"
          })
        ).body.data.status
      ).toBe("active")
      expect(
        (await app.call("GET", `/api/v1/subscription/${w.sub}`, w.key)).body.data.subscription.cancel_at_period_end
      ).toBe(true)
      expect((await app.call("POST", `/api/v1/subscription/${w.sub}/revoke-cancel`, w.key)).body.data.status).toBe(
        "active"
      )
      expect((await app.call("POST", `/api/v1/subscription/${w.sub}/cancel`, w.key, {})).body.data).toEqual({
        subscription_id: w.sub,
        status: "canceled"
      })
      expectEnvelopeError(
        await app.call("POST", `/api/v1/subscription/${w.sub}/revoke-cancel`, w.key),
        409,
        "state_conflict"
      )
      expectEnvelopeError(
        await app.call("POST", `/api/v1/subscription/${w.sub}`, w.key, { price_id: bigger }),
        409,
        "state_conflict"
      )
      expectEnvelopeError(
        await app.call("POST", "/api/v1/subscription/sub_nope/cancel", w.key, {}),
        404,
        "resource_not_found"
      )
      expect(
        (await app.call("GET", "/api/v1/subscription?status=canceled", w.key)).body.data.list.map((s: any) => s.id)
      ).toEqual([w.sub])
    })

    it("usage: record (idempotent by event_id) and summarise — and their errors", async () => {
      const { api_key: key, merchant } = await app.merchant()
      const product = (await app.call("POST", "/api/v1/products", key, { product_name: "API" })).body.data.product_id
      const price = (
        await app.call("POST", "/api/v1/prices", key, {
          name: "Calls",
          product_id: product,
          currency: "USD",
          billing_type: "recurring",
          price_type: "based_on_usage",
          model_type: "per_unit",
          billing_threshold: "1",
          usage_unit_price: "0.10",
          payment_timing: "postpaid",
          billing_dimension: "usage",
          usage_amount: "1",
          usage_unit: "call",
          price_plan: { billing_cycle_unit: "month", base_price_val: "0" }
        })
      ).body.data
      expect(price.price_id).toBeDefined()
      const session = (
        await app.call("POST", "/api/v1/session", key, { payer_id: "u", line_items: [{ price_id: price.price_id }] })
      ).body.data.session_id
      expect(
        (
          await app.call(
            "POST",
            `/checkout/${session}/pay`,
            null,
            { card_number: "4242424242424242", ...card },
            { accept: "application/json" }
          )
        ).status
      ).toBe(200)
      const sub = (await app.call("GET", "/api/v1/subscription?status=active", key)).body.data.list[0].id
      const recorded = await app.call("POST", `/api/v1/subscription/${sub}/usage`, key, {
        usage_count: 40,
        event_id: "ev-1",
        timestamp: "2026-01-01T00:00:00Z"
      })
      expect(recorded.body.data).toEqual({ subscription_id: sub, cycle_index: 0, usage_count: 40, duplicate: false })
      expect(
        (await app.call("POST", `/api/v1/subscription/${sub}/usage`, key, { usage_count: 40, event_id: "ev-1" })).body
          .data.duplicate
      ).toBe(true)
      expectEnvelopeError(
        await app.call("POST", `/api/v1/subscription/${sub}/usage`, key, { usage_count: 0 }),
        400,
        "InvalidParameter",
        "usage_count"
      )
      expectEnvelopeError(
        await app.call("POST", `/api/v1/subscription/${sub}/usage`, key, { event_id: "x" }),
        400,
        "InvalidParameter",
        "usage_count"
      )
      expectEnvelopeError(
        await app.call("POST", `/api/v1/subscription/${sub}/usage`, key, { usage_count: 1, timestamp: "tomorrow" }),
        400,
        "InvalidParameter",
        "timestamp"
      )
      expectEnvelopeError(
        await app.call("POST", "/api/v1/subscription/sub_nope/usage", key, { usage_count: 1 }),
        404,
        "resource_not_found"
      )
      const summary = await app.call(
        "GET",
        `/api/v1/subscription/${sub}/usage?merchant_id=${merchant.merchant_id}`,
        key
      )
      expect(summary.body.data).toMatchObject({ total_usage_count: 40, billing_amount: "4.00" })
      expectEnvelopeError(
        await app.call("GET", `/api/v1/subscription/${sub}/usage`, key),
        400,
        "InvalidParameter",
        "merchant_id"
      )
      expectEnvelopeError(
        await app.call(
          "GET",
          `/api/v1/subscription/${sub}/usage?merchant_id=${merchant.merchant_id}&cycle_index=-1`,
          key
        ),
        400,
        "InvalidParameter",
        "cycle_index"
      )
      expectEnvelopeError(
        await app.call("GET", `/api/v1/subscription/${sub}/usage?merchant_id=mch_someone_else`, key),
        404,
        "resource_not_found"
      )

      // the batch endpoint: many records, duplicates reported, all or nothing
      const batch = await app.call("POST", "/api/v1/usage/batch", key, {
        records: [
          { subscription_id: sub, usage_count: 2, event_id: "b-1", timestamp: "2026-01-01T00:00:00Z" },
          { subscription_id: sub, usage_count: 40, event_id: "ev-1" },
          { subscription_id: sub, usage_count: 3 }
        ]
      })
      expect(batch.status).toBe(200)
      expect(batch.body.data).toMatchObject({ accepted: 2, duplicates: 1 })
      expect(
        batch.body.data.records.map((r: any) => [
          r.event_id === "b-1" || r.event_id === "ev-1" ? r.event_id : "generated",
          r.usage_count,
          r.duplicate
        ])
      ).toEqual([
        ["b-1", 2, false],
        ["ev-1", 40, true],
        ["generated", 3, false]
      ])
      const bad = [
        [{ records: [] }, "records"],
        [{ records: [{ subscription_id: sub, usage_count: 1 }, { subscription_id: sub }] }, "records[1].usage_count"],
        [{ records: [{ usage_count: 1 }] }, "records[0].subscription_id"],
        [
          { records: [{ subscription_id: sub, usage_count: 1, timestamp: "2026-02-30T00:00:00Z" }] },
          "records[0].timestamp"
        ],
        [{ records: [{ subscription_id: sub, usage_count: -1 }] }, "records[0].usage_count"]
      ] as const
      for (const [body, param] of bad)
        expectEnvelopeError(await app.call("POST", "/api/v1/usage/batch", key, body), 400, "InvalidParameter", param)
      expectEnvelopeError(
        await app.call("POST", "/api/v1/usage/batch", key, {
          records: [
            { subscription_id: sub, usage_count: 1, event_id: "lost" },
            { subscription_id: "sub_nope", usage_count: 1 }
          ]
        }),
        404,
        "resource_not_found"
      )
      expect((await app.call("POST", "/api/v1/usage/batch", key, { records: "nope" })).status).toBe(400)
      const after = await app.call("GET", `/api/v1/subscription/${sub}/usage?merchant_id=${merchant.merchant_id}`, key)
      expect(after.body.data).toMatchObject({ total_usage_count: 45, billing_amount: "4.50" })
      // another merchant cannot record usage on this subscription
      const other = await app.merchant()
      expectEnvelopeError(
        await app.call("POST", "/api/v1/usage/batch", other.api_key, {
          records: [{ subscription_id: sub, usage_count: 1 }]
        }),
        404,
        "resource_not_found"
      )
    })

    it("trades, invoices and refunds: get, list with filters, refund — and their errors", async () => {
      const w = await world()
      const trade = (await app.call("GET", `/api/v1/trade/${w.trade}`, w.key)).body.data.trade
      expect(trade).toMatchObject({
        trade_id: w.trade,
        trade_status: "succeeded",
        amount: "30.00",
        refund_status: "no_refund"
      })
      expectEnvelopeError(await app.call("GET", "/api/v1/trade/trd_nope", w.key), 404, "resource_not_found")
      expect(
        (await app.call("GET", `/api/v1/trades?trade_ids=${w.trade}&trade_status=succeeded`, w.key)).body.data.list
      ).toHaveLength(1)
      expect((await app.call("GET", "/api/v1/trades?trade_status=payment_failed", w.key)).body.data.list).toEqual([])

      const invoices = (await app.call("GET", `/api/v1/invoices?trade_ids=${w.trade}`, w.key)).body.data.list
      expect(invoices.map((i: any) => [i.invoice_type, i.amount, i.biz_status])).toEqual([
        ["initial", "30.00", "success"]
      ])
      expect(
        (await app.call("GET", `/api/v1/invoice/${invoices[0].invoice_id}`, w.key)).body.data.invoice.invoice_id
      ).toBe(invoices[0].invoice_id)
      expectEnvelopeError(await app.call("GET", "/api/v1/invoice/inv_nope", w.key), 404, "resource_not_found")
      expect(
        (
          await app.call(
            "GET",
            `/api/v1/subscription?search_type=invoice_id&search_value=${invoices[0].invoice_id}`,
            w.key
          )
        ).body.data.list.map((s: any) => s.id)
      ).toEqual([w.sub])
      expectEnvelopeError(
        await app.call(
          "GET",
          `/api/v1/invoices?invoice_ids=${Array.from({ length: 101 }, (_, i) => `inv_${i}`).join(",")}&limit=101`,
          w.key
        ),
        400,
        "InvalidParameter",
        "limit"
      )

      expectEnvelopeError(
        await app.call("POST", "/api/v1/refund", w.key, { amount: "1.00" }),
        400,
        "InvalidParameter",
        "trade_id"
      )
      expectEnvelopeError(
        await app.call("POST", "/api/v1/refund", w.key, { trade_id: "trd_nope", amount: "1.00" }),
        404,
        "resource_not_found",
        "trade_id"
      )
      expectEnvelopeError(
        await app.call("POST", "/api/v1/refund", w.key, { trade_id: w.trade, amount: "30.01" }),
        400,
        "InvalidParameter",
        "amount"
      )
      expectEnvelopeError(
        await app.call("POST", "/api/v1/refund", w.key, { trade_id: w.trade, amount: "-1" }),
        400,
        "InvalidParameter",
        "amount"
      )
      const refund = await app.call("POST", "/api/v1/refund", w.key, {
        trade_id: w.trade,
        amount: "10.00",
        reason: "goodwill"
      })
      expect(refund.body.data.refund_status).toBe("succeeded")
      expect(
        (await app.call("GET", `/api/v1/refund/${refund.body.data.refund_id}`, w.key)).body.data.refund
      ).toMatchObject({ refund_id: refund.body.data.refund_id, trade_id: w.trade, refund_amount: "10.00" })
      expectEnvelopeError(await app.call("GET", "/api/v1/refund/rfd_nope", w.key), 404, "resource_not_found")
      expect(
        (
          await app.call(
            "GET",
            `/api/v1/subscription?search_type=refund_id&search_value=${refund.body.data.refund_id}`,
            w.key
          )
        ).body.data.list.map((s: any) => s.id)
      ).toEqual([w.sub])
      expect((await app.call("GET", "/api/v1/refunds", w.key)).body.data.list).toHaveLength(1)
      expect((await app.call("GET", `/api/v1/trades/${w.trade}/refunds`, w.key)).body.data.list).toHaveLength(1)
      expectEnvelopeError(await app.call("GET", "/api/v1/trades/trd_nope/refunds", w.key), 404, "resource_not_found")
      expect((await app.call("GET", `/api/v1/trade/${w.trade}`, w.key)).body.data.trade.refund_status).toBe(
        "partially_refunded"
      )
      expect((await app.call("POST", "/api/v1/refund", w.key, { trade_id: w.trade })).body.data.refund_status).toBe(
        "succeeded"
      ) // the rest
      expect((await app.call("GET", `/api/v1/trade/${w.trade}`, w.key)).body.data.trade.refund_status).toBe("refunded")
      expectEnvelopeError(
        await app.call("POST", "/api/v1/refund", w.key, { trade_id: w.trade, amount: "0.01" }),
        400,
        "InvalidParameter",
        "amount"
      )
    })

    it("sandbox clock: advance (200), read (200), backwards (400), a live merchant (409)", async () => {
      const w = await world()
      expect(
        (await app.call("POST", "/api/v1/test_helpers/advance_clock", w.key, { frozen_time: "2026-02-01T00:00:00Z" }))
          .body.data
      ).toEqual({ frozen_time: "2026-02-01T00:00:00Z", target_time: "2026-02-01T00:00:00Z", complete: true })
      expect(
        (await app.call("GET", `/api/v1/invoices?subscription_id=${w.sub}&invoice_types=renewal`, w.key)).body.data.list
      ).toHaveLength(1)
      expect((await app.call("GET", "/api/v1/test_helpers/clock", w.key)).body.data).toEqual({
        frozen_time: "2026-02-01T00:00:00Z",
        target_time: null,
        advancing: false
      })
      expectEnvelopeError(
        await app.call("POST", "/api/v1/test_helpers/advance_clock", w.key, { frozen_time: "2025-01-01T00:00:00Z" }),
        400,
        "InvalidParameter",
        "frozen_time"
      )
      expectEnvelopeError(
        await app.call("POST", "/api/v1/test_helpers/advance_clock", w.key, { frozen_time: "soon" }),
        400,
        "InvalidParameter",
        "frozen_time"
      )
      const live = await app.merchant({ live: true })
      expect(live.api_key).toMatch(/^sk_live_/)
      expectEnvelopeError(
        await app.call("POST", "/api/v1/test_helpers/advance_clock", live.api_key, {
          frozen_time: "2030-01-01T00:00:00Z"
        }),
        409,
        "state_conflict"
      )
      expectEnvelopeError(await app.call("GET", "/api/v1/test_helpers/clock", live.api_key), 409, "state_conflict")
    })

    it("webhooks: endpoints create/update/list/delete, events list — and their errors", async () => {
      const w = await world()
      const created = await app.call("POST", "/api/v2/webhook/endpoints", w.key, {
        url: "https://hooks.example/a",
        event_types: ["v2.subscription.first"]
      })
      expect(created.body.data.secret).toMatch(/^whsec_/)
      const id = created.body.data.id
      expectEnvelopeError(
        await app.call("POST", "/api/v2/webhook/endpoints", w.key, { url: "ftp://hooks.example", all_events: true }),
        400,
        "InvalidParameter",
        "url"
      )
      expectEnvelopeError(
        await app.call("POST", "/api/v2/webhook/endpoints", w.key, {
          url: "https://hooks.example/b",
          event_types: ["v2.nothing.happened"]
        }),
        400,
        "InvalidParameter",
        "event_types"
      )
      const updated = await app.call("POST", `/api/v2/webhook/endpoints/${id}`, w.key, { status: "disabled" })
      expect(updated.body.data).toMatchObject({ id, status: "disabled", url: "https://hooks.example/a" })
      expect(JSON.stringify(updated.body.data)).not.toContain("whsec_")
      expectEnvelopeError(
        await app.call("POST", "/api/v2/webhook/endpoints/we_nope", w.key, { status: "disabled" }),
        404,
        "resource_not_found"
      )
      expect(
        (await app.call("GET", "/api/v2/webhook/endpoints?status=disabled", w.key)).body.data.list.map((e: any) => e.id)
      ).toEqual([id])
      expect((await app.call("GET", "/api/v2/webhook/endpoints?status=enabled", w.key)).body.data.list).toEqual([])
      expect((await app.call("POST", `/api/v2/webhook/endpoints/${id}/delete`, w.key)).body.data).toEqual({})
      expectEnvelopeError(
        await app.call("POST", `/api/v2/webhook/endpoints/${id}/delete`, w.key),
        404,
        "resource_not_found"
      )

      const events = (await app.call("GET", `/api/v2/webhook/events?business_ids=${w.sub}`, w.key)).body.data.list
      expect(events.map((e: any) => e.event_type)).toEqual(["v2.subscription.first"])
      expect(
        (await app.call("GET", "/api/v2/webhook/events?event_types=v2.trades.succeeded", w.key)).body.data.list.length
      ).toBeGreaterThan(0)
      expectEnvelopeError(
        await app.call("GET", "/api/v2/webhook/events?limit=500", w.key),
        400,
        "InvalidParameter",
        "limit"
      )
      // resend: now, to every subscribed endpoint (here one that refuses connections: retrying)
      const refusing = (
        await app.call("POST", "/api/v2/webhook/endpoints", w.key, {
          url: "http://127.0.0.1:9/hooks",
          all_events: true
        })
      ).body.data.id
      const resent = await app.call("POST", `/api/v2/webhook/events/${events[0].id}/resend`, w.key)
      expect(resent.body.data).toMatchObject({
        id: events[0].id,
        event_type: "v2.subscription.first",
        endpoint_events: [{ endpoint_id: refusing, event_status: "retrying" }]
      })
      expectEnvelopeError(
        await app.call("POST", "/api/v2/webhook/events/evt_nope/resend", w.key),
        404,
        "resource_not_found"
      )
    })

    it("tenant isolation: another merchant's ids, cursors and a spoofed merchant_id give 404 or nothing", async () => {
      const a = await world()
      const customer = (await app.call("POST", "/api/v1/front/customer/create", a.key, { payer_id: "secret-payer" }))
        .body.data.customer_id
      const invoice = (await app.call("GET", `/api/v1/invoices?subscription_id=${a.sub}`, a.key)).body.data.list[0]
        .invoice_id
      const refund = (await app.call("POST", "/api/v1/refund", a.key, { trade_id: a.trade, amount: "1.00" })).body.data
        .refund_id
      const endpoint = (
        await app.call("POST", "/api/v2/webhook/endpoints", a.key, { url: "https://hooks.example/a", all_events: true })
      ).body.data.id
      const b = await app.merchant()
      const key = b.api_key
      const notFound = [
        ["GET", `/api/v1/front/customer/${customer}`],
        ["POST", "/api/v1/front/customer/update", { customer_id: customer, name: "x" }],
        ["POST", "/api/v1/front/customer/delete", { customer_id: customer }],
        ["POST", `/api/v1/product/${a.product}/status`, { status: "disabled" }],
        ["GET", `/api/v1/prices/version/${a.price.price_version_id}`],
        ["GET", `/api/v1/price/${a.price.price_id}/versions`],
        ["POST", `/api/v1/prices/${a.price.price_version_id}/status`, { status: "frozen" }],
        ["GET", `/api/v1/session/${a.session}`],
        ["GET", `/api/v1/subscription/${a.sub}`],
        ["POST", `/api/v1/subscription/${a.sub}`, { price_id: a.price.price_id }],
        ["POST", `/api/v1/subscription/${a.sub}/preview-change`, { price_id: a.price.price_id }],
        ["POST", `/api/v1/subscription/${a.sub}/revoke-price-change`],
        ["POST", `/api/v1/subscription/${a.sub}/cancel`, {}],
        ["POST", `/api/v1/subscription/${a.sub}/revoke-cancel`],
        ["POST", `/api/v1/subscription/${a.sub}/pause`],
        ["POST", `/api/v1/subscription/${a.sub}/resume`],
        ["POST", `/api/v1/subscription/${a.sub}/renewal`],
        ["POST", `/api/v1/subscription/${a.sub}/usage`, { usage_count: 1 }],
        ["GET", `/api/v1/subscription/${a.sub}/usage?merchant_id=${a.merchant_id}`],
        ["GET", `/api/v1/trade/${a.trade}`],
        ["GET", `/api/v1/invoice/${invoice}`],
        ["GET", `/api/v1/refund/${refund}`],
        ["GET", `/api/v1/trades/${a.trade}/refunds`],
        ["POST", `/api/v2/webhook/endpoints/${endpoint}`, { status: "disabled" }],
        ["POST", `/api/v2/webhook/endpoints/${endpoint}/delete`],
        [
          "POST",
          `/api/v2/webhook/events/${(await app.call("GET", `/api/v2/webhook/events?business_ids=${a.sub}`, a.key)).body.data.list[0].id}/resend`
        ]
      ] as const
      for (const [method, path, body] of notFound) {
        const r = await app.call(method, path, key, body)
        expect([path, r.status, r.body.code]).toEqual([path, 404, "resource_not_found"])
      }
      // another merchant's object named in a body is unknown here: 404 naming the field, nothing created
      for (const [path, body, param] of [
        [
          "/api/v1/prices",
          {
            name: "x",
            product_id: a.product,
            currency: "USD",
            billing_type: "recurring",
            price_type: "flat_price",
            price_plan: { billing_cycle_unit: "month", base_price_val: "1" }
          },
          "product_id"
        ],
        ["/api/v1/session", { payer_id: "x", line_items: [{ price_id: a.price.price_id }] }, "line_items[0].price_id"]
      ] as const) {
        const r = await app.call("POST", path, key, body)
        expect([path, r.status, r.body.code, r.body.data.param]).toEqual([path, 404, "resource_not_found", param])
      }
      const refundAttempt = await app.call("POST", "/api/v1/refund", key, { trade_id: a.trade, amount: "1.00" })
      expect([refundAttempt.status, refundAttempt.body.code, refundAttempt.body.data.param]).toEqual([
        404,
        "resource_not_found",
        "trade_id"
      ])
      const empty = [
        `/api/v1/front/customer?payer_ids=secret-payer`,
        `/api/v1/front/customer?customer_ids=${customer}`,
        `/api/v1/products?price_ids=${a.price.price_id}`,
        `/api/v1/prices?product_id=${a.product}`,
        `/api/v1/subscription?subscription_ids=${a.sub}`,
        `/api/v1/subscription?merchant_id=${a.merchant_id}`,
        `/api/v1/subscription?search_type=trade_id&search_value=${a.trade}`,
        `/api/v1/subscription?search_type=invoice_id&search_value=${invoice}`,
        `/api/v1/subscription?search_type=refund_id&search_value=${refund}`,
        `/api/v1/trades?trade_ids=${a.trade}`,
        `/api/v1/invoices?subscription_id=${a.sub}`,
        `/api/v1/invoices?invoice_ids=${invoice}`,
        "/api/v1/refunds",
        `/api/v2/webhook/events?business_ids=${a.sub}`,
        "/api/v2/webhook/endpoints"
      ]
      for (const path of empty) {
        const r = await app.call("GET", path, key)
        expect([path, r.status, r.body.data.list]).toEqual([path, 200, []])
      }
      // a cursor from the other merchant is not a cursor here
      for (const path of [
        `/api/v1/front/customer?starting_after=${customer}`,
        `/api/v1/subscription?ending_before=${a.sub}`,
        `/api/v1/trades?starting_after=${a.trade}`,
        `/api/v1/refunds?starting_after=${refund}`,
        `/api/v2/webhook/endpoints?ending_before=${endpoint}`
      ]) {
        expect([path, (await app.call("GET", path, key)).status]).toEqual([path, 400])
      }
      // and nothing of A's was changed by B's attempts
      expect((await app.call("GET", `/api/v1/subscription/${a.sub}`, a.key)).body.data.subscription.status).toBe(
        "active"
      )
      expect((await app.call("GET", `/api/v1/front/customer/${customer}`, a.key)).status).toBe(200)
    })
  })
}
