/**
 * A stateful local fake of the Stripe endpoints `@recur/payment-stripe` uses, written for the
 * tests: customers, PaymentIntents (created and confirmed at once), SetupIntents, payment methods,
 * refunds (and their list) and the search of intents and customers — lagging a minute behind, as
 * Stripe documents it — with idempotency keys pruned after 24 hours of the fake's clock, Stripe's test payment
 * methods (`pm_card_visa`, `pm_card_chargeDeclined`, `pm_card_authenticationRequired`,
 * `pm_card_chargeDeclinedInsufficientFunds`, …) behaving as Stripe documents them, and faults to
 * order (a 500 after the work is done, a connection dropped). Every request and response is
 * checked against Stripe's OpenAPI description (`spec.ts`); a mismatch fails the request with
 * 599 and is kept in `violations`.
 */
import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import qs from "qs"
import Stripe from "stripe"
import { checkObject, checkRequest, checkResponse, templateOf } from "./spec.js"

/** The cards Stripe's test payment method ids stand for (each use makes a new payment method). */
const TEST_METHODS: Readonly<Record<string, { readonly number: string; readonly brand: string }>> = {
  pm_card_visa: { number: "4242424242424242", brand: "visa" },
  pm_card_mastercard: { number: "5555555555554444", brand: "mastercard" },
  pm_card_chargeDeclined: { number: "4000000000000002", brand: "visa" },
  pm_card_chargeDeclinedInsufficientFunds: { number: "4000000000009995", brand: "visa" },
  pm_card_authenticationRequired: { number: "4000002760003184", brand: "visa" }
}

/** The test cards' expiry (Stripe's test payment methods expire in a future year). */
export const TEST_EXPIRY = { exp_month: 12, exp_year: 2034 } as const

type Json = Record<string, unknown>

interface PaymentMethod extends Json {
  id: string
  customer: string | null
  card: { brand: string; last4: string; exp_month: number; exp_year: number; funding: string }
}

/**
 * A stand-in for Stripe.js (the real one cannot be loaded here), served at `/v3/`: `Stripe(pk)`,
 * `elements({ mode, amount, currency })`, a Payment Element that mounts a labelled card-number
 * field, `elements.submit()` and `createPaymentMethod({ elements })`, which answers Stripe's test
 * payment method for the typed card (4242… → `pm_card_visa`, 4000002760003184 →
 * `pm_card_authenticationRequired`, 4000000000000002 → `pm_card_chargeDeclined`). What the page
 * gave it is kept in `window.__stripeFake` for the test to read.
 */
const STRIPE_JS = `(function () {
  var cards = { "4242424242424242": "pm_card_visa", "5555555555554444": "pm_card_mastercard",
    "4000002760003184": "pm_card_authenticationRequired", "4000000000000002": "pm_card_chargeDeclined" }
  window.__stripeFake = { calls: [] }
  window.Stripe = function (pk, options) {
    window.__stripeFake.pk = pk
    window.__stripeFake.locale = options && options.locale
    return {
      elements: function (o) {
        window.__stripeFake.elements = o
        var input
        return {
          create: function (type) {
            window.__stripeFake.type = type
            return { mount: function (selector) {
              var box = document.querySelector(selector)
              var label = document.createElement("label")
              label.textContent = "Card number"
              input = document.createElement("input")
              input.setAttribute("aria-label", "Card number")
              input.className = "stripe-fake-card"
              input.id = box.id + "-card"
              label.setAttribute("for", input.id)
              box.appendChild(label)
              box.appendChild(input)
              window.__stripeFake.mounted = selector
            } }
          },
          submit: function () {
            window.__stripeFake.calls.push("submit")
            var digits = input ? input.value.replace(/\\D/g, "") : ""
            return Promise.resolve(digits.length < 12 ? { error: { message: "Your card number is incomplete." } } : {})
          },
          _number: function () { return input ? input.value.replace(/\\D/g, "") : "" }
        }
      },
      createPaymentMethod: function (o) {
        window.__stripeFake.calls.push("createPaymentMethod")
        var id = cards[o.elements._number()]
        return Promise.resolve(id ? { paymentMethod: { id: id } } : { error: { message: "Your card number is invalid." } })
      }
    }
  }
})()`

