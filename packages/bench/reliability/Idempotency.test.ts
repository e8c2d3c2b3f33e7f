import { afterAll, describe, expect, it } from "@effect/vitest"
import { SandboxGateway } from "@recur/payment-sandbox"
import { api, paidSubscription, report, size } from "./harness.js"

const app = api()
afterAll(() => app.dispose())

describe("Request-Id idempotency and concurrent refunds", () => {
  it("N keys × 16 concurrent copies: one execution per key; the rest replay or answer request_in_progress", async () => {
    const { api_key } = await app.merchant()
    const keys = size(100, 1000)
    const statuses = new Map<number, number>()
    let replayed = 0
    for (let start = 0; start < keys; start += 25) {
      const batch = Array.from({ length: Math.min(25, keys - start) }, (_, i) => start + i)
      const answers = await Promise.all(
        batch.flatMap((k) =>
          Array.from({ length: 16 }, () =>
            app.call(
              "POST",
              "/api/v1/front/customer/create",
              api_key,
              { payer_id: `idem-${k}`, name: `n${k}` },
              { "request-id": `idem-key-${k}` }
            )
          )
        )
      )
      for (const a of answers) {
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1)
        if (a.headers.get("idempotent-replayed") === "true") replayed++
        expect([200, 409]).toContain(a.status)
        if (a.status === 409) expect(a.body.code).toBe("request_in_progress")
      }
      // every copy that succeeded carries the same customer
      for (const k of batch) {
        const ids = new Set(
          answers
            .filter((a, i) => batch[Math.floor(i / 16)] === k && a.status === 200)
            .map((a) => a.body.data.customer_id)
        )
        expect(ids.size).toBe(1)
      }
    }
    // exactly one customer per key
    let created = 0
    let cursor = ""
    for (;;) {
      const page = (
        await app.call("GET", `/api/v1/front/customer?limit=100${cursor ? `&starting_after=${cursor}` : ""}`, api_key)
      ).body.data
      created += page.list.length
      if (!page.has_more) break
      cursor = page.list.at(-1).id
    }
    expect(created).toBe(keys)
    report(
      `idempotency: ${keys} keys × 16 copies = ${keys * 16} requests → ${created} executions; statuses ${JSON.stringify(Object.fromEntries(statuses))}; ${replayed} replays`
    )

    // a reused key with a different body: 409, nothing executed
    const first = await app.call(
      "POST",
      "/api/v1/front/customer/create",
      api_key,
      { payer_id: "reuse-a" },
      { "request-id": "reuse-1" }
    )
    expect(first.status).toBe(200)
    const other = await app.call(
      "POST",
      "/api/v1/front/customer/create",
      api_key,
      { payer_id: "reuse-b" },
      { "request-id": "reuse-1" }
    )
    expect([other.status, other.body.code]).toEqual([409, "idempotency_conflict"])
    expect((await app.call("GET", "/api/v1/front/customer?payer_ids=reuse-b", api_key)).body.data.list).toEqual([])
  })

  it("20 concurrent partial refunds asking for 150 % of a trade: refunded never exceeds paid, in the database and at the gateway", async () => {
    const { api_key } = await app.merchant()
    const w = await paidSubscription(app, api_key)
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        app.call("POST", "/api/v1/refund", api_key, { trade_id: w.trade, amount: "2.25" })
      )
    )
    const ok = answers.filter((a) => a.status === 200 && a.body.data.refund_status === "succeeded").length
    for (const a of answers) expect([200, 400, 409]).toContain(a.status)
    const trade = (await app.call("GET", `/api/v1/trade/${w.trade}`, api_key)).body.data.trade
    const refunds = (await app.call("GET", `/api/v1/trades/${w.trade}/refunds?limit=100`, api_key)).body.data.list
    const sum = refunds
      .filter((r: any) => r.refund_status === "succeeded")
      .reduce((a: number, r: any) => a + Math.round(Number(r.refund_amount) * 100), 0)
    const atGateway = await app.runtime.runPromise(SandboxGateway.SandboxControls.use((c) => c.refunded(w.trade)))
    expect(sum).toBeLessThanOrEqual(3000)
    expect(Math.round(Number(trade.total_refunded_amount) * 100)).toBe(sum)
    expect(Number(atGateway)).toBe(sum)
    expect(sum).toBe(ok * 225)
    // clients retry conflicts: all that fit get through, never more
    let more = 0
    for (let i = 0; i < 20; i++) {
      const r = await app.call("POST", "/api/v1/refund", api_key, { trade_id: w.trade, amount: "2.25" })
      if (r.status === 200) more++
    }
    expect((ok + more) * 225).toBeLessThanOrEqual(3000)
    expect(ok + more).toBe(13)
    report(
      `concurrent refunds: 20 × 2.25 against 30.00 → ${ok} succeeded at once, ${more} on retry; refunded ${(ok + more) * 2.25} ≤ 30.00`
    )
  })
})
