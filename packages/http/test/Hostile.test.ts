import { afterAll, beforeAll, describe, expect, it, vi } from "@effect/vitest"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
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

    it("a live merchant's webhook endpoint may not point at a special-purpose address; a sandbox merchant's may", async () => {
      const live = (await api.merchant({ live: true })).api_key
      const endpoint = (k: string, url: string) =>
        api.call("POST", "/api/v2/webhook/endpoints", k, { url, all_events: true })
      for (const url of [
        "http://169.254.169.254/latest/meta-data",
        "http://10.0.0.1/hook",
        "http://[::ffff:7f00:1]:8080/",
        "http://[0:0:0:0:0:ffff:127.0.0.1]/",
        "http://[::ffff:a9fe:a9fe]/",
        "http://[64:ff9b::7f00:1]/",
        "http://0x7f.1/",
        "http://localhost:3000/"
      ])
        expect(refusal(await endpoint(live, url)), url).toEqual([400, "InvalidParameter", "url"])
      const ok = await endpoint(live, "https://hooks.example.com/recur")
      expect(ok.status).toBe(200)
      const id = (ok.body as { data: { id: string } }).data.id
      const moved = await api.call("POST", `/api/v2/webhook/endpoints/${id}`, live, { url: "http://192.168.1.10/" })
      expect(refusal(moved)).toEqual([400, "InvalidParameter", "url"])
      expect((await endpoint(key, "http://127.0.0.1:9999/hook")).status).toBe(200)
    })

    it("no secret or key is stored or logged in plaintext: every table and the logs are searched", async () => {
      const logged: Array<string> = []
      const spies = (["log", "info", "warn", "error", "debug"] as const).map((level) =>
        vi.spyOn(console, level).mockImplementation((...args: Array<unknown>) => {
          logged.push(args.map(String).join(" "))
        })
      )
      try {
        const { api_key } = await api.merchant()
        const body = { url: "https://hooks.example.com/secret-test", all_events: true }
        const headers = { "request-id": "secret-replay-1" }
        const first = await api.call("POST", "/api/v2/webhook/endpoints", api_key, body, headers)
        const secret = (first.body as { data: { secret: string } }).data.secret
        expect(secret).toMatch(/^whsec_/)
        // the replay still answers the secret: the stored answer is encrypted, not dropped
        const replay = await api.call("POST", "/api/v2/webhook/endpoints", api_key, body, headers)
        expect(replay.headers.get("idempotent-replayed")).toBe("true")
        expect((replay.body as { data: { secret: string } }).data.secret).toBe(secret)
        // both backends are SQL stores: the runtime holds their SqlClient
        const everyRow = Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const tables = yield* sql<{ name: string }>`
              select table_name as name from information_schema.tables
              where table_schema = current_schema() and table_type = 'BASE TABLE'`
          const rows = yield* Effect.forEach(
            tables,
            (t) => sql<{ row: string }>`select t::text as row from ${sql(t.name)} t`
          )
          return {
            tables: tables.length,
            text: rows
              .flat()
              .map((r) => r.row)
              .join("\n")
          }
        }) as unknown as Effect.Effect<{ tables: number; text: string }>
        const dump = await api.runtime.runPromise(everyRow)
        expect(dump.tables).toBeGreaterThan(10)
        expect(dump.text).toContain("secret-replay-1")
        for (const plaintext of [secret, secret.slice(6), api_key, api_key.slice(8)]) {
          expect(dump.text.includes(plaintext)).toBe(false)
          expect(logged.some((line) => line.includes(plaintext))).toBe(false)
        }
      } finally {
        for (const spy of spies) spy.mockRestore()
      }
    })

    const priceOf = async (k: string, fields: Record<string, unknown> = {}) => (await api.priceOf(k, fields)).priceId

    /** Pays a checkout session on the hosted route, as code does (`Accept: application/json`). */
    const pay = (sessionId: string, card_number = "4242424242424242") =>
      api.call(
        "POST",
        `/checkout/${sessionId}/pay`,
        null,
        { card_number, exp_month: "12", exp_year: "2030", cvc: "123" },
        { accept: "application/json" }
      )

    it("return_url and cancel_url: only absolute https URLs (http for sandbox merchants), never a script or another origin's path", async () => {
      const live = (await api.merchant({ live: true })).api_key
      const livePrice = await priceOf(live)
      const sandboxPrice = await priceOf(key)
      const session = (k: string, price: string, urls: Record<string, string>) =>
        api.call("POST", "/api/v1/session", k, { payer_id: "redirects", line_items: [{ price_id: price }], ...urls })
      for (const field of ["return_url", "cancel_url"]) {
        for (const url of [
          "javascript:alert(1)",
          "data:text/html,<script>alert(1)</script>",
          "//evil.example/x",
          "/relative/path",
          "not a url",
          "https://user:pass@example.com/",
          `https://example.com/${"x".repeat(2100)}`
        ]) {
          expect(refusal(await session(key, sandboxPrice, { [field]: url })), url).toEqual([
            400,
            "InvalidParameter",
            field
          ])
        }
        expect(refusal(await session(live, livePrice, { [field]: "http://shop.example.com/done" }))).toEqual([
          400,
          "InvalidParameter",
          field
        ])
        // an https URL passes; this engine has the sandbox alone, which takes no live merchant's payments
        expect(refusal(await session(live, livePrice, { [field]: "https://shop.example.com/done" }))).toEqual([
          409,
          "state_conflict",
          undefined
        ])
        expect((await session(key, sandboxPrice, { [field]: "http://localhost:3000/done" })).status).toBe(200)
      }
    })

    it("a line item's quantity must sit inside its own quantity_min and quantity_max", async () => {
      const price = await priceOf(key)
      const session = (line: Record<string, unknown>) =>
        api.call("POST", "/api/v1/session", key, { payer_id: "bounded", line_items: [{ price_id: price, ...line }] })
      for (const [line, param] of [
        [{ quantity: "5", quantity_max: "2" }, "line_items[0].quantity"],
        [{ quantity: "1", quantity_min: "2" }, "line_items[0].quantity"],
        [{ quantity: "2", quantity_min: "3", quantity_max: "2" }, "line_items[0].quantity_min"],
        [{ quantity: "2", quantity_max: "lots" }, "line_items[0].quantity_max"],
        [{ quantity: "2", quantity_min: "0" }, "line_items[0].quantity_min"]
      ] as const)
        expect(refusal(await session(line)), JSON.stringify(line)).toEqual([400, "InvalidParameter", param])
      const ok = await session({ quantity: "2", quantity_min: "1", quantity_max: "5", quantity_editable: true })
      expect(ok.status).toBe(200)
    })

    it("card testing: a session takes 10 pay attempts at once, then 429 with Retry-After and no charge", async () => {
      const price = await priceOf(key)
      const opened = await api.call("POST", "/api/v1/session", key, {
        payer_id: "card-tester",
        line_items: [{ price_id: price }]
      })
      const id = (opened.body as any).data.session_id as string
      const attempt = () => pay(id, "4000000000000002")
      const statuses: Array<number> = []
      for (let i = 0; i < 14; i++) statuses.push((await attempt()).status)
      expect(statuses.slice(0, 10)).toEqual(Array(10).fill(402))
      expect(statuses.slice(10)).toEqual(Array(4).fill(429))
      const limited = await attempt()
      expect(refusal(limited)).toEqual([429, "rate_limit_exceeded", undefined])
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0)
      // the refused attempts never reached the gateway: ten declined attempts are all the trades hold
      const trades = (await api.call("GET", "/api/v1/trades?limit=100", key)).body as any
      const ofSession = trades.data.list.filter((t: { session_id: string }) => t.session_id === id)
      expect(ofSession.length).toBeLessThanOrEqual(10)
    })

    it("usage timestamps outside the open cycle (1970, 9999, before the cycle, in the future) are a 400 naming timestamp", async () => {
      const { api_key: k, merchant } = await api.merchant({ frozen: "2026-03-10T00:00:00Z" })
      const price = await priceOf(k, {
        name: "Calls",
        price_type: "based_on_usage",
        model_type: "per_unit",
        billing_threshold: "1",
        usage_unit_price: "0.10",
        payment_timing: "postpaid",
        billing_dimension: "usage",
        usage_amount: "1",
        usage_unit: "call",
        price_plan: { billing_cycle_unit: "month", base_price_val: "0" }
      })
      const session = await api.call("POST", "/api/v1/session", k, {
        payer_id: "meter",
        line_items: [{ price_id: price }]
      })
      const paid = await pay((session.body as any).data.session_id)
      expect([session.status, paid.status], JSON.stringify(session.body)).toEqual([200, 200])
      const sub = ((await api.call("GET", "/api/v1/subscription?status=active", k)).body as any).data.list[0].id
      const record = (timestamp: string, event_id: string) =>
        api.call("POST", `/api/v1/subscription/${sub}/usage`, k, { usage_count: 5, event_id, timestamp })
      for (const [t, i] of [
        ["1970-01-01T00:00:00Z", 1],
        ["9999-12-31T23:59:59Z", 2],
        ["2026-03-09T23:59:59Z", 3],
        ["2026-03-10T00:06:00Z", 4]
      ] as const)
        expect(refusal(await record(t, `late-${i}`)), t).toEqual([400, "InvalidParameter", "timestamp"])
      const batch = await api.call("POST", "/api/v1/usage/batch", k, {
        records: [
          { subscription_id: sub, usage_count: 1, event_id: "b-ok", timestamp: "2026-03-10T00:00:00Z" },
          { subscription_id: sub, usage_count: 1, event_id: "b-old", timestamp: "1970-01-01T00:00:00Z" }
        ]
      })
      expect(refusal(batch)).toEqual([400, "InvalidParameter", "records[1].timestamp"])
      // nothing was counted; inside the cycle (and within 5 minutes ahead) is fine
      expect((await record("2026-03-10T00:00:00Z", "ok-1")).status).toBe(200)
      expect((await record("2026-03-10T00:04:00Z", "ok-2")).status).toBe(200)
      const summary = await api.call("GET", `/api/v1/subscription/${sub}/usage?merchant_id=${merchant.merchant_id}`, k)
      expect((summary.body as any).data.total_usage_count, JSON.stringify(summary.body)).toBe(10)
    })

    it("concurrent conflicting calls on one subscription answer 200 or a documented 409, never 500", async () => {
      const { api_key: k } = await api.merchant({ frozen: "2026-04-01T00:00:00Z" })
      const price = await priceOf(k)
      const bigger = await priceOf(k, {
        name: "Max monthly",
        price_plan: { billing_cycle_unit: "month", base_price_val: "60.00" }
      })
      const subscribe = async (payer: string) => {
        const session = await api.call("POST", "/api/v1/session", k, {
          payer_id: payer,
          line_items: [{ price_id: price }]
        })
        expect((await pay((session.body as any).data.session_id)).status).toBe(200)
        const list = ((await api.call("GET", "/api/v1/subscription?limit=100", k)).body as any).data.list
        return list.find((x: { customer_id: string; id: string }) => x.id && x.customer_id)!.id as string
      }
      const allowed = (answers: ReadonlyArray<TestClient.Answer>) => {
        for (const a of answers) {
          expect(a.status, JSON.stringify(a.body)).not.toBe(500)
          if (a.status !== 200)
            expect([a.status, (a.body as any).code], JSON.stringify(a.body)).toEqual([409, "state_conflict"])
        }
      }
      const path = (sub: string, action: string) => `/api/v1/subscription/${sub}${action}`

      const renewed = await subscribe("renew-race")
      const renewals = await Promise.all(
        Array.from({ length: 10 }, () => api.call("POST", path(renewed, "/renewal"), k, {}))
      )
      allowed(renewals)
      expect(renewals.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(1)

      const changed = await subscribe("cancel-upgrade-race")
      allowed(
        await Promise.all([
          api.call("POST", path(changed, "/cancel"), k, { cancel_at_period_end: false }),
          api.call("POST", path(changed, ""), k, { price_id: bigger }),
          api.call("POST", path(changed, "/cancel"), k, { cancel_at_period_end: false }),
          api.call("POST", path(changed, ""), k, { price_id: bigger })
        ])
      )

      // a declined checkout retried by several clicks at once: one charge at most, never 500
      const retried = await api.call("POST", "/api/v1/session", k, {
        payer_id: "declined-retry",
        line_items: [{ price_id: price }]
      })
      const retriedId = (retried.body as any).data.session_id as string
      expect((await pay(retriedId, "4000000000000002")).status).toBe(402)
      const retries = await Promise.all(Array.from({ length: 6 }, () => pay(retriedId)))
      for (const a of retries) expect([200, 409], JSON.stringify(a.body)).toContain(a.status)
      expect(retries.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(1)
      const trades = ((await api.call("GET", "/api/v1/trades?limit=100&trade_status=succeeded", k)).body as any).data
        .list
      expect(trades.filter((t: { session_id: string }) => t.session_id === retriedId)).toHaveLength(1)

      const paused = await subscribe("pause-resume-race")
      allowed(
        await Promise.all(
          Array.from({ length: 8 }, (_, i) => api.call("POST", path(paused, i % 2 === 0 ? "/pause" : "/resume"), k, {}))
        )
      )
    })

    it("while one tenant's clock advances over a thousand renewals, another tenant's requests are answered", async () => {
      const { api_key: busy } = await api.merchant({ frozen: "2026-01-01T00:00:00Z" })
      const { api_key: other } = await api.merchant()
      const weekly = await priceOf(busy, {
        name: "Weekly",
        price_plan: { billing_cycle_unit: "week", base_price_val: "3.00" }
      })
      for (let i = 0; i < 10; i++) {
        const session = await api.call("POST", "/api/v1/session", busy, {
          payer_id: `weekly-${i}`,
          line_items: [{ price_id: weekly }]
        })
        expect((await pay((session.body as any).data.session_id)).status).toBe(200)
      }
      // two years of weekly renewals for 10 subscriptions: about 1,040 work items
      let advanced = false
      const advancing = api
        .call("POST", "/api/v1/test_helpers/advance_clock", busy, { frozen_time: "2028-01-01T00:00:00Z" })
        .then((r) => {
          advanced = true
          return r
        })
      // the other tenant's reads and writes are answered while the advance is still running
      for (let i = 0; i < 3; i++) {
        expect((await api.call("GET", "/api/v1/front/customer", other)).status).toBe(200)
        expect(
          (await api.call("POST", "/api/v1/front/customer/create", other, { payer_id: `bystander-${i}` })).status
        ).toBe(200)
      }
      expect(advanced).toBe(false)
      const done = await advancing
      expect((done.body as any).data).toMatchObject({ frozen_time: "2028-01-01T00:00:00Z", complete: true })
      const renewals = await api.call("GET", "/api/v1/invoices?invoice_types=renewal&limit=1", busy)
      expect((renewals.body as any).data.list).toHaveLength(1)
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
