/**
 * Errors as a TypeScript developer expects them from the Promise facade: a decline is a typed
 * outcome of `pay` (with its decline code), a data directory another process holds is its own
 * error class, and a list filter that is not one of its values is refused naming that filter.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  type BillingClient,
  createBilling,
  DataDirLockedError,
  InvalidParameterError,
  RecurError,
  SystemError
} from "@recur/embedded"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const card = (number: string) => ({ number, exp_month: 12, exp_year: 2099, cvc: "123" })

const rejection = async (p: Promise<unknown>): Promise<RecurError> => {
  try {
    await p
  } catch (e) {
    if (e instanceof RecurError) return e
    throw e
  }
  throw new Error("expected a rejection")
}

const withBilling = async (f: (billing: BillingClient, merchantId: string) => Promise<void>) => {
  const billing = await createBilling({ storage: "memory", publicUrl: "http://shop.test" })
  try {
    const { merchant_id } = await billing.merchants.create({ name: "Errors", currency: "USD" })
    await f(billing, merchant_id)
  } finally {
    await billing.close()
  }
}

const sessionOf = async (billing: BillingClient, m: string) => {
  const product = await billing.catalog.createProduct(m, { product_name: "Pro" })
  const price = await billing.catalog.createPrice(m, {
    name: "Pro monthly",
    product_id: product.product_id,
    currency: "USD",
    billing_type: "recurring",
    price_type: "flat_price",
    price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
  })
  return async () =>
    (await billing.checkout.createSession(m, { payer_id: `p-${Math.random()}`, line_items: [{ price_id: price.id }] }))
      .session_id
}

describe("the facade's errors", () => {
  it("a declined payment resolves with status failed and its decline code; a paid one with the subscription", async () => {
    await withBilling(async (billing, m) => {
      const session = await sessionOf(billing, m)
      for (const [number, code] of [
        ["4000000000000002", "card_declined"],
        ["4000000000009995", "insufficient_funds"]
      ] as const) {
        const declined = await billing.checkout.pay(m, await session(), card(number))
        expect(declined.status).toBe("failed")
        if (declined.status !== "failed") throw new Error("unreachable")
        // narrowed by status: the error is there, typed, with the decline code
        expect([declined.error.code, typeof declined.error.message]).toEqual([code, "string"])
        // the subscription waits for a payment that works; nothing is active
        expect([declined.trade.trade_status, declined.subscription?.status]).toEqual(["payment_failed", "incomplete"])
      }
      const paid = await billing.checkout.pay(m, await session(), card("4242424242424242"))
      expect(paid.status).toBe("succeeded")
      if (paid.status !== "succeeded") throw new Error("unreachable")
      expect([paid.error, paid.trade.trade_status, paid.subscription?.status]).toEqual([null, "succeeded", "active"])
    })
  }, 60_000)

  it("a data directory another client holds rejects with DataDirLockedError naming the holder, not a SystemError", async () => {
    const dir = mkdtempSync(join(tmpdir(), "recur-locked-"))
    const first = await createBilling({ storage: { pglite: dir }, logLevel: "none" })
    try {
      const e = await rejection(createBilling({ storage: { pglite: dir }, logLevel: "none" }))
      expect(e).toBeInstanceOf(DataDirLockedError)
      expect(e).not.toBeInstanceOf(SystemError)
      const locked = e as DataDirLockedError
      expect([locked.code, locked.status, locked.dataDir, locked.pid]).toEqual([
        "data_dir_locked",
        423,
        dir,
        process.pid
      ])
      expect(locked.message).toContain(`in use by process ${process.pid}`)
      expect(locked.message).not.toContain("    at ")
      // the first client works on
      expect((await first.merchants.create({ name: "Still", currency: "USD" })).merchant_id).toMatch(/^mch_/)
    } finally {
      await first.close()
      rmSync(dir, { recursive: true, force: true })
    }
    // closed, the directory opens again
  }, 120_000)

  it("a list filter that is not one of its values names the filter, never 'body'", async () => {
    await withBilling(async (billing, m) => {
      const bogus = ["bogus"] as never
      const cases: ReadonlyArray<readonly [string, Promise<unknown>]> = [
        ["status", billing.subscriptions.list(m, { status: bogus })],
        ["billing_cycle_unit", billing.subscriptions.list(m, { billing_cycle_unit: "fortnight" as never })],
        ["trade_status", billing.trades.list(m, { trade_status: bogus })],
        ["type", billing.customers.list(m, { type: "robot" as never })],
        ["status", billing.webhooks.listEndpoints(m, { status: bogus })],
        ["event_statuses", billing.webhooks.listEvents(m, { event_statuses: bogus })],
        ["limit", billing.invoices.list(m, { limit: 0 })]
      ]
      const wrong: Array<string> = []
      for (const [param, call] of cases) {
        const e = await rejection(call)
        if (!(e instanceof InvalidParameterError) || e.param !== param)
          wrong.push(`${param}: ${e.constructor.name} param=${e.param} ${e.message}`)
      }
      expect(wrong).toEqual([])
    })
  }, 60_000)
})
