import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"

for (const [name, storage] of backends()) {
  describe(`entitlements (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const pay = (sessionId: string, card = "4242424242424242") =>
      api.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { card_number: card, exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
    const subscribe = async (k: string, priceId: string, who: Record<string, unknown>) => {
      const s = await api.call("POST", "/api/v1/session", k, { ...who, line_items: [{ price_id: priceId }] })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const id = (s.body as any).data.session_id as string
      expect((await pay(id)).status).toBe(200)
      return ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session
    }
    const entitlementsOf = async (k: string, customerId: string) => {
      const r = await api.call("GET", `/api/v1/customer/${customerId}/entitlements`, k)
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      return (r.body as any).data
    }

    it("a subscription with an add-on item grants the add-on product's features too; an item's new version at the renewal updates them", async () => {
      const k = (await api.merchant({ frozen: "2026-03-01T00:00:00Z" })).api_key
      const productOf = async (product_name: string, entitlements: Record<string, unknown>) => {
        const r = await api.call("POST", "/api/v1/products", k, { product_name, entitlements })
        expect(r.status, JSON.stringify(r.body)).toBe(200)
        return (r.body as any).data.product_id as string
      }
      const priceOf = async (product_id: string, base: string, entitlements: Record<string, unknown> = {}) => {
        const r = await api.call("POST", "/api/v1/prices", k, {
          name: `Plan ${base}`,
          product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: base },
          entitlements
        })
        expect(r.status, JSON.stringify(r.body)).toBe(200)
        return (r.body as any).data
      }
      const team = await priceOf(await productOf("Team", { seats: 10 }), "49.00")
      const ssoProduct = await productOf("SSO", { sso: true })
      const sso = await priceOf(ssoProduct, "99.00")
      const s = await api.call("POST", "/api/v1/session", k, {
        payer_id: "team-1",
        line_items: [{ price_id: team.price_id }, { price_id: sso.price_id }]
      })
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const sessionId = (s.body as any).data.session_id as string
      expect((await pay(sessionId)).status).toBe(200)
      const session = ((await api.call("GET", `/api/v1/session/${sessionId}`, k)).body as any).data.session
      const customerId = session.customer_id as string
      expect(await entitlementsOf(k, customerId)).toEqual({
        customer_id: customerId,
        features: { seats: 10, sso: true },
        subscription_ids: [session.subscription_id]
      })
      const check = await api.call("GET", `/api/v1/customer/${customerId}/entitlements/sso`, k)
      expect((check.body as any).data).toMatchObject({ enabled: true, value: true })

      // the add-on's price moves to a version granting audit logs too, at the renewal (a catalog migration)
      const v2 = await api.call("POST", `/api/v1/price/${sso.price_id}/versions`, k, {
        name: "SSO 2",
        product_id: ssoProduct,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "99.00" },
        entitlements: { audit_log: true }
      })
      expect(v2.status, JSON.stringify(v2.body)).toBe(200)
      const path = `/api/v1/price/${sso.price_id}/migrations`
      const migration = (
        (
          await api.call("POST", path, k, {
            from_version_id: sso.price_version_id,
            to_version_id: (v2.body as any).data.price_version_id
          })
        ).body as any
      ).data
      expect((await api.call("POST", `${path}/${migration.migration_id}/run`, k)).status).toBe(200)
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-03-01T00:00:10Z" })
      // scheduled, not in force yet
      expect((await entitlementsOf(k, customerId)).features).toEqual({ seats: 10, sso: true })
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-04-01T00:00:10Z" })
      expect((await entitlementsOf(k, customerId)).features).toEqual({ audit_log: true, seats: 10, sso: true })
      const events = await api.call("GET", "/api/v2/webhook/events?limit=100", k)
      const updates = ((events.body as any).data.list as Array<any>).filter(
        (e) => e.event_type === "v2.entitlements.updated"
      )
      expect(updates.length).toBe(2)
    })

    it("features declared on products and prices; a customer's entitlements after checkout, switch and cancel; the policy; errors", async () => {
      const k = (await api.merchant()).api_key
      const product = await api.call("POST", "/api/v1/products", k, {
        product_name: "Pro",
        entitlements: { sso: true, seats: 5 }
      })
      expect(product.status, JSON.stringify(product.body)).toBe(200)
      const productId = (product.body as any).data.product_id as string
      const listed = ((await api.call("GET", "/api/v1/products", k)).body as any).data.list
      expect(listed.find((p: any) => p.product_id === productId).entitlements).toEqual({ sso: true, seats: 5 })
      const priceOf = async (base: string, entitlements: Record<string, unknown>) => {
        const r = await api.call("POST", "/api/v1/prices", k, {
          name: `Pro ${base}`,
          product_id: productId,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: base },
          entitlements
        })
        expect(r.status, JSON.stringify(r.body)).toBe(200)
        const created = (r.body as any).data
        const version = await api.call("GET", `/api/v1/prices/version/${created.price_version_id}`, k)
        return { price_id: created.price_id as string, entitlements: (version.body as any).data.entitlements }
      }
      const big = await priceOf("30.00", { seats: 25, api_calls: 100000 })
      expect(big.entitlements).toEqual({ seats: 25, api_calls: 100000 })
      const small = await priceOf("10.00", { seats: 1, sso: false })

      const session = await subscribe(k, big.price_id, { payer_id: "user-1" })
      const customerId = session.customer_id as string
      expect(await entitlementsOf(k, customerId)).toEqual({
        customer_id: customerId,
        features: { api_calls: 100000, seats: 25, sso: true },
        subscription_ids: [session.subscription_id]
      })
      const check = await api.call("GET", `/api/v1/customer/${customerId}/entitlements/sso`, k)
      expect((check.body as any).data).toEqual({ customer_id: customerId, feature: "sso", enabled: true, value: true })

      // a switch to the small price answers with its features on the very next read
      const change = await api.call("POST", `/api/v1/subscription/${session.subscription_id}`, k, {
        price_id: small.price_id
      })
      expect(change.status, JSON.stringify(change.body)).toBe(200)
      expect((await entitlementsOf(k, customerId)).features).toEqual({ seats: 1, sso: false })

      // the product's features edited: the next read follows
      const edit = await api.call("POST", `/api/v1/product/${productId}/entitlements`, k, {
        entitlements: { sso: true, seats: 5, audit_log: true }
      })
      expect((edit.body as any).data).toEqual({
        product_id: productId,
        entitlements: { sso: true, seats: 5, audit_log: true }
      })
      expect((await entitlementsOf(k, customerId)).features).toEqual({ audit_log: true, seats: 1, sso: false })
      const badEdit = await api.call("POST", `/api/v1/product/${productId}/entitlements`, k, {
        entitlements: { x: 0.5 }
      })
      expect([badEdit.status, (badEdit.body as any).data?.param]).toEqual([400, "entitlements"])
      expect((await api.call("POST", "/api/v1/product/prd_nothing/entitlements", k, { entitlements: {} })).status).toBe(
        404
      )

      const cancel = await api.call("POST", `/api/v1/subscription/${session.subscription_id}/cancel`, k, {
        cancel_type: "immediate"
      })
      expect(cancel.status, JSON.stringify(cancel.body)).toBe(200)
      expect((await entitlementsOf(k, customerId)).features).toEqual({})

      const events = await api.call("GET", "/api/v2/webhook/events?limit=100", k)
      const updates = ((events.body as any).data.list as Array<any>).filter(
        (e) => e.event_type === "v2.entitlements.updated"
      )
      expect(updates.length).toBe(3)

      // the policy
      expect(((await api.call("GET", "/api/v1/entitlement_settings", k)).body as any).data).toEqual({
        granting_statuses: ["trial", "active", "past_due"]
      })
      const set = await api.call("POST", "/api/v1/entitlement_settings", k, {
        granting_statuses: ["active", "paused"]
      })
      expect((set.body as any).data).toEqual({ granting_statuses: ["active", "paused"] })
      const refused = await api.call("POST", "/api/v1/entitlement_settings", k, { granting_statuses: ["canceled"] })
      expect([refused.status, (refused.body as any).data?.param]).toEqual([400, "granting_statuses"])

      // errors
      const unknown = await api.call("GET", "/api/v1/customer/cus_nobody/entitlements", k)
      expect([unknown.status, (unknown.body as any).code]).toEqual([404, "resource_not_found"])
      const badKey = await api.call("POST", "/api/v1/products", k, {
        product_name: "X",
        entitlements: { "Bad-Key": 1 }
      })
      expect([badKey.status, (badKey.body as any).data?.param]).toEqual([400, "entitlements"])
      const tooBig = await api.call("POST", "/api/v1/products", k, {
        product_name: "X",
        entitlements: { seats: 2 ** 60 }
      })
      expect([tooBig.status, (tooBig.body as any).data?.param]).toEqual([400, "entitlements"])
      // another merchant cannot read this customer
      const other = (await api.merchant()).api_key
      expect((await api.call("GET", `/api/v1/customer/${customerId}/entitlements`, other)).status).toBe(404)
    })
  })
}
