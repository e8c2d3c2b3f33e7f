import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Fake from "./fake/StripeFake.js"
import * as Harness from "./harness.js"

// A credit note that reduces a sent (open) invoice never leaves less than Stripe's minimum
// charge to pay (0.50 USD): what remains is still charged on the invoice's page, and Stripe would
// refuse it (docs/customer-balance.md, "Reducing an open invoice"). Through REST, with the Stripe
// adapter on the local fake, on PGlite and PostgreSQL.

const SECRET = "whsec_unitslocalfakesecret"

for (const [name, storage] of Harness.storages) {
  describe(`reduce_invoice under Stripe's minimum charge (${name})`, { timeout: 180_000 }, () => {
    let fake: Fake.StripeFake
    let api: ReturnType<typeof Harness.perMerchant>
    beforeAll(async () => {
      fake = await Fake.start()
      api = Harness.perMerchant(storage(), fake)
    }, 120_000)
    afterAll(async () => {
      await api.dispose()
      await fake.close()
    })

    it("leaving 0.20 to pay is refused and changes nothing; leaving 0.50, or nothing, is issued", async () => {
      const m = await Harness.stripeMerchant(api, fake, "USD", SECRET)
      const { sub } = await m.checkout(await m.price("10.00"))
      await m.ok("POST", `/api/v1/subscription/${sub}/collection_method`, {
        collection_method: "send_invoice",
        days_until_due: 30
      })
      await m.advance("2026-02-01T00:00:00Z")
      const renewal = (await m.invoices(sub)).find((i: any) => i.invoice_type === "renewal")
      expect([renewal.biz_status, renewal.amount_remaining]).toEqual(["open", "10.00"])
      const path = `/api/v1/invoices/${renewal.invoice_id}/credit_notes`
      const refused = await api.call("POST", path, m.key, { amount: "9.80", method: "reduce_invoice", reason: "x" })
      expect([refused.status, (refused.body as any).code, (refused.body as any).data?.param]).toEqual([
        400,
        "InvalidParameter",
        "amount"
      ])
      expect((await m.invoices(sub)).find((i: any) => i.invoice_id === renewal.invoice_id).amount_remaining).toBe(
        "10.00"
      )
      await m.ok("POST", path, { amount: "9.50", method: "reduce_invoice", reason: "outage" })
      expect((await m.invoices(sub)).find((i: any) => i.invoice_id === renewal.invoice_id).amount_remaining).toBe(
        "0.50"
      )
      // all that remains: settled, nothing charged
      await m.ok("POST", path, { amount: "0.50", method: "reduce_invoice", reason: "outage" })
      const settled = (await m.invoices(sub)).find((i: any) => i.invoice_id === renewal.invoice_id)
      expect([settled.amount_remaining, settled.biz_status]).toEqual(["0.00", "success"])
      expect(fake.violations).toEqual([])
    })
  })
}
