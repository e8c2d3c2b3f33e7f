import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { TestClient } from "@recur/http"
import { backends, serve } from "./client.js"

/** An envelope's status, code and param, for one comparison. */
const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; data?: { param?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}

for (const [name, storage] of backends()) {
  describe(`hostile input (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage())
    let key = ""
    beforeAll(async () => {
      await api.ready()
      key = (await api.merchant()).api_key
    }, 120_000)
    afterAll(() => api.dispose())

    const customer = (body: unknown, headers: Record<string, string> = {}) =>
      api.call("POST", "/api/v1/front/customer/create", key, body, headers)
    /** What a list of customers holds now: a refused request must leave it as it was. */
    const customers = async () =>
      ((await api.call("GET", "/api/v1/front/customer?limit=100", key)).body as any).data.list.length

    it("metadata over its limits is a 400 naming metadata, on every endpoint that takes it", async () => {
      const before = await customers()
      for (const metadata of [
        { a: "x".repeat(501) },
        { ["k".repeat(41)]: "x" },
        Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, "v".repeat(120)]))
      ]) {
        expect(refusal(await customer({ payer_id: "meta", metadata }))).toEqual([400, "InvalidParameter", "metadata"])
        const product = await api.call("POST", "/api/v1/products", key, { name: "P", metadata })
        expect(refusal(product)).toEqual([400, "InvalidParameter", "metadata"])
      }
      expect(await customers()).toBe(before)
    })

    it("a lone surrogate anywhere in a string is a 400 naming the field, and stores nothing", async () => {
      const before = await customers()
      expect(refusal(await customer('{"payer_id":"s1","name":"\\ud800"}'))).toEqual([400, "InvalidParameter", "name"])
      expect(refusal(await customer('{"payer_id":"s2","metadata":{"k":"a\\udc00"}}'))).toEqual([
        400,
        "InvalidParameter",
        "metadata.k"
      ])
      expect(refusal(await customer('{"payer_id":"s3","metadata":{"\\ud83d":"v"}}'))[0]).toBe(400)
      // a well-formed pair (an emoji) is fine
      expect((await customer('{"payer_id":"s4","name":"\\ud83d\\ude00"}')).status).toBe(200)
      expect(await customers()).toBe(before + 1)
    })

    it("JSON nested 10,000 deep is a 400, not a stack overflow", async () => {
      const deep = `{"payer_id":"d","metadata":${'{"a":'.repeat(10_000)}"x"${"}".repeat(10_000)}}`
      expect(refusal(await customer(deep))[0]).toBe(400)
      const wide = `{"payer_id":"d","address":${"[".repeat(40)}${"]".repeat(40)}}`
      expect(refusal(await customer(wide))).toEqual([400, "InvalidParameter", expect.stringContaining("address")])
    })

    it("a body over 1 MiB is a 413 before anything is stored; a long string is a 400 naming it", async () => {
      const before = await customers()
      expect(refusal(await customer({ payer_id: "big", name: "x".repeat(2_000_000) }))).toEqual([
        413,
        "payload_too_large",
        undefined
      ])
      expect(refusal(await customer({ payer_id: "long", name: "x".repeat(5001) }))).toEqual([
        400,
        "InvalidParameter",
        "name"
      ])
      expect(await customers()).toBe(before)
    })

    it("a body that is not JSON on an API route is a 415 at once (multipart, form, text)", async () => {
      for (const type of ["multipart/form-data; boundary=x", "application/x-www-form-urlencoded", "text/plain"]) {
        const r = await api.call("POST", "/api/v1/front/customer/create", key, "--x\r\n", { "content-type": type })
        expect(refusal(r)).toEqual([415, "unsupported_media_type", undefined])
      }
      const charset = await customer({ payer_id: "cs" }, { "content-type": "application/json; charset=utf-8" })
      expect(charset.status).toBe(200)
    })

    it("an unknown value of an enumerated filter is a 400 naming the filter", async () => {
      for (const [path, param] of [
        ["/api/v1/subscription?status=bogus", "status"],
        ["/api/v1/subscription?status=active,bogus", "status"],
        ["/api/v1/subscription?billing_cycle_unit=fortnight", "billing_cycle_unit"],
        ["/api/v1/trades?trade_status=bogus", "trade_status"],
        ["/api/v1/invoices?biz_status=bogus", "biz_status"],
        ["/api/v1/invoices?invoice_types=bogus", "invoice_types"],
        ["/api/v1/prices?status=bogus", "status"],
        ["/api/v2/webhook/events?event_statuses=bogus", "event_statuses"],
        ["/api/v2/webhook/endpoints?status=bogus", "status"]
      ] as const) {
        expect(refusal(await api.call("GET", path, key)), path).toEqual([400, "InvalidParameter", param])
      }
      for (const path of [
        "/api/v1/subscription?status=active&status=canceled",
        "/api/v1/trades?trade_status=succeeded",
        "/api/v1/invoices?biz_status=success&invoice_types=initial,renewal"
      ])
        expect((await api.call("GET", path, key)).status, path).toBe(200)
    })
  })
}
