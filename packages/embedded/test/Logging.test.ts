import { afterEach, describe, expect, it, vi } from "@effect/vitest"
import { createBilling } from "../src/index.js"

// An embedder's stdout is its own: the engine prints what needs attention (warnings, errors) by
// default, a line per renewal batch only when asked (`logLevel: "info"`).

/** Subscribes a payer to a monthly plan and bills three renewals; the console's lines meanwhile. */
const billThreeRenewals = async (logLevel?: "info" | "none") => {
  const lines: Array<string> = []
  for (const method of ["log", "info", "warn", "error", "debug"] as const)
    vi.spyOn(console, method).mockImplementation((...args: Array<unknown>) => {
      lines.push(args.map(String).join(" "))
    })
  const billing = await createBilling({ storage: "memory", ...(logLevel ? { logLevel } : {}) })
  try {
    const start = Date.parse("2026-01-01T00:00:00Z")
    const { merchant_id: m } = await billing.merchants.create({ name: "Quiet", currency: "USD", frozen_time: start })
    const product = await billing.catalog.createProduct(m, { product_name: "Team" })
    const price = await billing.catalog.createPrice(m, {
      name: "Team",
      product_id: product.product_id,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", base_price_val: "49.00" }
    })
    const session = await billing.checkout.createSession(m, {
      payer_id: "user-1",
      line_items: [{ price_id: price.price_id }]
    })
    await billing.checkout.pay(m, session.session_id, {
      number: "4242424242424242",
      exp_month: 12,
      exp_year: 2030,
      cvc: "123"
    })
    await billing.advanceClock(m, new Date(start + 95 * 86_400_000))
    const invoices = await billing.invoices.list(m)
    expect(invoices.list.length).toBe(4)
  } finally {
    await billing.close()
  }
  return lines
}

describe("the facade's log lines", () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it("by default, billing renewals prints nothing to the embedder's console", async () => {
    expect(await billThreeRenewals()).toEqual([])
  }, 120_000)

  it('logLevel "info" prints a line per renewal batch, with no secret', async () => {
    const lines = await billThreeRenewals("info")
    expect(lines.filter((l) => l.includes("renewal batch")).length).toBeGreaterThan(0)
    expect(lines.join("\n")).not.toMatch(/sk_test_[A-Za-z0-9]{6}/)
  }, 120_000)
})
