/**
 * One merchant's and one payer's journey through a REST API mounted in a host's own server
 * (node:http, Express, Fastify, Hono…), checked the same way for every framework: the API and the
 * hosted checkout answer under the mount prefix, every URL the API emits stays under it, the
 * payer's card form posts through it, and the host's facade sees what the API did (one engine).
 *
 * @since 0.1.0
 */

/**
 * What the journey needs from the host app under test.
 *
 * @since 0.1.0
 */
export interface MountedApp {
  /** `http://127.0.0.1:PORT/billing`: where the API is mounted (no trailing slash). */
  readonly base: string
  /** A new sandbox merchant's API key, made through the host's facade. */
  readonly createMerchant: () => Promise<{ readonly merchant_id: string; readonly api_key: string }>
  /** The subscription's status as the host's facade sees it. */
  readonly subscriptionStatus: (merchantId: string, subscriptionId: string) => Promise<string>
}

/**
 * What went wrong, or nothing: the journey's steps in order, each with what it expected.
 *
 * @since 0.1.0
 */
export const run = async (app: MountedApp): Promise<{ readonly subscription_id: string }> => {
  let n = 0
  const fail = (step: string, detail: unknown): never => {
    throw new Error(`mount journey, ${step}: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`)
  }
  const { merchant_id, api_key } = await app.createMerchant()
  const api = async (path: string, body?: unknown, key: string | null = api_key) => {
    const response = await fetch(`${app.base}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: {
        "request-id": `journey-${Date.now()}-${++n}`,
        ...(key !== null ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {})
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {})
    })
    return { status: response.status, body: (await response.json()) as { code: string; data: any } }
  }
  const unauthorised = await api("/api/v1/product-categories", undefined, null)
  if (unauthorised.status !== 401 || unauthorised.body.code !== "unauthorizedError") fail("no key", unauthorised)
  const product = await api("/api/v1/products", { product_name: "Mounted plan" })
  if (product.status !== 200) fail("create a product", product)
  const price = await api("/api/v1/prices", {
    name: "Mounted monthly",
    product_id: product.body.data.product_id,
    currency: "USD",
    billing_type: "recurring",
    price_type: "flat_price",
    price_plan: { billing_cycle_unit: "month", base_price_val: "12.00" }
  })
  if (price.status !== 200) fail("create a price", price)
  const session = await api("/api/v1/session", {
    payer_id: "payer-1",
    line_items: [{ price_id: price.body.data.price_id }],
    return_url: "https://shop.example/thanks"
  })
  if (session.status !== 200) fail("create a session", session)
  const sessionUrl: string = session.body.data.session_url
  if (!sessionUrl.startsWith(`${app.base}/checkout/`)) fail("session_url under the mount", sessionUrl)
  const page = await fetch(sessionUrl)
  const html = await page.text()
  if (page.status !== 200 || !html.includes("<form")) fail("the hosted page", `${page.status} ${html.slice(0, 200)}`)
  const action = /<form method="post" action="([^"]*)"/.exec(html)?.[1]
  if (action === undefined) fail("the page's form", html.slice(0, 400))
  const payUrl = new URL((action ?? "").replaceAll("&amp;", "&"), sessionUrl).toString()
  if (!payUrl.startsWith(`${app.base}/`)) fail("the form posts under the mount", payUrl)
  const paid = await fetch(payUrl, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ card_number: "4242424242424242", exp_month: "12", exp_year: "2099", cvc: "123" })
  })
  if (paid.status !== 303 && paid.status !== 200) fail("pay through the form", `${paid.status} ${await paid.text()}`)
  const subscriptions = await api("/api/v1/subscription?status=active")
  const list: Array<{ id: string }> = subscriptions.body.data?.list ?? []
  if (subscriptions.status !== 200 || list.length !== 1) fail("one active subscription", subscriptions)
  const subscription_id = list[0]!.id
  const seen = await app.subscriptionStatus(merchant_id, subscription_id)
  if (seen !== "active") fail("the facade sees the API's subscription", seen)
  const outside = await fetch(`${app.base.replace(/\/[^/]*$/, "")}/not-recur/api/v1/product-categories`)
  if (outside.status !== 404) fail("a path outside the mount is not Recur's", outside.status)
  return { subscription_id }
}

/**
 * How a card tester is seen by a mounted API.
 *
 * @since 0.1.0
 */
export interface CardTester {
  /** `http://127.0.0.1:PORT/billing`: where the API is mounted (no trailing slash). */
  readonly base: string
  /** A new sandbox merchant's API key, made through the host's facade. */
  readonly createMerchant: () => Promise<{ readonly merchant_id: string; readonly api_key: string }>
  /** Headers of each pay attempt (`X-Forwarded-For` behind a trusted proxy). */
  readonly headers?: Record<string, string>
  /** How a request reaches the app: `fetch` over the network unless given. */
  readonly fetch?: (url: string, init: RequestInit) => Promise<Response>
}

/**
 * A card tester's run: `attempts` declined cards (default 40) from one client, 10 on each of
 * several checkout sessions (each session allows 10 at once), paid as a script would (JSON).
 * Answers each attempt's status, in order: the card-testing guard lets 30 per client address
 * through (402 `payment_failed`), then answers 429 `rate_limit_exceeded`.
 *
 * @since 0.1.0
 */
export const cardTesting = async (app: CardTester, attempts = 40): Promise<ReadonlyArray<number>> => {
  const send = app.fetch ?? ((url: string, init: RequestInit) => fetch(url, init))
  const { api_key } = await app.createMerchant()
  let n = 0
  const api = async (path: string, body: unknown) => {
    const response = await send(`${app.base}${path}`, {
      method: "POST",
      headers: {
        "request-id": `card-testing-${Date.now()}-${++n}`,
        authorization: `Bearer ${api_key}`,
        "content-type": "application/json"
      },
      body: JSON.stringify(body)
    })
    const answer = (await response.json()) as { code: string; data: any }
    if (response.status !== 200) throw new Error(`card testing, ${path}: ${response.status} ${JSON.stringify(answer)}`)
    return answer.data
  }
  const product = await api("/api/v1/products", { product_name: "Tested plan" })
  const price = await api("/api/v1/prices", {
    name: "Tested monthly",
    product_id: product.product_id,
    currency: "USD",
    billing_type: "recurring",
    price_type: "flat_price",
    price_plan: { billing_cycle_unit: "month", base_price_val: "5.00" }
  })
  const statuses: Array<number> = []
  for (let s = 0; statuses.length < attempts; s++) {
    const session = await api("/api/v1/session", {
      payer_id: `tester-${s}`,
      line_items: [{ price_id: price.price_id }]
    })
    for (let i = 0; i < 10 && statuses.length < attempts; i++) {
      const paid = await send(`${app.base}/checkout/${session.session_id}/pay`, {
        method: "POST",
        headers: { accept: "application/json", "content-type": "application/json", ...app.headers },
        body: JSON.stringify({ card_number: "4000000000000002", exp_month: "12", exp_year: "2099", cvc: "123" })
      })
      const answer = (await paid.json()) as { code: string }
      const expected = paid.status === 402 ? "payment_failed" : paid.status === 429 ? "rate_limit_exceeded" : undefined
      if (answer.code !== expected)
        throw new Error(`card testing, attempt ${statuses.length + 1}: ${paid.status} ${answer.code}`)
      statuses.push(paid.status)
    }
  }
  return statuses
}

/**
 * What the card-testing guard answers 40 declined cards from one client address.
 *
 * @since 0.1.0
 */
export const limitedCardTesting: ReadonlyArray<number> = [...Array(30).fill(402), ...Array(10).fill(429)]

/**
 * A socket listening on a port of 127.0.0.1 the system picked (port 0), held until the app's
 * server takes it over with `server.listen(handle)`: the port is known before the app is built
 * (its `publicUrl` names it), and no other process can take the port in between, as it can
 * between {@link freePort} and a later `listen(port)`.
 *
 * @since 0.1.0
 */
export const listener = async (): Promise<{ readonly port: number; readonly handle: import("node:net").Server }> => {
  const { createServer } = await import("node:net")
  const handle = createServer()
  await new Promise<void>((resolve, reject) => {
    handle.once("error", reject)
    handle.listen(0, "127.0.0.1", () => resolve())
  })
  const address = handle.address()
  if (typeof address !== "object" || address === null) throw new Error("no port")
  return { port: address.port, handle }
}

/**
 * A TCP port free on 127.0.0.1 now. Racy: another process may take it before the app listens on
 * it; prefer {@link listener}.
 *
 * @since 0.1.0
 */
export const freePort = async (): Promise<number> => {
  const { createServer } = await import("node:net")
  return new Promise<number>((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("no port"))))
    })
  })
}
