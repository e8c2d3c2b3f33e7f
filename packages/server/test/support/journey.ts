/**
 * A merchant's data worth backing up, made through the REST API of a running server: a product,
 * a price, a checkout session paid with a card (a subscription and its paid invoice with signed
 * links), and a webhook endpoint (its `whsec_` secret stored encrypted); then {@link check}s that a
 * server (a restored one) still serves all of it: the key authenticates, the subscription and the
 * invoice are there, the invoice's signed link opens, and a delivery is signed with the secret.
 */
import { verifyStandardWebhook } from "@recur/webhooks"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"

/** What the journey made, to look for after a restore. */
export interface Made {
  readonly api_key: string
  readonly subscription_id: string
  readonly invoice_id: string
  readonly hosted_invoice_url: string
  readonly endpoint_id: string
  readonly endpoint_secret: string
}

let n = 0
const api = async (base: string, key: string, path: string, body?: unknown) => {
  const response = await fetch(`${base}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "request-id": `ops-${Date.now()}-${++n}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {})
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(30_000)
  })
  const answer = (await response.json()) as { code: string; data: any }
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`)
  return answer.data
}

/** A receiver of webhook deliveries on 127.0.0.1: each delivery's headers and raw body. */
export const receiver = async () => {
  const received: Array<{ readonly headers: IncomingHttpHeaders; readonly body: string }> = []
  const server = createServer((request, response) => {
    let body = ""
    request.on("data", (d) => (body += String(d)))
    request.on("end", () => {
      received.push({ headers: request.headers, body })
      response.writeHead(200).end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** Makes the data through the API at `base` with the merchant's `key`; deliveries go to `hooks`. */
export const make = async (base: string, key: string, hooks: string): Promise<Made> => {
  const endpoint = await api(base, key, "/api/v2/webhook/endpoints", { url: hooks, all_events: true })
  const product = await api(base, key, "/api/v1/products", { product_name: "Backed-up plan" })
  const price = await api(base, key, "/api/v1/prices", {
    name: "Backed-up monthly",
    product_id: product.product_id,
    currency: "USD",
    billing_type: "recurring",
    price_type: "flat_price",
    price_plan: { billing_cycle_unit: "month", base_price_val: "12.00" }
  })
  const session = await api(base, key, "/api/v1/session", {
    payer_id: "backed-up-payer",
    line_items: [{ price_id: price.price_id }]
  })
  const paid = await fetch(`${base}/checkout/${session.session_id}/pay`, {
    method: "POST",
    headers: { accept: "application/json", "content-type": "application/json" },
    body: JSON.stringify({ card_number: "4242424242424242", exp_month: "12", exp_year: "2099", cvc: "123" }),
    signal: AbortSignal.timeout(30_000)
  })
  if (paid.status !== 200) throw new Error(`pay: ${paid.status} ${await paid.text()}`)
  const subscriptions = await api(base, key, "/api/v1/subscription?status=active")
  const subscription_id: string = subscriptions.list[0].id
  const invoices = await api(base, key, `/api/v1/invoices?subscription_id=${subscription_id}`)
  const invoice = invoices.list[0]
  return {
    api_key: key,
    subscription_id,
    invoice_id: invoice.invoice_id,
    hosted_invoice_url: invoice.hosted_invoice_url,
    endpoint_id: endpoint.id,
    endpoint_secret: endpoint.secret
  }
}

/**
 * Checks that the server at `base` (whose public URL is `publicUrl`) serves what {@link make}
 * made: answers what failed, or an empty list. A webhook event is sent again to `hooks`, whose
 * delivery must verify under the endpoint's secret (stored encrypted: it decrypted).
 */
export const check = async (
  base: string,
  publicUrl: string,
  made: Made,
  hooks: Awaited<ReturnType<typeof receiver>>
): Promise<ReadonlyArray<string>> => {
  const problems: Array<string> = []
  const subscription = await api(base, made.api_key, `/api/v1/subscription/${made.subscription_id}`)
  if (subscription.subscription.status !== "active") problems.push(`subscription ${subscription.subscription.status}`)
  const invoice = await api(base, made.api_key, `/api/v1/invoice/${made.invoice_id}`)
  if (invoice.invoice.hosted_invoice_url !== made.hosted_invoice_url) problems.push("invoice link changed")
  // the signed link (signed under the master key) still opens
  const page = await fetch(made.hosted_invoice_url.replace(publicUrl, base), { signal: AbortSignal.timeout(30_000) })
  if (page.status !== 200) problems.push(`invoice page ${page.status}`)
  const endpoints = await api(base, made.api_key, "/api/v2/webhook/endpoints")
  if (!endpoints.list.some((e: { id: string }) => e.id === made.endpoint_id)) problems.push("endpoint missing")
  const events = await api(base, made.api_key, "/api/v2/webhook/events")
  const event = events.list[0]
  if (event === undefined) problems.push("no webhook event")
  else {
    const before = hooks.received.length
    await api(base, made.api_key, `/api/v2/webhook/events/${event.id}/resend`, {})
    const delivery = hooks.received.slice(before).find((d) => d.body.includes(event.id))
    if (delivery === undefined) problems.push("no delivery of the resent event")
    else {
      const verified = verifyStandardWebhook({
        body: delivery.body,
        headers: delivery.headers,
        secret: made.endpoint_secret,
        toleranceMs: 86_400_000
      })
      if (!verified.ok) problems.push(`delivery not signed with the endpoint's secret: ${verified.reason}`)
    }
  }
  return problems
}