/** A fault the next matching request meets. */
export type Fault = "500_after" | "drop_before"

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`

/**
 * Starts the fake on a free port of 127.0.0.1.
 */
export interface FakeOptions {
  /**
   * How many seconds of the fake's clock a new object stays out of search results (Stripe
   * documents search as eventually consistent, usually within a minute). Default 60; 0 turns it off.
   */
  readonly searchLagSeconds?: number
}

/** How long Stripe keeps an idempotency key: 24 hours, then the same key makes a new object. */
const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60

export const start = async (options: FakeOptions = {}) => {
  const customers = new Map<string, Json>()
  const methods = new Map<string, PaymentMethod>()
  const intents = new Map<string, Json>()
  const refunds = new Map<string, Json>()
  const idempotent = new Map<
    string,
    { readonly params: string; readonly status: number; readonly body: Json; readonly at: number }
  >()
  const violations: Array<string> = []
  const faults: Array<{ readonly path: RegExp; readonly fault: Fault }> = []
  const requests: Array<{
    readonly method: string
    readonly path: string
    readonly params: Json
    readonly key: string
  }> = []
  let clock = 1_767_225_600 // 2026-01-01, seconds
  let offSessionDeclines = 0
  let refundsPending = false
  /** Search does not see what was created in the last this many seconds (Stripe's search lags). */
  let searchLag = options.searchLagSeconds ?? 60
  const searchable = (o: Json) => (o.created as number) <= clock - searchLag
  const pendingReturn = new Map<string, string>()

  const now = () => clock++

  const paymentMethodOf = (ref: string, customer: string | null): PaymentMethod | undefined => {
    const test = TEST_METHODS[ref]
    if (test !== undefined) {
      const pm: PaymentMethod = {
        id: id("pm"),
        object: "payment_method",
        billing_details: { address: null, email: null, name: null, phone: null },
        card: { brand: test.brand, last4: test.number.slice(-4), ...TEST_EXPIRY, funding: "credit" },
        created: now(),
        customer,
        livemode: false,
        metadata: {},
        type: "card"
      }
      methods.set(pm.id, pm)
      return pm
    }
    return methods.get(ref)
  }

  const numberOf = (pm: PaymentMethod) =>
    Object.values(TEST_METHODS).find((t) => t.number.endsWith(pm.card.last4) && t.brand === pm.card.brand)?.number ?? ""

  const cardError = (code: string, decline: string | undefined, message: string, extra: Json = {}) => ({
    status: 402,
    body: {
      error: { type: "card_error", code, ...(decline ? { decline_code: decline } : {}), message, ...extra }
    }
  })
  const invalid = (message: string, param?: string, code?: string, status = 400) => ({
    status,
    body: { error: { type: "invalid_request_error", message, ...(param ? { param } : {}), ...(code ? { code } : {}) } }
  })

  const createIntent = (p: Json): { status: number; body: Json } => {
    const customer = typeof p.customer === "string" ? p.customer : null
    if (customer !== null && !customers.has(customer))
      return invalid(`No such customer: '${customer}'`, "customer", "resource_missing", 404)
    const pmRef = String(p.payment_method ?? "")
    const pm = paymentMethodOf(pmRef, null)
    if (pm === undefined) return invalid(`No such PaymentMethod: '${pmRef}'`, "payment_method", "resource_missing", 404)
    const offSession = p.off_session === "true" || p.off_session === true
    if (offSession && (pm.customer === null || pm.customer !== customer))
      return invalid(
        "The provided PaymentMethod was previously used without being attached to a Customer or was detached from a Customer, and may not be used again.",
        "payment_method"
      )
    const intent: Json = {
      id: id("pi"),
      object: "payment_intent",
      amount: Number(p.amount),
      amount_received: 0,
      capture_method: "automatic",
      client_secret: null,
      confirmation_method: "automatic",
      created: now(),
      currency: String(p.currency),
      customer,
      description: null,
      last_payment_error: null,
      latest_charge: null,
      livemode: false,
      metadata: (p.metadata as Json | undefined) ?? {},
      next_action: null,
      payment_method: pm.id,
      payment_method_types: (p.payment_method_types as Array<string> | undefined) ?? ["card"],
      setup_future_usage: (p.setup_future_usage as string | undefined) ?? null,
      status: "requires_confirmation"
    }
    intent.client_secret = `${intent.id}_secret_${randomBytes(8).toString("hex")}`
    intents.set(intent.id as string, intent)
    const number = numberOf(pm)
    const decline = (code: string, declineCode: string, message: string) => {
      const error = { type: "card_error", code, decline_code: declineCode, message, payment_method: pm }
      Object.assign(intent, { status: "requires_payment_method", last_payment_error: error })
      return cardError(code, declineCode, message, { payment_intent: intent })
    }
    if (number === "4000000000000002") return decline("card_declined", "generic_decline", "Your card was declined.")
    if (offSession && offSessionDeclines > 0) {
      offSessionDeclines--
      return decline("card_declined", "generic_decline", "Your card was declined.")
    }
    if (number === "4000000000009995")
      return decline("card_declined", "insufficient_funds", "Your card has insufficient funds.")
    if (number === "4000002760003184") {
      if (offSession)
        return decline(
          "authentication_required",
          "authentication_required",
          "Your card was declined. This transaction requires authentication."
        )
      const returnUrl = typeof p.return_url === "string" ? p.return_url : null
      Object.assign(intent, {
        status: "requires_action",
        next_action: returnUrl
          ? {
              type: "redirect_to_url",
              redirect_to_url: { return_url: returnUrl, url: `${base}/3ds/${intent.id as string}` }
            }
          : { type: "use_stripe_sdk", use_stripe_sdk: {} }
      })
      return { status: 200, body: intent }
    }
    succeed(intent, pm, customer)
    return { status: 200, body: intent }
  }

  const succeed = (intent: Json, pm: PaymentMethod, customer: string | null) => {
    const back = (intent.next_action as any)?.redirect_to_url?.return_url
    if (back) pendingReturn.set(intent.id as string, back)
    if (intent.setup_future_usage !== null && customer !== null) pm.customer = customer
    Object.assign(intent, {
      status: "succeeded",
      amount_received: intent.amount,
      latest_charge: id("ch"),
      next_action: null,
      last_payment_error: null
    })
  }

  const createSetup = (p: Json): { status: number; body: Json } => {
    const customer = typeof p.customer === "string" ? p.customer : null
    if (customer === null || !customers.has(customer))
      return invalid("No such customer", "customer", "resource_missing", 404)
    const pmRef = String(p.payment_method ?? "")
    const pm = paymentMethodOf(pmRef, null)
    if (pm === undefined) return invalid(`No such PaymentMethod: '${pmRef}'`, "payment_method", "resource_missing", 404)
    const setup: Json = {
      id: id("seti"),
      object: "setup_intent",
      created: now(),
      customer,
      livemode: false,
      payment_method: pm.id,
      payment_method_types: ["card"],
      status: "succeeded",
      usage: (p.usage as string | undefined) ?? "off_session",
      metadata: (p.metadata as Json | undefined) ?? {}
    }
    const number = numberOf(pm)
    if (number === "4000000000000002" || number === "4000000000009995") {
      const declineCode = number === "4000000000000002" ? "generic_decline" : "insufficient_funds"
      const message = number === "4000000000000002" ? "Your card was declined." : "Your card has insufficient funds."
      Object.assign(setup, {
        status: "requires_payment_method",
        last_setup_error: { type: "card_error", code: "card_declined", decline_code: declineCode, message }
      })
      return cardError("card_declined", declineCode, message, { setup_intent: setup })
    }
    pm.customer = customer
    return { status: 200, body: setup }
  }

  const createRefund = (p: Json): { status: number; body: Json } => {
    const intent = intents.get(String(p.payment_intent ?? ""))
    if (intent === undefined) return invalid("No such payment_intent", "payment_intent", "resource_missing", 404)
    if (intent.status !== "succeeded")
      return invalid(
        "This PaymentIntent does not have a successful charge to refund.",
        "payment_intent",
        "charge_not_refundable"
      )
    const refunded = [...refunds.values()]
      .filter((r) => r.payment_intent === intent.id && (r.status === "succeeded" || r.status === "pending"))
      .reduce((a, r) => a + (r.amount as number), 0)
    const amount = p.amount !== undefined ? Number(p.amount) : (intent.amount_received as number) - refunded
    if (amount <= 0 || refunded + amount > (intent.amount_received as number))
      return invalid(
        `Refund amount (${amount}) is greater than unrefunded amount on charge (${(intent.amount_received as number) - refunded})`,
        "amount",
        "amount_too_large"
      )
    const refund: Json = {
      id: id("re"),
      object: "refund",
      amount,
      charge: intent.latest_charge,
      created: now(),
      currency: intent.currency,
      metadata: (p.metadata as Json | undefined) ?? {},
      payment_intent: intent.id,
      reason: null,
      status: refundsPending ? "pending" : "succeeded"
    }
    refunds.set(refund.id as string, refund)
    return { status: 200, body: refund }
  }

  /** `metadata['key']:'value'` clauses joined by AND: the only search syntax the adapter uses. */
  const searchOf = (query: string, items: Iterable<Json>) => {
    const clauses = [...query.matchAll(/metadata\['([^']+)'\]:'([^']*)'/g)].map((m) => [m[1]!, m[2]!] as const)
    const data = [...items].filter((o) => clauses.every(([k, v]) => (o.metadata as Json | undefined)?.[k] === v))
    return { object: "search_result", data, has_more: false, next_page: null, url: "/v1/search" }
  }

  const route = (method: string, path: string, p: Json): { status: number; body: Json } => {
    if (method === "post" && path === "/v1/customers") {
      const c: Json = {
        id: id("cus"),
        object: "customer",
        created: now(),
        email: (p.email as string | undefined) ?? null,
        livemode: false,
        metadata: (p.metadata as Json | undefined) ?? {}
      }
      customers.set(c.id as string, c)
      return { status: 200, body: c }
    }
    if (method === "get" && path === "/v1/customers/search")
      return { status: 200, body: searchOf(String(p.query), [...customers.values()].filter(searchable)) }
    if (method === "get" && path === "/v1/payment_intents") {
      // a list is consistent at once (search lags by up to a minute at Stripe)
      const data = [...intents.values()]
        .filter((i) => p.customer === undefined || i.customer === p.customer)
        .sort((a, b) => (b.created as number) - (a.created as number))
        .slice(0, Number(p.limit ?? 10))
      return { status: 200, body: { object: "list", data, has_more: false, url: "/v1/payment_intents" } }
    }
    if (method === "get" && path === "/v1/payment_intents/search")
      return {
        status: 200,
        body: searchOf(String(p.query), [...intents.values()].filter(searchable))
      }
    if (method === "post" && path === "/v1/payment_intents") return createIntent(p)
    const canceling = /^\/v1\/payment_intents\/([^/]+)\/cancel$/.exec(path)
    if (method === "post" && canceling) {
      // Stripe cancels an intent only while it waits (for a method, a confirmation, an action)
      const intent = intents.get(canceling[1]!)
      if (!intent) return invalid("No such payment_intent", "id", "resource_missing", 404)
      if (!["requires_payment_method", "requires_confirmation", "requires_action"].includes(intent.status as string))
        return invalid(
          `You cannot cancel this PaymentIntent because it has a status of ${intent.status as string}.`,
          undefined,
          "payment_intent_unexpected_state",
          400
        )
      Object.assign(intent, { status: "canceled", next_action: null, cancellation_reason: "abandoned" })
      return { status: 200, body: intent }
    }
    if (method === "post" && path === "/v1/setup_intents") return createSetup(p)
    if (method === "post" && path === "/v1/refunds") return createRefund(p)
    if (method === "get" && path === "/v1/refunds") {
      // a list is consistent at once; the newest first
      const data = [...refunds.values()]
        .filter((r) => p.payment_intent === undefined || r.payment_intent === p.payment_intent)
        .sort((a, b) => (b.created as number) - (a.created as number))
        .slice(0, Number(p.limit ?? 10))
      return { status: 200, body: { object: "list", data, has_more: false, url: "/v1/refunds" } }
    }
    const one = (map: Map<string, Json>, what: string) => {
      const found = map.get(path.split("/").pop() ?? "")
      return found ? { status: 200, body: found } : invalid(`No such ${what}`, "id", "resource_missing", 404)
    }
    if (method === "get" && path.startsWith("/v1/payment_intents/")) return one(intents, "payment_intent")
    if (method === "get" && path.startsWith("/v1/refunds/")) return one(refunds, "refund")
    if (method === "get" && path.startsWith("/v1/payment_methods/"))
      return one(methods as unknown as Map<string, Json>, "payment_method")
    return invalid(`Unrecognized request URL (${method.toUpperCase()}: ${path})`, undefined, undefined, 404)
  }

  const answer = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json", "request-id": id("req") })
    res.end(JSON.stringify(body))
  }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    for await (const c of req) chunks.push(c as Buffer)
    const url = new URL(req.url ?? "/", "http://fake")
    const method = (req.method ?? "GET").toLowerCase()
    const path = url.pathname
    if (method === "get" && path.startsWith("/3ds/")) {
      // the 3-D Secure page: the customer authenticates (or, with ?fail=1, fails to), and Stripe
      // sends them back to the intent's return_url
      const intent = intents.get(path.slice(5))
      if (intent?.status === "requires_action") {
        const pm = methods.get(intent.payment_method as string)!
        if (url.searchParams.get("fail") === "1")
          Object.assign(intent, {
            status: "requires_payment_method",
            next_action: null,
            last_payment_error: {
              type: "card_error",
              code: "payment_intent_authentication_failure",
              message: "The provided PaymentMethod has failed authentication."
            }
          })
        else succeed(intent, pm, (intent.customer as string | null) ?? null)
      }
      const back = (intent?.next_action as any)?.redirect_to_url?.return_url ?? pendingReturn.get(path.slice(5))
      if (back) {
        res.writeHead(302, { location: `${back}?payment_intent=${path.slice(5)}` }).end()
        return
      }
      res.writeHead(200, { "content-type": "text/html" }).end("<h1>Authenticated</h1>")
      return
    }
    if (method === "get" && path === "/v3/") {
      res.writeHead(200, { "content-type": "text/javascript" }).end(STRIPE_JS)
      return
    }
    if (!/^Bearer sk_test_\w+$/.test(req.headers.authorization ?? ""))
      return answer(res, 401, { error: { type: "invalid_request_error", message: "Invalid API Key provided" } })
    const params = (
      method === "get" ? qs.parse(url.search.slice(1)) : qs.parse(Buffer.concat(chunks).toString("utf8"))
    ) as Json
    requests.push({ method, path, params, key: (req.headers.authorization ?? "").replace(/^Bearer /, "") })
    const template = templateOf(method, path)
    const wrong =
      template === undefined
        ? `${method} ${path} is not in the spec subset`
        : checkRequest(method, template, structuredClone(params))
    if (wrong !== undefined) {
      violations.push(`request ${method.toUpperCase()} ${path}: ${wrong}`)
      return answer(res, 599, {
        error: { type: "api_error", message: `request does not match Stripe's spec: ${wrong}` }
      })
    }
    const fault = faults.findIndex((f) => f.path.test(`${method.toUpperCase()} ${path}`))
    const pending = fault >= 0 ? faults.splice(fault, 1)[0]!.fault : undefined
    if (pending === "drop_before") return void req.socket.destroy()
    // idempotency: a key answers its first response; the same key with other parameters is refused
    const key = req.headers["idempotency-key"]
    const sent = JSON.stringify(params)
    let result: { status: number; body: Json }
    // Stripe prunes a key 24 hours after its first use: the same key then makes a new object
    const kept = typeof key === "string" && method === "post" ? idempotent.get(key) : undefined
    const seen = kept !== undefined && clock - kept.at < IDEMPOTENCY_TTL_SECONDS ? kept : undefined
    if (seen !== undefined) {
      result =
        seen.params === sent
          ? { status: seen.status, body: seen.body }
          : {
              status: 400,
              body: {
                error: {
                  type: "idempotency_error",
                  message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`
                }
              }
            }
    } else {
      result = route(method, path, params)
      if (typeof key === "string" && method === "post")
        idempotent.set(key, { params: sent, status: result.status, body: structuredClone(result.body), at: clock })
    }
    const bad = checkResponse(method, template!, result.status, result.body)
    if (bad !== undefined) {
      violations.push(`response ${method.toUpperCase()} ${path} ${result.status}: ${bad}`)
      return answer(res, 599, {
        error: { type: "api_error", message: `response does not match Stripe's spec: ${bad}` }
      })
    }
    if (pending === "500_after")
      return answer(res, 500, { error: { type: "api_error", message: "An unknown error occurred" } })
    answer(res, result.status, result.body)
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      violations.push(`fake crashed: ${String(e)}`)
      answer(res, 500, { error: { type: "api_error", message: String(e) } })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  const base = `http://127.0.0.1:${port}`

  return {
    base,
    port,
    /** Requests or responses that did not match Stripe's spec. */
    violations,
    /** Every request received, in order. */
    requests,
    /**
     * The next `times` requests matching `path` (`"POST /v1/payment_intents"`) meet `fault` (the
     * SDK retries a closed connection once on its own, with the same idempotency key).
     */
    fault: (path: RegExp, fault: Fault, times = 1) => {
      for (let i = 0; i < times; i++) faults.push({ path, fault })
    },
    intents,
    refunds,
    customers,
    /**
     * A webhook event as Stripe sends it: the JSON body (checked against the spec's `event` and
     * the object's own schema) and its `Stripe-Signature` header under `secret`, made with the
     * SDK's test helper.
     */
    event: (type: string, object: Json, secret: string, options: { readonly id?: string } = {}) => {
      const event = {
        id: options.id ?? id("evt"),
        object: "event",
        api_version: "2025-09-30.clover",
        created: now(),
        data: { object },
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type
      }
      const kind = String(object.object)
      for (const wrong of [checkObject("event", event), checkObject(kind, object)])
        if (wrong !== undefined) violations.push(`event ${type}: ${wrong}`)
      const payload = JSON.stringify(event)
      const header = new Stripe("sk_test_events").webhooks.generateTestHeaderString({ payload, secret })
      return { payload, header, id: event.id }
    },
    /** A dispute of an intent's charge, as Stripe's `dispute` object. */
    dispute: (intentId: string, status: string, disputeId = id("dp")) => {
      const intent = intents.get(intentId)!
      return {
        id: disputeId,
        object: "dispute",
        amount: intent.amount_received,
        balance_transactions: [],
        charge: intent.latest_charge,
        created: now(),
        currency: intent.currency,
        evidence: {},
        evidence_details: { due_by: null, has_evidence: false, past_due: false, submission_count: 0 },
        is_charge_refundable: false,
        livemode: false,
        metadata: {},
        payment_intent: intent.id,
        reason: "fraudulent",
        status
      } as Json
    },
    /** Stripe's search lag: on (60 s of the fake's clock, the default) or off (search sees everything at once). */
    searchLag: (on: boolean) => {
      searchLag = on ? 60 : 0
    },
    /** Moves the fake's clock on (Stripe's time: search catching up, idempotency keys pruned after 24 h). */
    advance: (seconds: number) => {
      clock += seconds
    },
    /**
     * An intent that had not succeeded succeeds after all (the payer confirmed it again in the
     * browser, or a delayed method settled): what a late `payment_intent.succeeded` reports.
     */
    succeedLater: (intentId: string) => {
      const intent = intents.get(intentId)!
      succeed(intent, methods.get(intent.payment_method as string)!, (intent.customer as string | null) ?? null)
      return intent
    },
    /** While on, new refunds are `pending` (settled later with `settleRefund`). */
    pendRefunds: (on: boolean) => {
      refundsPending = on
    },
    /** A pending refund's outcome at the bank: its status now `succeeded` or `failed`. */
    settleRefund: (refundId: string, status: "succeeded" | "failed") => {
      const refund = refunds.get(refundId)!
      Object.assign(refund, { status, ...(status === "failed" ? { failure_reason: "expired_or_canceled_card" } : {}) })
      return refund
    },
    /** The next `n` off-session charges decline (a saved card that stopped working). */
    declineOffSession: (n: number) => {
      offSessionDeclines = n
    },
    /** Completes the 3-D Secure challenge of an intent (the customer authenticates). */
    authenticate: (intentId: string) => fetch(`${base}/3ds/${intentId}`).then((r) => r.text()),
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** The fake, running. */
export type StripeFake = Awaited<ReturnType<typeof start>>
