/**
 * Private prices and catalog migrations end to end over REST: a private price hidden from the
 * lists, read by id with its customer, refused (404 naming the field) to another customer's
 * checkout and change; a migration previewed, paged, run by the worker (the sandbox clock's
 * advance), completed with its counts, one `v2.subscription.migrated` per subscription, billed at
 * the new version; refused inputs name their field; cancel before a run, 409 after.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"

for (const [name, storage] of backends()) {
  describe(`private prices and catalog migrations (${name})`, { timeout: 180_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const pay = (sessionId: string) =>
      api.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )
    const subscribe = async (k: string, body: Record<string, unknown>) => {
      const s = await api.call("POST", "/api/v1/session", k, body)
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      const id = (s.body as any).data.session_id as string
      expect((await pay(id)).status).toBe(200)
      return ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session
    }
    const monthly = (productId: string, base: string, extra: Record<string, unknown> = {}) => ({
      name: `Plan ${base}`,
      product_id: productId,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", base_price_val: base },
      ...extra
    })
    const ids = (body: any) => (body.data.list as Array<any>).map((p) => p.id).sort()

    it("a private price: hidden from lists, shown for its customer, 404 for another customer's checkout and change", async () => {
      const k = (await api.merchant()).api_key
      const { priceId: publicPrice, productId } = await api.priceOf(k)
      const customer = async (payer_id: string) =>
        ((await api.call("POST", "/api/v1/front/customer/create", k, { payer_id })).body as any).data
          .customer_id as string
      const alice = await customer("alice")
      const bob = await customer("bob")
      const created = await api.call("POST", "/api/v1/prices", k, monthly(productId, "25.00", { customer_id: alice }))
      expect(created.status, JSON.stringify(created.body)).toBe(200)
      const deal = (created.body as any).data
      const read = await api.call("GET", `/api/v1/prices/version/${deal.price_version_id}`, k)
      expect((read.body as any).data.customer_id).toBe(alice)
      expect(ids((await api.call("GET", "/api/v1/prices", k)).body)).toEqual([publicPrice])
      expect(ids((await api.call("GET", `/api/v1/prices?customer_id=${alice}`, k)).body)).toEqual(
        [publicPrice, deal.price_id].sort()
      )
      expect(ids((await api.call("GET", `/api/v1/prices?customer_id=${bob}`, k)).body)).toEqual([publicPrice])
      const unknown = await api.call(
        "POST",
        "/api/v1/prices",
        k,
        monthly(productId, "1.00", { customer_id: "cus_nobody" })
      )
      expect([unknown.status, (unknown.body as any).code, (unknown.body as any).data.param]).toEqual([
        404,
        "resource_not_found",
        "customer_id"
      ])

      const refused = await api.call("POST", "/api/v1/session", k, {
        customer_id: bob,
        line_items: [{ price_id: deal.price_id }]
      })
      expect([refused.status, (refused.body as any).code]).toEqual([404, "resource_not_found"])
      expect((refused.body as any).data.param).toMatch(/price_id/)
      const bound = await api.call("POST", "/api/v1/session", k, {
        email: "alice@example.com",
        line_items: [{ price_id: deal.price_id }]
      })
      expect(bound.status, JSON.stringify(bound.body)).toBe(200)
      const boundId = (bound.body as any).data.session_id as string
      expect(((await api.call("GET", `/api/v1/session/${boundId}`, k)).body as any).data.session.customer_id).toBe(
        alice
      )

      const bobs = await subscribe(k, { payer_id: "bob", line_items: [{ price_id: publicPrice }] })
      const change = await api.call("POST", `/api/v1/subscription/${bobs.subscription_id}`, k, {
        price_id: deal.price_id
      })
      expect([change.status, (change.body as any).code, (change.body as any).data.param]).toEqual([
        404,
        "resource_not_found",
        "price_id"
      ])
      const alices = await subscribe(k, { payer_id: "alice", line_items: [{ price_id: deal.price_id }] })
      expect(alices.customer_id).toBe(alice)
    })

    it("a migration: preview with next invoices before and after, paged lines, run by the worker, completed; refusals and cancel", async () => {
      const k = (await api.merchant({ frozen: "2026-03-01T00:00:00Z" })).api_key
      const { priceId, productId } = await api.priceOf(k)
      const v1 = ((await api.call("GET", `/api/v1/price/${priceId}/versions`, k)).body as any).data.list[0]
        .price_version_id as string
      const subs: Array<any> = []
      for (const payer of ["p1", "p2", "p3"])
        subs.push(await subscribe(k, { payer_id: payer, line_items: [{ price_id: priceId }] }))
      // a second version at 40.00: the price's current version from now on
      const made = await api.call("POST", `/api/v1/price/${priceId}/versions`, k, monthly(productId, "40.00"))
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      const v2 = (made.body as any).data
      expect(v2).toMatchObject({ id: priceId, biz_status: "active", customer_id: null })
      const path = `/api/v1/price/${priceId}/migrations`
      const bad = async (body: Record<string, unknown>, status: number, param: string, at = path) => {
        const r = await api.call("POST", at, k, body)
        expect([r.status, (r.body as any).data?.param], JSON.stringify(r.body)).toEqual([status, param])
      }
      await bad({ to_version_id: v2.price_version_id }, 400, "from_version_id")
      await bad({ from_version_id: v1 }, 400, "to_version_id")
      await bad({ from_version_id: v1, to_version_id: v2.price_version_id, effective: "immediate" }, 400, "effective")
      // a version on another interval is refused: a migration keeps each subscription's calendar
      const other = await api.priceOf(k, {}, { product: "Other", price: "Other monthly" })
      const otherV1 = ((await api.call("GET", `/api/v1/price/${other.priceId}/versions`, k)).body as any).data.list[0]
        .price_version_id as string
      const yearlyVersion = await api.call("POST", `/api/v1/price/${other.priceId}/versions`, k, {
        ...monthly(other.productId, "400.00"),
        price_plan: { billing_cycle_unit: "year", base_price_val: "400.00" }
      })
      expect(yearlyVersion.status, JSON.stringify(yearlyVersion.body)).toBe(200)
      await bad(
        { from_version_id: otherV1, to_version_id: (yearlyVersion.body as any).data.price_version_id },
        400,
        "to_version_id",
        `/api/v1/price/${other.priceId}/migrations`
      )
      await bad({ from_version_id: v1, to_version_id: "prv_nothing" }, 404, "to_version_id")
      const nothing = await api.call("POST", "/api/v1/price/pri_nothing/migrations", k, {
        from_version_id: v1,
        to_version_id: v2.price_version_id
      })
      expect([nothing.status, (nothing.body as any).code]).toEqual([404, "resource_not_found"])

      const created = await api.call("POST", path, k, { from_version_id: v1, to_version_id: v2.price_version_id })
      expect(created.status, JSON.stringify(created.body)).toBe(200)
      const migration = (created.body as any).data
      expect(migration).toMatchObject({ status: "previewed", total: 3, pending: 3, migrated: 0, skipped: 0 })
      const at = `${path}/${migration.migration_id}`
      const first = (await api.call("GET", `${at}/lines?limit=2`, k)).body as any
      expect([first.data.list.length, first.data.has_more]).toEqual([2, true])
      const rest = (await api.call("GET", `${at}/lines?limit=2&starting_after=${first.data.list[1].line_id}`, k))
        .body as any
      expect([rest.data.list.length, rest.data.has_more]).toEqual([1, false])
      for (const line of [...first.data.list, ...rest.data.list])
        expect(line).toMatchObject({ outcome: "pending", before_amount: "30.00", after_amount: "40.00" })
      const badOutcome = await api.call("GET", `${at}/lines?outcome=done`, k)
      expect([badOutcome.status, (badOutcome.body as any).data.param]).toEqual([400, "outcome"])

      const ran = await api.call("POST", `${at}/run`, k)
      expect([ran.status, (ran.body as any).data.status]).toEqual([200, "running"])
      expect((await api.call("POST", `${at}/cancel`, k)).status).toBe(409)
      // the worker runs it as the sandbox clock moves
      const advanced = await api.call("POST", "/api/v1/test_helpers/advance_clock", k, {
        frozen_time: "2026-03-01T00:00:10Z"
      })
      expect(advanced.status, JSON.stringify(advanced.body)).toBe(200)
      const done = ((await api.call("GET", at, k)).body as any).data
      expect(done).toMatchObject({ status: "completed", total: 3, pending: 0, migrated: 3, skipped: 0 })
      for (const s of subs) {
        const upcoming = (await api.call("GET", `/api/v1/subscription/${s.subscription_id}/upcoming_invoice`, k))
          .body as any
        expect(upcoming.data.upcoming_invoice.amount).toBe("40.00")
      }
      const migrated = ((await api.call("GET", `${at}/lines?outcome=migrated&limit=10`, k)).body as any).data.list
      expect(migrated.map((l: any) => l.subscription_id).sort()).toEqual(subs.map((s) => s.subscription_id).sort())

      // another migration, canceled before it runs; an unknown one is 404
      const again = (
        (await api.call("POST", path, k, { from_version_id: v1, to_version_id: v2.price_version_id })).body as any
      ).data
      // the moved subscriptions bill v1 until their renewal, with the move scheduled: skipped now
      expect([again.total, again.pending, again.skipped]).toEqual([3, 0, 3])
      const canceled = await api.call("POST", `${path}/${again.migration_id}/cancel`, k)
      expect([canceled.status, (canceled.body as any).data.status]).toEqual([200, "canceled"])
      expect((await api.call("POST", `${path}/${again.migration_id}/run`, k)).status).toBe(409)
      const unknown = await api.call("GET", `${path}/pmg_nothing`, k)
      expect([unknown.status, (unknown.body as any).code]).toEqual([404, "resource_not_found"])
    })

    it("a migration of a price held as an add-on item: both lines in the preview, the item moved, the base item kept", async () => {
      const k = (await api.merchant({ frozen: "2026-03-01T00:00:00Z" })).api_key
      const team = await api.priceOf(k, {}, { product: "Team", price: "Team" })
      const sso = await api.priceOf(k, {}, { product: "SSO", price: "SSO" })
      const v1 = ((await api.call("GET", `/api/v1/price/${sso.priceId}/versions`, k)).body as any).data.list[0]
        .price_version_id as string
      const s = await subscribe(k, {
        payer_id: "team",
        line_items: [{ price_id: team.priceId }, { price_id: sso.priceId }]
      })
      const before = (
        (await api.call("GET", `/api/v1/subscription/${s.subscription_id}/upcoming_invoice`, k)).body as any
      ).data.upcoming_invoice
      const made = await api.call("POST", `/api/v1/price/${sso.priceId}/versions`, k, monthly(sso.productId, "120.00"))
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      const v2 = (made.body as any).data.price_version_id as string
      const path = `/api/v1/price/${sso.priceId}/migrations`
      const created = await api.call("POST", path, k, { from_version_id: v1, to_version_id: v2 })
      expect(created.status, JSON.stringify(created.body)).toBe(200)
      const migration = (created.body as any).data
      expect(migration).toMatchObject({ total: 1, pending: 1 })
      const at = `${path}/${migration.migration_id}`
      const sub = ((await api.call("GET", `/api/v1/subscription/${s.subscription_id}`, k)).body as any).data
        .subscription
      const addon = sub.items[1]
      expect(addon.price_id).toBe(sso.priceId)
      const [line] = ((await api.call("GET", `${at}/lines`, k)).body as any).data.list
      // the next invoice holds both items' lines, before and after
      expect(before.amount).toBe("60.00")
      expect(line).toMatchObject({
        item_id: addon.id,
        outcome: "pending",
        before_amount: "60.00",
        after_amount: "150.00"
      })
      expect((await api.call("POST", `${at}/run`, k)).status).toBe(200)
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-03-01T00:00:10Z" })
      expect(((await api.call("GET", at, k)).body as any).data).toMatchObject({ status: "completed", migrated: 1 })
      const upcoming = (
        (await api.call("GET", `/api/v1/subscription/${s.subscription_id}/upcoming_invoice`, k)).body as any
      ).data.upcoming_invoice
      expect(upcoming.amount).toBe("150.00")
      // the subscription bills its items as they are until the renewal; the base item is unchanged
      const after = ((await api.call("GET", `/api/v1/subscription/${s.subscription_id}`, k)).body as any).data
        .subscription
      expect([after.price_id, after.items[1].price_version_id]).toEqual([team.priceId, v1])
      // the move waits for the renewal: the add-on shows it, in the subscription and in its items
      const listed = ((await api.call("GET", `/api/v1/subscription/${s.subscription_id}/items`, k)).body as any).data
        .items
      for (const items of [after.items, listed])
        expect(items.map((i: any) => [i.scheduled_price_version_id, i.pending_change])).toEqual([
          [null, null],
          [v2, null]
        ])
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-04-01T00:00:10Z" })
      const renewed = ((await api.call("GET", `/api/v1/subscription/${s.subscription_id}`, k)).body as any).data
        .subscription
      expect([renewed.price_id, renewed.items[1].price_version_id, renewed.items[1].unit_amount]).toEqual([
        team.priceId,
        v2,
        "120.00"
      ])
      expect(renewed.items[1].scheduled_price_version_id).toBeNull()
    })
  })
}
