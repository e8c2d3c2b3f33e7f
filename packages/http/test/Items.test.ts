import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { backends, serve } from "./client.js"

// Several items per subscription (issue 33), over HTTP only, on PGlite (and PostgreSQL when configured).
for (const [name, storage] of backends()) {
  describe(`subscription items over HTTP (${name})`, () => {
    let app: ReturnType<typeof serve>
    beforeAll(async () => {
      app = serve(storage())
      await app.ready()
    }, 120_000)
    afterAll(() => app.dispose())
    const pay = async (sessionId: string) =>
      app.handler(
        new Request(`http://localhost/checkout/${sessionId}/pay`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            card_number: "4242424242424242",
            exp_month: "12",
            exp_year: "2030",
            cvc: "123"
          }).toString(),
          redirect: "manual"
        })
      )
    const subscriptionOf = async (key: string, sessionId: string) => {
      const session = await app.call("GET", `/api/v1/session/${sessionId}`, key)
      const subId = (session.body as any).data.session.subscription_id as string
      expect(subId).toMatch(/^sub_/)
      return (await app.call("GET", `/api/v1/subscription/${subId}`, key)).body as any
    }

    it("a single-price subscription answers one item, the base item, mirroring its flat fields", async () => {
      const { api_key: key } = await app.merchant()
      const { priceId } = await app.priceOf(key)
      const session = await app.call("POST", "/api/v1/session", key, {
        payer_id: "one-item",
        return_url: "https://shop.example/ok",
        line_items: [{ price_id: priceId, quantity: "1" }]
      })
      const sessionId = (session.body as any).data.session_id as string
      expect((await pay(sessionId)).status).toBe(303)
      const sub = (await subscriptionOf(key, sessionId)).data.subscription
      expect(sub.items).toHaveLength(1)
      const [item] = sub.items
      expect(item).toMatchObject({
        id: `si_${sub.id.slice(4)}`,
        price_id: sub.price_id,
        price_version_id: sub.price_version_id,
        quantity: sub.quantity,
        price_type: sub.price_type,
        billing_dimension: sub.billing_dimension,
        unit_amount: "30.00",
        currency: "USD",
        created_at: sub.created_at
      })
      const list = (await app.call("GET", `/api/v1/subscription?subscription_ids=${sub.id}`, key)).body as any
      expect(list.data.list[0].items).toEqual(sub.items)
    }, 60_000)
  })
}
