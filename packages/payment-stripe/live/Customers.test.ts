import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Entities, Ids, Money, Ports, Store } from "@recur/core"
import { Pg } from "@recur/sql"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { StripeGateway } from "../src/index.js"
import { apiBase, client, options, publishableKey, secretKey } from "./env.js"

// Issue 30, after its payments review, against Stripe's real test mode (`pnpm test:stripe-live`
// with STRIPE_TEST_SECRET_KEY, an sk_test_ key that may read its account, and
// STRIPE_TEST_PUBLISHABLE_KEY): the Stripe customer (`cus_…`) of each of our customers is kept in
// storage with the Stripe account it lives in (`acct_…`, GET /v1/account) when Stripe makes it and
// read back by id — no customer search on a later charge —; a kept customer deleted at Stripe is
// replaced on the next charge; and the check of the keys names the account the customers are
// kept with. The gateway is `StripeGateway.layer` on PGlite; what it asks Stripe is seen by a
// recording pass-through on this machine (between the gateway and Stripe, or the local fake), so
// "no search" is observed in its requests, never inferred from timing.

/** Where Stripe is: api.stripe.com, or the host `STRIPE_LIVE_API_BASE` names (the local fake). */
const upstream = apiBase ?? "https://api.stripe.com"

/** Each request the gateway made, as `METHOD /path`, in order. */
const seen: Array<string> = []
const HOP = new Set(["host", "connection", "content-length", "transfer-encoding", "accept-encoding", "keep-alive"])
const recorder: Server = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    const url = new URL(req.url ?? "/", upstream)
    seen.push(`${req.method} ${url.pathname}`)
    const headers = new Headers()
    for (const [k, v] of Object.entries(req.headers))
      if (v !== undefined && !HOP.has(k)) headers.set(k, Array.isArray(v) ? v.join(", ") : v)
    fetch(url, {
      method: req.method ?? "GET",
      headers,
      ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {})
    })
      .then(async (answer) => {
        const body = Buffer.from(await answer.arrayBuffer())
        const out: Record<string, string> = {}
        answer.headers.forEach((v, k) => {
          if (!HOP.has(k) && k !== "content-encoding") out[k] = v
        })
        res.writeHead(answer.status, out).end(body)
      })
      // no answer from Stripe: the gateway sees a dropped connection, as it would
      .catch(() => res.destroy())
  })
})

const stripe = client()
let runtime: ManagedRuntime.ManagedRuntime<Ports.PaymentGateway | Store.Storage, unknown>

beforeAll(async () => {
  await new Promise<void>((done) => recorder.listen(0, "127.0.0.1", done))
  const base = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`
  runtime = ManagedRuntime.make(
    StripeGateway.layer({ secretKey, ...options, apiBase: base }).pipe(Layer.provideMerge(Pg.layerPglite()))
  )
}, 60_000)

afterAll(async () => {
  await runtime.dispose()
  await new Promise<void>((done) => recorder.close(() => done()))
}, 60_000)

/** A charge of `amount` cents for our customer `customerId` of `merchantId`, with `pm_card_visa`. */
const charge = (merchantId: string, customerId: string, amount: bigint) =>
  runtime.runPromise(
    Effect.gen(function* () {
      const gateway = yield* Ports.PaymentGateway
      return yield* gateway.charge({
        trade_id: yield* Ids.make("trd"),
        merchant_id: merchantId,
        customer_id: customerId,
        amount: Money.make(amount, "USD"),
        source: { _tag: "PaymentMethod", id: "pm_card_visa" },
        off_session: false
      })
    })
  )

/** The Stripe customers kept in storage for a merchant. */
const kept = (merchantId: string) =>
  runtime.runPromise(
    Effect.flatMap(Store.Storage, (s) =>
      Effect.map(Effect.orDie(s.repository(Entities.processorCustomer).list(merchantId, { limit: 100 })), (r) => r.list)
    )
  )

/** The Stripe customer a succeeded charge's PaymentIntent names (read from Stripe by id). */
const customerOf = async (outcome: Ports.ChargeOutcome) => {
  expect(outcome._tag, JSON.stringify(outcome)).toBe("Succeeded")
  const intent = await stripe.paymentIntents.retrieve((outcome as { reference: string }).reference)
  return typeof intent.customer === "string" ? intent.customer : intent.customer?.id
}

/** Fresh ids for one case: Stripe keeps the idempotency key of a customer's creation for a day. */
const fresh = () =>
  Effect.runPromise(Effect.all({ merchant: Ids.make("mch"), customer: Ids.make("cus") }))

/** The requests made since `mark` to Stripe's customer endpoints. */
const customerCalls = (mark: number) => seen.slice(mark).filter((r) => /\/v1\/customers(\/|$)/.test(r))

describe("Stripe test mode (live): Stripe customers kept with their account", { timeout: 120_000 }, () => {
  it("a first charge makes one Stripe customer, kept with the account GET /v1/account names; a second charge uses it by id, with no customer search", async () => {
    const { merchant, customer } = await fresh()
    const account = (await stripe.accounts.retrieveCurrent()).id
    expect(account).toMatch(/^acct_/)

    const mark = seen.length
    const first = await customerOf(await charge(merchant, customer, 2000n))
    expect(first).toMatch(/^cus_/)
    // the first charge made it, once
    expect(customerCalls(mark).filter((r) => r === "POST /v1/customers")).toHaveLength(1)
    const rows = await kept(merchant)
    expect(rows.map((r) => [r.customer_id, r.provider, r.account_id, r.reference])).toEqual([
      [customer, "stripe", account, first]
    ])

    const again = seen.length
    const second = await customerOf(await charge(merchant, customer, 1200n))
    expect(second).toBe(first)
    // read back from storage: Stripe's customer endpoints not asked at all (no search, no create)
    expect(customerCalls(again)).toEqual([])
    expect(seen.slice(again)).toContain("POST /v1/payment_intents")
    expect((await kept(merchant)).map((r) => r.reference)).toEqual([first])
  })

  it("a kept Stripe customer deleted through Stripe's API: the next charge makes a new one, keeps it in its place, and succeeds", async () => {
    const { merchant, customer } = await fresh()
    const gone = await customerOf(await charge(merchant, customer, 2000n))
    expect((await kept(merchant)).map((r) => r.reference)).toEqual([gone])
    const deleted = await stripe.customers.del(gone!)
    expect(deleted.deleted).toBe(true)

    const mark = seen.length
    const made = await customerOf(await charge(merchant, customer, 1500n))
    expect(made).toMatch(/^cus_/)
    expect(made).not.toBe(gone)
    expect(customerCalls(mark)).toContain("POST /v1/customers")
    // kept in place of the one gone (the succeeded PaymentIntent above names it: it exists)
    expect((await kept(merchant)).map((r) => r.reference)).toEqual([made])

    // and from now on it is read by id
    const after = seen.length
    expect(await customerOf(await charge(merchant, customer, 1000n))).toBe(made)
    expect(customerCalls(after)).toEqual([])
  })

  it("the keys verified for this account name the account the customers are kept with", async () => {
    const { merchant, customer } = await fresh()
    await customerOf(await charge(merchant, customer, 2000n))
    const [row] = await kept(merchant)
    const check = await Effect.runPromise(
      StripeGateway.verifyAccount(
        { merchant_id: merchant, mode: "test", secret_key: secretKey, publishable_key: publishableKey },
        options
      )
    )
    expect(check._tag, JSON.stringify(check)).toBe("Verified")
    expect(check._tag === "Verified" && check.account_id).toBe(row?.account_id)
    expect(row?.account_id).toMatch(/^acct_/)
  })
})
