import { afterAll, describe, expect, it } from "@effect/vitest"
import { api, paidSubscription, report } from "./harness.js"

// Every operation of the OpenAPI document, called by merchant B with merchant A's ids (in the
// path, as filter values, as cursors, in bodies) and A's merchant_id: B gets 404, 400 or an
// empty list — and no answer ever carries anything of A's that B did not send.

const app = api()
afterAll(() => app.dispose())

describe("tenant isolation", () => {
  it("every endpoint with another merchant's ids, cursors, filter values and a spoofed merchant_id", async () => {
    const a = await app.merchant()
    const A = await paidSubscription(app, a.api_key)
    const customer = (
      await app.call("POST", "/api/v1/front/customer/create", a.api_key, {
        payer_id: "secret-payer-a",
        name: "Secret Name A",
        phone: "+1555000111"
      })
    ).body.data.customer_id
    const invoice = (await app.call("GET", `/api/v1/invoices?trade_ids=${A.trade}`, a.api_key)).body.data.list[0]
      .invoice_id
    const refund = (
      await app.call("POST", "/api/v1/refund", a.api_key, {
        trade_id: A.trade,
        amount: "1.00",
        reason: "secret reason a"
      })
    ).body.data.refund_id
    const endpoint = (
      await app.call("POST", "/api/v2/webhook/endpoints", a.api_key, {
        url: "https://a-secret.example/hook",
        all_events: true
      })
    ).body.data.id
    const event = (await app.call("GET", "/api/v2/webhook/events?limit=1", a.api_key)).body.data.list[0].id
    const idsOfA: Record<string, string> = {
      customer_id: customer,
      product_id: A.product,
      price_id: A.price.price_id,
      price_version_id: A.price.price_version_id,
      session_id: A.session,
      subscription_id: A.sub,
      trade_id: A.trade,
      invoice_id: invoice,
      refund_id: refund,
      endpoint_id: endpoint,
      event_id: event,
      merchant_id: a.merchant.merchant_id,
      source_trade_id: A.trade,
      payer_ids: "secret-payer-a",
      customer_ids: customer,
      subscription_ids: A.sub,
      trade_ids: A.trade,
      invoice_ids: invoice,
      price_ids: A.price.price_id,
      order_ids: "order-a",
      business_ids: A.sub,
      search_value: A.sub
    }
    const markers = [
      "secret-payer-a",
      "Secret Name A",
      "+1555000111",
      "https://a-secret.example/hook",
      "secret reason a",
      ...Object.values(idsOfA).filter((v) => /^[a-z]+_[0-9a-z]{26}$/.test(v))
    ]
    const b = await app.merchant()
    const doc = (await app.call("GET", "/openapi.json", null)).body
    let calls = 0
    const leaks: Array<string> = []
    const wrong: Array<string> = []
    const check = async (method: string, url: string, body?: unknown) => {
      const answer = await app.call(method, url, b.api_key, body)
      calls++
      const sent = `${url} ${JSON.stringify(body ?? "")}`
      const text = JSON.stringify(answer.body)
      for (const m of markers) if (text.includes(m) && !sent.includes(m)) leaks.push(`${method} ${url} → ${m}`)
      const list = answer.body?.data?.list
      const fine =
        answer.status === 404 ||
        answer.status === 400 ||
        (answer.status === 200 && (list === undefined || list.length === 0 || (method === "GET" && !url.includes("="))))
      if (!fine) wrong.push(`${method} ${url} ${JSON.stringify(body ?? "")} → ${answer.status} ${text.slice(0, 200)}`)
      return answer
    }
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      if (path === "/openapi.json" || path === "/docs" || path === "/api/v1/product-categories") continue
      for (const [method, op] of Object.entries(methods)) {
        const url = path.replace(/\{(\w+)\}/g, (_, name) => idsOfA[name] ?? "x")
        if (method === "get") {
          const query: Array<any> = (op.parameters ?? []).filter((p: any) => p.in === "query")
          // each filter alone with A's value, the cursors, and the spoofed merchant_id
          for (const p of query) {
            const value =
              p.name === "starting_after" || p.name === "ending_before"
                ? idsOfA[
                    path.includes("customer")
                      ? "customer_id"
                      : path.includes("subscription")
                        ? "subscription_id"
                        : path.includes("trade")
                          ? "trade_id"
                          : "invoice_id"
                  ]
                : idsOfA[p.name]
            if (value === undefined) continue
            const extra = p.name === "search_value" ? "&search_type=subscription_id" : ""
            await check("GET", `${url}?${p.name}=${encodeURIComponent(value)}${extra}`)
          }
          if (!path.includes("{")) await check("GET", `${url}?merchant_id=${a.merchant.merchant_id}`)
          if (path.includes("{")) await check("GET", url)
        } else {
          const props = Object.keys(op.requestBody?.content?.["application/json"]?.schema?.properties ?? {})
          const body: Record<string, unknown> = { merchant_id: a.merchant.merchant_id }
          for (const p of props) if (idsOfA[p]) body[p] = idsOfA[p]
          if (props.includes("line_items")) body.line_items = [{ price_id: A.price.price_id }]
          if (
            !path.includes("{") &&
            (path.endsWith("/create") || path === "/api/v1/products" || path === "/api/v2/webhook/endpoints")
          )
            continue // creates B's own object
          await check("POST", url, body)
        }
      }
    }
    // B's own lists, with A's merchant_id spoofed in the query, hold none of A's objects
    for (const list of [
      "/api/v1/front/customer",
      "/api/v1/products",
      "/api/v1/prices",
      "/api/v1/subscription",
      "/api/v1/trades",
      "/api/v1/invoices",
      "/api/v1/refunds",
      "/api/v2/webhook/events",
      "/api/v2/webhook/endpoints"
    ]) {
      await check("GET", `${list}?merchant_id=${a.merchant.merchant_id}&limit=100`)
    }
    report(
      `tenant isolation: ${calls} calls by merchant B with A's ids, cursors, filter values and merchant_id → ${wrong.length} answers other than 404/400/empty, ${leaks.length} leaks`
    )
    expect(wrong).toEqual([])
    expect(leaks).toEqual([])
    // and nothing of A's moved
    expect((await app.call("GET", `/api/v1/subscription/${A.sub}`, a.api_key)).body.data.subscription.status).toBe(
      "active"
    )
    expect((await app.call("GET", `/api/v1/trade/${A.trade}`, a.api_key)).body.data.trade.total_refunded_amount).toBe(
      "1.00"
    )
  })
})
