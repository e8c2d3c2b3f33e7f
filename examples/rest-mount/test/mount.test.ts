import { afterAll, expect, it } from "@effect/vitest"
import { createApp } from "../src/app.js"

const { close, createMerchant, server } = createApp()
afterAll(close)

it("serves the host's own routes and Recur's API under /billing", async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as { port: number }
  const base = `http://127.0.0.1:${port}`
  expect(await (await fetch(`${base}/health`)).text()).toBe("ok")
  const unauth = await fetch(`${base}/billing/api/v1/product-categories`, { headers: { "request-id": "m1" } })
  expect(unauth.status).toBe(401)
  expect(((await unauth.json()) as { code: string }).code).toBe("unauthorizedError")
  const spec = await fetch(`${base}/billing/openapi.json`)
  expect(spec.status).toBe(200)
  const { api_key } = await createMerchant("Host shop", "EUR")
  const headers = { authorization: `Bearer ${api_key}`, "content-type": "application/json" }
  const created = await fetch(`${base}/billing/api/v1/front/customer/create`, {
    method: "POST",
    headers: { ...headers, "request-id": "m2" },
    body: JSON.stringify({ email: "ada@example.com" })
  })
  const body = (await created.json()) as { code: string; data: { customer_id: string } }
  expect([created.status, body.code]).toEqual([200, "success"])
  const got = await fetch(`${base}/billing/api/v1/front/customer/${body.data.customer_id}`, {
    headers: { ...headers, "request-id": "m3" }
  })
  expect(((await got.json()) as { data: { customer: { email: string } } }).data.customer.email).toBe("ada@example.com")
})
