import { describe, expect, it } from "@effect/vitest"
import { createBilling } from "@recur/embedded"
import type { WebhookEvent } from "@recur/webhooks/verify"
import type { AddressInfo } from "node:net"
import { createReceiver } from "../src/receiver.js"

describe("examples/webhook-receiver", () => {
  it("verifies and handles Recur's deliveries, and rejects a forged one", async () => {
    const billing = await createBilling({ storage: "memory" })
    const { api_key, merchant_id } = await billing.merchants.create({
      name: "Shop",
      currency: "USD",
      frozen_time: Date.parse("2026-01-01T00:00:00Z")
    })
    const events: WebhookEvent[] = []
    const server = createReceiver({ keys: () => [api_key], onEvent: (e) => events.push(e) })
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
    try {
      await billing.webhooks.createEndpoint(merchant_id, { url, all_events: true })
      const product = await billing.catalog.createProduct(merchant_id, { product_name: "Pro" })
      const price = await billing.catalog.createPrice(merchant_id, {
        name: "Pro",
        product_id: product.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "9.00" }
      })
      const session = await billing.checkout.createSession(merchant_id, {
        payer_id: "ada",
        line_items: [{ price_id: price.price_id }]
      })
      await billing.checkout.pay(merchant_id, session.session_id, {
        number: "4242424242424242",
        exp_month: 12,
        exp_year: 2030,
        cvc: "123"
      })
      await billing.webhooks.dispatch()
      expect(events.map((e) => e.type)).toEqual(
        expect.arrayContaining(["v2.subscription.first", "v2.trades.succeeded", "v2.invoice.paid"])
      )
      const forged = await fetch(url, {
        method: "POST",
        body: JSON.stringify(events[0]),
        headers: { "x-timestamp": String(Date.now()), "x-signature": "0".repeat(64) }
      })
      expect([forged.status, await forged.text()]).toEqual([400, "signature_mismatch"])
    } finally {
      server.close()
      await billing.close()
    }
  })
})
