/**
 * Private prices and catalog migrations through the Promise facade: the same visibility and the
 * same refusals as over REST, and a migration previewed, run by the worker as the sandbox clock
 * moves, and completed.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConflictError, createBilling, InvalidParameterError, NotFoundError, RecurError } from "../src/index.js"

const card = { number: "4242424242424242", exp_month: 12, exp_year: 2099, cvc: "123" }

const rejection = async (p: Promise<unknown>): Promise<RecurError> => {
  try {
    await p
  } catch (e) {
    expect(e).toBeInstanceOf(RecurError)
    return e as RecurError
  }
  throw new Error("the call resolved")
}

describe("billing.catalog: private prices and migrations", () => {
  it("a private price is listed for its customer only, refused to another's checkout; a migration runs once and completes", async () => {
    const billing = await createBilling({ storage: "memory" })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Acme",
        currency: "USD",
        frozen_time: Date.parse("2026-03-01T00:00:00Z")
      })
      const product = await billing.catalog.createProduct(m, { product_name: "Pro" })
      const plan = (base: string) => ({
        name: `Plan ${base}`,
        currency: "USD",
        billing_type: "recurring" as const,
        price_type: "flat_price" as const,
        price_plan: { billing_cycle_unit: "month" as const, base_price_val: base }
      })
      const publicPrice = await billing.catalog.createPrice(m, { ...plan("30.00"), product_id: product.product_id })
      const alice = (await billing.customers.create(m, { payer_id: "alice" })).customer_id
      const bob = (await billing.customers.create(m, { payer_id: "bob" })).customer_id
      const deal = await billing.catalog.createPrice(m, {
        ...plan("25.00"),
        product_id: product.product_id,
        customer_id: alice
      })
      expect(deal.customer_id).toBe(alice)
      expect((await billing.catalog.getPriceVersion(m, deal.price_version_id)).customer_id).toBe(alice)
      const listed = async (filter: { customer_id?: string }) =>
        (await billing.catalog.listPrices(m, filter)).list.map((p) => p.id).sort()
      expect(await listed({})).toEqual([publicPrice.id])
      expect(await listed({ customer_id: alice })).toEqual([publicPrice.id, deal.id].sort())
      expect(await listed({ customer_id: bob })).toEqual([publicPrice.id])
      const refused = await rejection(
        billing.checkout.createSession(m, { customer_id: bob, line_items: [{ price_id: deal.id }] })
      )
      expect(refused).toBeInstanceOf(NotFoundError)
      expect(refused.param).toMatch(/price_id/)

      const subs = []
      for (const payer of ["p1", "p2"]) {
        const session = await billing.checkout.createSession(m, {
          payer_id: payer,
          line_items: [{ price_id: publicPrice.id }]
        })
        subs.push((await billing.checkout.pay(m, session.session_id, card)).subscription!)
      }
      const v2 = await billing.catalog.createPriceVersion(m, publicPrice.id, plan("33.00"))
      expect(v2.id).toBe(publicPrice.id)
      expect(
        await rejection(
          billing.catalog.createMigration(m, publicPrice.id, {
            from_version_id: publicPrice.price_version_id,
            to_version_id: v2.price_version_id,
            effective: "immediate" as "next_cycle"
          })
        )
      ).toMatchObject({ param: "effective" })
      expect(
        await rejection(billing.catalog.createMigration(m, publicPrice.id, { from_version_id: "", to_version_id: "" }))
      ).toBeInstanceOf(InvalidParameterError)
      const migration = await billing.catalog.createMigration(m, publicPrice.id, {
        from_version_id: publicPrice.price_version_id,
        to_version_id: v2.price_version_id
      })
      expect(migration).toMatchObject({ status: "previewed", total: 2, pending: 2 })
      const lines = await billing.catalog.listMigrationLines(m, publicPrice.id, migration.migration_id, { limit: 10 })
      expect(lines.list.map((l) => [l.before_amount, l.after_amount])).toEqual([
        ["30.00", "33.00"],
        ["30.00", "33.00"]
      ])
      expect(
        await rejection(
          billing.catalog.listMigrationLines(m, publicPrice.id, migration.migration_id, { outcome: "x" as "pending" })
        )
      ).toMatchObject({ param: "outcome" })
      expect((await billing.catalog.runMigration(m, publicPrice.id, migration.migration_id)).status).toBe("running")
      expect(
        await rejection(billing.catalog.cancelMigration(m, publicPrice.id, migration.migration_id))
      ).toBeInstanceOf(ConflictError)
      await billing.advanceClock(m, new Date("2026-03-01T00:00:05Z"))
      expect(await billing.catalog.getMigration(m, publicPrice.id, migration.migration_id)).toMatchObject({
        status: "completed",
        pending: 0,
        migrated: 2,
        skipped: 0
      })
      for (const s of subs) expect((await billing.subscriptions.upcomingInvoice(m, s.id))!.amount).toBe("33.00")
      expect(await rejection(billing.catalog.getMigration(m, deal.id, migration.migration_id))).toBeInstanceOf(
        NotFoundError
      )
    } finally {
      await billing.close()
    }
  }, 60_000)
})
