/**
 * The same integration with @hey-api/openapi-ts: the fetch client whose base URL is the served
 * document's server, the SDK, and every request and answer checked by the generated zod schemas.
 * Strict tsc, no casts. Run by test/OpenApiClients.test.ts against a running server.
 */
import { client } from "./hey/client.gen.js"
import {
  catalogCreatePrice,
  catalogCreateProduct,
  checkoutCreate,
  customersCreate,
  subscriptionsGet,
  subscriptionsList
} from "./hey/sdk.gen.js"
import type { Subscription } from "./hey/types.gen.js"
import { zCatalogCreatePriceBody, zCheckoutCreateBody, zCustomersCreateBody, zSubscription } from "./hey/zod.gen.js"

declare const process: { readonly env: Record<string, string | undefined> }

client.setConfig({ auth: process.env.RECUR_KEY ?? "" })
let n = 0
const headers = () => ({ "Request-Id": `hey-api-${Date.now()}-${++n}` })

const product = await catalogCreateProduct({ headers: headers(), body: { product_name: "Team" }, throwOnError: true })
const price = await catalogCreatePrice({
  headers: headers(),
  body: zCatalogCreatePriceBody.parse({
    name: "Team yearly",
    product_id: product.data.data.product_id,
    currency: "USD",
    billing_type: "recurring",
    price_type: "flat_price",
    price_plan: { billing_cycle_unit: "year", base_price_val: "300.00" }
  }),
  throwOnError: true
})
// the document says a customer is a guest (`email`) or a member (`payer_id`): the zod schema refuses neither
if (zCustomersCreateBody.safeParse({ name: "Nobody" }).success) throw new Error("a customer without email or payer_id passed")
const customer = await customersCreate({
  headers: headers(),
  body: zCustomersCreateBody.parse({ payer_id: "payer-hey", name: "Grace" }),
  throwOnError: true
})
const customerId: string = customer.data.data.customer_id
const session = await checkoutCreate({
  headers: headers(),
  body: zCheckoutCreateBody.parse({
    customer_id: customerId,
    line_items: [{ price_id: price.data.data.price_id }],
    return_url: "https://shop.example/ok"
  }),
  throwOnError: true
})
const paid = await fetch(`${session.data.data.session_url}/pay`, {
  method: "POST",
  headers: { accept: "application/json", "content-type": "application/json" },
  body: JSON.stringify({ card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" })
})
if (paid.status !== 200) throw new Error(`pay: ${paid.status} ${await paid.text()}`)

const list = await subscriptionsList({
  headers: headers(),
  query: { status: ["active", "trial"] },
  throwOnError: true
})
const listed = list.data.data.list[0]
if (listed === undefined) throw new Error("no subscription listed")
const one = await subscriptionsGet({
  headers: headers(),
  path: { subscription_id: listed.id },
  throwOnError: true
})
const subscription: Subscription = zSubscription.parse(one.data.data.subscription)

const missing = await subscriptionsGet({ headers: headers(), path: { subscription_id: "sub_missing" } })
const notFound = missing.error?.code

console.log(
  JSON.stringify({
    status: subscription.status,
    customer: subscription.customer_id === customerId,
    price: subscription.price_id === price.data.data.price_id,
    notFound
  })
)
