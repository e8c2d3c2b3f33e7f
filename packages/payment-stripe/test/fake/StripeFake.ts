/**
 * A stateful local fake of the Stripe endpoints `@recur/payment-stripe` uses, written for the
 * tests: customers (deleted too, as in the dashboard), PaymentIntents (created and confirmed at once), SetupIntents, payment methods,
 * refunds (and their list) and the search of intents and customers — lagging a minute behind, as
 * Stripe documents it — with idempotency keys pruned after 24 hours of the fake's clock, Stripe's test payment
 * methods (`pm_card_visa`, `pm_card_chargeDeclined`, `pm_card_authenticationRequired`,
 * `pm_card_chargeDeclinedInsufficientFunds`, `pm_card_threeDSecure2Required`, …) behaving as Stripe
 * documents them — the 3-D Secure cards challenge PaymentIntents and SetupIntents on session (a
 * redirect to the fake's 3-D Secure page) and decline `authentication_required` off session — and
 * faults to order or for as long as asked (a 500 after the work is done, a connection dropped, a
 * 429 rate limit or `lock_timeout`, a 500/503, a 401 rolled key, a 403 restricted key, each with
 * Stripe's error body). It knows Stripe accounts by their keys (`account()`; `sk_test_recur` from
 * the start) and refuses any other key (401); the account endpoints (`GET /v1/account`, PII
 * tokens) serve the check of a merchant's keys; a live key is served only those (the fake has no
 * live-mode data). It refuses amounts Stripe refuses (0, under the currency's minimum, off its
 * precision). Every request and response is
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
  pm_card_authenticationRequired: { number: "4000002760003184", brand: "visa" },
  pm_card_threeDSecure2Required: { number: "4000000000003220", brand: "visa" },
  pm_card_authenticationRequiredOnSetup: { number: "4000002500003155", brand: "visa" },
  pm_card_chargeDeclinedLostCard: { number: "4000000000009987", brand: "visa" },
  pm_card_chargeDeclinedStolenCard: { number: "4000000000009979", brand: "visa" },
  pm_card_radarBlock: { number: "4100000000000019", brand: "visa" },
  pm_card_chargeDeclinedExpiredCard: { number: "4000000000000069", brand: "visa" },
  pm_card_chargeDeclinedProcessingError: { number: "4000000000000119", brand: "visa" },
  pm_card_chargeDeclinedVelocityLimitExceeded: { number: "4000000000006975", brand: "visa" }
}

/**
 * The test cards Stripe documents as declined on every charge and set-up
 * (docs.stripe.com/testing#declined-payments), with the error Stripe answers: its `code`, its
 * `decline_code` (absent where Stripe sends none) and its message.
 */
export const DECLINING: Readonly<
  Record<string, { readonly code: string; readonly decline_code?: string; readonly message: string }>
> = {
  "4000000000000002": { code: "card_declined", decline_code: "generic_decline", message: "Your card was declined." },
  "4000000000009995": {
    code: "card_declined",
    decline_code: "insufficient_funds",
    message: "Your card has insufficient funds."
  },
  "4000000000009987": { code: "card_declined", decline_code: "lost_card", message: "Your card was declined." },
  "4000000000009979": { code: "card_declined", decline_code: "stolen_card", message: "Your card was declined." },
  "4100000000000019": { code: "card_declined", decline_code: "fraudulent", message: "Your card was declined." },
  "4000000000000069": { code: "expired_card", decline_code: "expired_card", message: "Your card has expired." },
  "4000000000000119": {
    code: "processing_error",
    message: "An error occurred while processing your card. Try again in a little bit."
  },
  "4000000000006975": {
    code: "card_declined",
    decline_code: "card_velocity_exceeded",
    message: "Your card was declined for making repeated attempts too frequently or exceeding its amount limit."
  }
}

/**
 * The cards whose issuer asks for 3-D Secure on every payment and every set-up, as Stripe
 * documents them: on session `requires_action`, off session declined `authentication_required`.
 */
const ALWAYS_AUTHENTICATE = new Set(["4000002760003184", "4000000000003220"])

/**
 * The card that asks for 3-D Secure once, when it is set up (or paid on session without being set
 * up); off session after that, its charges go through.
 */
const AUTHENTICATE_ON_SETUP = "4000002500003155"

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
    "4000002760003184": "pm_card_authenticationRequired", "4000000000000002": "pm_card_chargeDeclined",
    "4000000000003220": "pm_card_threeDSecure2Required",
    "4000002500003155": "pm_card_authenticationRequiredOnSetup" }
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

/**
 * Stripe's amount rules as its documentation states them (docs.stripe.com/currencies), written
 * here independently of the adapter's table so the fake can catch a wrong one: the minimum charge
 * of some settlement currencies (in Stripe's units), the three-decimal currencies whose last
 * digit must be 0, and ISK, sent with two decimals that are always 00.
 */
const MINIMUM: Readonly<Record<string, number>> = {
  usd: 50,
  eur: 50,
  gbp: 30,
  jpy: 50,
  chf: 50,
  cad: 50,
  aud: 50,
  huf: 17500
}
const STEP: Readonly<Record<string, number>> = { bhd: 10, jod: 10, kwd: 10, omr: 10, tnd: 10, isk: 100 }

/** Stripe's refusal of an amount (a PaymentIntent's or a refund's), or none. */
const amountRefusal = (amount: number, currency: string, charge: boolean): Json | undefined => {
  if (!Number.isInteger(amount) || amount < 1)
    return {
      type: "invalid_request_error",
      code: "parameter_invalid_integer",
      param: "amount",
      message: "This value must be greater than or equal to 1."
    }
  const step = STEP[currency]
  if (step !== undefined && amount % step !== 0)
    return {
      type: "invalid_request_error",
      code: "invalid_charge_amount",
      param: "amount",
      message: `Invalid amount: ${currency.toUpperCase()} amounts must be a multiple of ${step} in the currency's smallest unit.`
    }
  const minimum = MINIMUM[currency]
  if (charge && minimum !== undefined && amount < minimum)
    return {
      type: "invalid_request_error",
      code: "amount_too_small",
      param: "amount",
      message: `Amount must be at least ${minimum} ${currency}`
    }
  return undefined
}

/**
 * A fault the next matching request meets: after the work is done a 500 (`500_after`), the
 * connection dropped before (`drop_before`), or instead of the work, as Stripe answers them: a 429
 * rate limit (`rate_limit`), a 429 `lock_timeout`, a 500 or a 503, a 401 (a rolled or wrong key),
 * a 403 (a restricted key without the permission).
 */
export type Fault = "500_after" | "drop_before" | "rate_limit" | "lock_timeout" | "500" | "503" | "401" | "403"

/** What Stripe answers for a fault that stops a request before any work (its documented error bodies). */
const FAULT_ANSWERS: Readonly<Record<string, { readonly status: number; readonly body: Json }>> = {
  rate_limit: {
    status: 429,
    body: {
      error: {
        type: "invalid_request_error",
        code: "rate_limit",
        doc_url: "https://stripe.com/docs/error-codes/rate-limit",
        message: "Request rate limit exceeded. Learn more about rate limits here https://stripe.com/docs/rate-limits."
      }
    }
  },
  lock_timeout: {
    status: 429,
    body: {
      error: {
        type: "invalid_request_error",
        code: "lock_timeout",
        doc_url: "https://stripe.com/docs/error-codes/lock-timeout",
        message:
          "This object cannot be accessed right now because another API request or Stripe process is currently accessing it. If you see this error intermittently, retry the request."
      }
    }
  },
  "500": { status: 500, body: { error: { type: "api_error", message: "An unknown error occurred" } } },
  "503": {
    status: 503,
    body: { error: { type: "api_error", message: "Stripe is temporarily unavailable. Please try again later." } }
  },
  "401": {
    status: 401,
    body: {
      error: { type: "invalid_request_error", message: "Invalid API Key provided: sk_test_********************test" }
    }
  },
  "403": {
    status: 403,
    body: {
      error: {
        type: "invalid_request_error",
        message:
          "The provided key 'rk_test_*********************test' does not have the required permissions for this endpoint on account 'acct_1Fake'. Having the 'rak_payment_intent_write' permission would allow this request to continue."
      }
    }
  }
}

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
  const setups = new Map<string, Json>()
  /** While set, every request matching `path` meets `fault` (an outage, a rolled key), until turned off. */
  let outage: { readonly path: RegExp; readonly fault: Fault } | undefined
  const idempotent = new Map<
    string,
    { readonly params: string; readonly status: number; readonly body: Json; readonly at: number }
  >()
  const violations: Array<string> = []
  /** The requests that met a fault instead of Stripe's work. */
  const faulted: Array<{ readonly method: string; readonly path: string; readonly fault: Fault }> = []
  const faults: Array<{ readonly path: RegExp; readonly fault: Fault }> = []
  const requests: Array<{
    readonly method: string
    readonly path: string
    readonly params: Json
    readonly key: string
  }> = []
  /** The Stripe accounts the fake knows, by their keys: any other key is refused (401), as Stripe does. */
  interface Account {
    readonly id: string
    readonly live: boolean
    readonly secret_key: string
    readonly publishable_key: string
  }
  const accounts = new Map<string, Account>()
  /** The account each customer lives in: another account's keys neither find nor use it, as at Stripe. */
  const customerAccounts = new Map<string, string>()
  /** The account of the request being answered. */
  let caller: Account | undefined
  /**
   * Accounts that settle in another currency than a charge's (`settle`): Stripe refuses a charge
   * whose amount converts to less than the settlement currency's minimum (`amount_too_small`).
   */
  const settlements = new Map<string, { readonly currency: string; readonly rates: Readonly<Record<string, number>> }>()
  /**
   * Stripe's rule for an account settling in another currency: the amount, converted at the day's
   * rate (here the account's `rates`: settlement units per unit of the charge's currency), must be
   * at least the settlement currency's minimum.
   */
  const settlementRefusal = (amount: number, currency: string): Json | undefined => {
    const settles = caller !== undefined ? settlements.get(caller.id) : undefined
    if (settles === undefined || settles.currency === currency) return undefined
    const minimum = MINIMUM[settles.currency]
    const rate = settles.rates[currency]
    if (minimum === undefined || rate === undefined) return undefined
    const converted = Math.round(amount * rate)
    return converted < minimum
      ? {
          type: "invalid_request_error",
          code: "amount_too_small",
          param: "amount",
          message: `Amount must convert to at least ${minimum} ${settles.currency}. ${amount} ${currency} converts to approximately ${converted} ${settles.currency}.`
        }
      : undefined
  }
  const ownCustomer = (customer: string) =>
    customers.has(customer) && (caller === undefined || customerAccounts.get(customer) === caller.id)
  const tokens = new Map<string, { readonly account: string; readonly body: Json }>()
  const register = (keys: {
    readonly id?: string
    readonly secret_key?: string
    readonly publishable_key?: string
    readonly live?: boolean
  }) => {
    const live = keys.live === true
    const mode = live ? "live" : "test"
    const suffix = randomBytes(12).toString("hex")
    const account: Account = {
      id: keys.id ?? `acct_${randomBytes(8).toString("hex")}`,
      live,
      secret_key: keys.secret_key ?? `sk_${mode}_${suffix}`,
      publishable_key: keys.publishable_key ?? `pk_${mode}_${suffix}`
    }
    accounts.set(account.secret_key, account)
    accounts.set(account.publishable_key, account)
    return account
  }
  // the account of the adapter's own tests (`StripeGateway.make({ secretKey: "sk_test_recur" })`)
  register({ secret_key: "sk_test_recur", publishable_key: "pk_test_recur" })
  let clock = 1_767_225_600 // 2026-01-01, seconds
  let offSessionDeclines = 0
  /** The test card whose decline a forced off-session decline answers (`declineOffSession`). */
  let offSessionDeclineAs = "4000000000000002"
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
    const refused =
      amountRefusal(Number(p.amount), String(p.currency), true) ??
      settlementRefusal(Number(p.amount), String(p.currency))
    if (refused !== undefined) return { status: 400, body: { error: refused } }
    const customer = typeof p.customer === "string" ? p.customer : null
    if (customer !== null && !ownCustomer(customer))
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
    const decline = (code: string, declineCode: string | undefined, message: string) => {
      const error = {
        type: "card_error",
        code,
        ...(declineCode !== undefined ? { decline_code: declineCode } : {}),
        message,
        payment_method: pm
      }
      Object.assign(intent, { status: "requires_payment_method", last_payment_error: error })
      return cardError(code, declineCode, message, { payment_intent: intent })
    }
    if (number === "4000000000000002") return decline("card_declined", "generic_decline", "Your card was declined.")
    if (offSession && offSessionDeclines > 0) {
      offSessionDeclines--
      const as = DECLINING[offSessionDeclineAs]!
      return decline(as.code, as.decline_code, as.message)
    }
    const declining = DECLINING[number]
    if (declining !== undefined) return decline(declining.code, declining.decline_code, declining.message)
    if (ALWAYS_AUTHENTICATE.has(number) || (number === AUTHENTICATE_ON_SETUP && !offSession)) {
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
    if (customer === null || !ownCustomer(customer))
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
    setups.set(setup.id as string, setup)
    const number = numberOf(pm)
    if (ALWAYS_AUTHENTICATE.has(number) || number === AUTHENTICATE_ON_SETUP) {
      // the issuer asks the cardholder: with a return_url, Stripe's page and back; without, Stripe.js
      const returnUrl = typeof p.return_url === "string" ? p.return_url : null
      Object.assign(setup, {
        status: "requires_action",
        next_action: returnUrl
          ? {
              type: "redirect_to_url",
              redirect_to_url: { return_url: returnUrl, url: `${base}/3ds/${setup.id as string}` }
            }
          : { type: "use_stripe_sdk", use_stripe_sdk: {} }
      })
      return { status: 200, body: setup }
    }
    const declining = DECLINING[number]
    if (declining !== undefined) {
      const { code, decline_code, message } = declining
      Object.assign(setup, {
        status: "requires_payment_method",
        last_setup_error: { type: "card_error", code, ...(decline_code ? { decline_code } : {}), message }
      })
      return cardError(code, decline_code, message, { setup_intent: setup })
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
    const refused = amountRefusal(amount, String(intent.currency), false)
    if (refused !== undefined) return { status: 400, body: { error: refused } }
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

  /** The account endpoints: what a key can tell of its account (the check of a merchant's keys). */
  const routeAccount = (
    method: string,
    path: string,
    p: Json,
    account: Account,
    publishable: boolean
  ): { status: number; body: Json } | undefined => {
    if (method === "post" && path === "/v1/tokens") {
      if (p.pii === undefined) return invalid("The fake makes PII tokens only.", undefined, undefined, 400)
      const token: Json = {
        id: id("pii"),
        object: "token",
        client_ip: null,
        created: now(),
        livemode: account.live,
        type: "pii",
        used: false
      }
      tokens.set(token.id as string, { account: account.id, body: token })
      return { status: 200, body: token }
    }
    // the other calls need a secret key, as at Stripe
    if (publishable)
      return {
        status: 401,
        body: {
          error: {
            type: "invalid_request_error",
            message:
              "This API call cannot be made with a publishable API key. Please use a secret API key. You can find a list of your API keys at https://dashboard.stripe.com/account/apikeys."
          }
        }
      }
    if (method === "get" && path === "/v1/account")
      return {
        status: 200,
        body: {
          id: account.id,
          object: "account",
          charges_enabled: true,
          country: "US",
          default_currency: "usd",
          details_submitted: true,
          payouts_enabled: true,
          type: "standard"
        }
      }
    const token = /^\/v1\/tokens\/([^/]+)$/.exec(path)
    if (method === "get" && token) {
      const found = tokens.get(token[1]!)
      // another account's token does not exist for this one
      return found !== undefined && found.account === account.id
        ? { status: 200, body: found.body }
        : invalid(`No such token: '${token[1]}'`, "token", "resource_missing", 404)
    }
    // the fake holds test-mode data only: a live key finds none of it, as at Stripe
    if (account.live)
      return invalid(
        "No such object; a similar object exists in test mode, but a live mode key was used to make this request.",
        undefined,
        "resource_missing",
        404
      )
    return undefined
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
      if (caller !== undefined) customerAccounts.set(c.id as string, caller.id)
      return { status: 200, body: c }
    }
    const deleting = /^\/v1\/customers\/(cus_[^/]+)$/.exec(path)
    if (method === "delete" && deleting) {
      // as in Stripe's dashboard: the customer is gone (a call naming it answers resource_missing)
      if (!ownCustomer(deleting[1]!))
        return invalid(`No such customer: '${deleting[1]}'`, "id", "resource_missing", 404)
      customers.delete(deleting[1]!)
      return { status: 200, body: { id: deleting[1]!, object: "customer", deleted: true } }
    }
    if (method === "get" && path === "/v1/customers/search")
      return {
        status: 200,
        body: searchOf(
          String(p.query),
          [...customers.values()].filter((c) => searchable(c) && ownCustomer(c.id as string))
        )
      }
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
    if (method === "get" && path === "/v1/refunds") {
      // a charge's or an intent's refunds, the newest first
      const data = [...refunds.values()]
        .filter(
          (r) =>
            (p.payment_intent === undefined || r.payment_intent === p.payment_intent) &&
            (p.charge === undefined || r.charge === p.charge)
        )
        .sort((a, b) => (b.created as number) - (a.created as number))
        .slice(0, Number(p.limit ?? 10))
      return { status: 200, body: { object: "list", data, has_more: false, url: "/v1/refunds" } }
    }
    if (method === "get" && path.startsWith("/v1/refunds/")) return one(refunds, "refund")
    if (method === "get" && path.startsWith("/v1/setup_intents/")) return one(setups, "setup_intent")
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
    if (method === "get" && path.startsWith("/3ds/seti_")) {
      // the 3-D Secure page of a card set-up: the cardholder authenticates (or, with ?fail=1,
      // fails to), and Stripe sends them back to the SetupIntent's return_url
      const setup = setups.get(path.slice(5))
      const back = (setup?.next_action as any)?.redirect_to_url?.return_url ?? pendingReturn.get(path.slice(5))
      if (setup?.status === "requires_action") {
        if (back) pendingReturn.set(setup.id as string, back)
        if (url.searchParams.get("fail") === "1")
          Object.assign(setup, {
            status: "requires_payment_method",
            next_action: null,
            last_setup_error: {
              type: "card_error",
              code: "setup_intent_authentication_failure",
              message: "The latest attempt to set up the payment method has failed because authentication failed."
            }
          })
        else {
          methods.get(setup.payment_method as string)!.customer = setup.customer as string
          Object.assign(setup, { status: "succeeded", next_action: null })
        }
      }
      if (back) {
        const to = new URL(back)
        to.searchParams.set("setup_intent", path.slice(5))
        res.writeHead(302, { location: to.toString() }).end()
        return
      }
      res.writeHead(200, { "content-type": "text/html" }).end("<h1>Authenticated</h1>")
      return
    }
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
    const bearer = (req.headers.authorization ?? "").replace(/^Bearer /, "")
    const account = accounts.get(bearer)
    if (account === undefined)
      return answer(res, 401, {
        error: {
          type: "invalid_request_error",
          message: `Invalid API Key provided: ${bearer.slice(0, 8)}${"*".repeat(Math.max(0, bearer.length - 12))}${bearer.slice(-4)}`
        }
      })
    const publishable = bearer.startsWith("pk_")
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
    const pending =
      fault >= 0
        ? faults.splice(fault, 1)[0]!.fault
        : outage?.path.test(`${method.toUpperCase()} ${path}`)
          ? outage.fault
          : undefined
    if (pending === "drop_before") return void req.socket.destroy()
    const refused = pending !== undefined ? FAULT_ANSWERS[pending] : undefined
    if (refused !== undefined) {
      // Stripe did nothing: nothing is kept under the idempotency key either
      const badFault = checkResponse(method, template!, refused.status, refused.body)
      if (badFault !== undefined)
        violations.push(`response ${method.toUpperCase()} ${path} ${refused.status}: ${badFault}`)
      faulted.push({ method, path, fault: pending! })
      res.writeHead(refused.status, {
        "content-type": "application/json",
        "request-id": id("req"),
        ...(pending === "lock_timeout" ? { "stripe-should-retry": "true" } : {})
      })
      res.end(JSON.stringify(refused.body))
      return
    }
    // idempotency: a key answers its first response; the same key with other parameters is refused
    const key = req.headers["idempotency-key"]
    const sent = JSON.stringify(params)
    let result: { status: number; body: Json }
    // Stripe prunes a key 24 hours after its first use: the same key then makes a new object
    // Stripe keeps idempotency keys per account: another account's same key is a new request
    const kept = typeof key === "string" && method === "post" ? idempotent.get(`${account.id}:${key}`) : undefined
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
      caller = account
      result = routeAccount(method, path, params, account, publishable) ?? route(method, path, params)
      if (typeof key === "string" && method === "post")
        idempotent.set(`${account.id}:${key}`, {
          params: sent,
          status: result.status,
          body: structuredClone(result.body),
          at: clock
        })
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
    /**
     * An outage, a rolled key: every request matching `path` (default all) meets `fault` until
     * called again with `undefined`.
     */
    down: (fault: Fault | undefined, path: RegExp = /./) => {
      outage = fault === undefined ? undefined : { path, fault }
    },
    /** The requests that met a fault instead of Stripe's work, in order. */
    faulted,
    setups,
    intents,
    refunds,
    customers,
    /**
     * A Stripe account the fake knows: its keys (fresh ones, or those given), test mode unless
     * `live`; with the `id` of an account already made, more keys of that one (a rolled key).
     * Only a known key is accepted; a key of one account cannot read another's tokens, and a live
     * key finds no test-mode object.
     */
    account: (
      keys: {
        readonly id?: string
        readonly secret_key?: string
        readonly publishable_key?: string
        readonly live?: boolean
      } = {}
    ) => {
      const made = register(keys)
      return { id: made.id, secret_key: made.secret_key, publishable_key: made.publishable_key }
    },
    /**
     * The account now settles in `currency` (`"eur"`): a charge in another currency is refused
     * (`amount_too_small`) when it converts, at `rates` (settlement units per unit of the charge's
     * currency, e.g. `{ usd: 0.9 }`), to less than that currency's minimum — Stripe's rule. `null`:
     * it settles in each charge's own currency again.
     */
    settle: (accountId: string, settlement: { currency: string; rates: Record<string, number> } | null) => {
      if (settlement === null) settlements.delete(accountId)
      else settlements.set(accountId, settlement)
    },
    /** Forgets a key (rolled or deleted in Stripe's dashboard): from now on it is refused (401). */
    roll: (key: string) => {
      accounts.delete(key)
    },
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
    /**
     * A dispute of an intent's charge, as Stripe's `dispute` object (any of Stripe's statuses:
     * `warning_needs_response`, `warning_under_review`, `warning_closed`, `needs_response`,
     * `under_review`, `won`, `lost`, `prevented`), by default of the whole amount, reason
     * `fraudulent`, its evidence due a week after the fake's clock (`dueBy`, seconds; null: none).
     */
    dispute: (
      intentId: string,
      status: string,
      disputeId = id("dp"),
      options: { readonly dueBy?: number | null; readonly amount?: number; readonly reason?: string } = {}
    ) => {
      const intent = intents.get(intentId)!
      const created = now()
      return {
        id: disputeId,
        object: "dispute",
        amount: options.amount ?? intent.amount_received,
        balance_transactions: [],
        charge: intent.latest_charge,
        created,
        currency: intent.currency,
        evidence: {},
        evidence_details: {
          due_by: options.dueBy !== undefined ? options.dueBy : created + 7 * 86_400,
          has_evidence: false,
          past_due: false,
          submission_count: 0
        },
        is_charge_refundable: false,
        livemode: false,
        metadata: {},
        payment_intent: intent.id,
        reason: options.reason ?? "fraudulent",
        status
      } as Json
    },
    /**
     * A refund made in Stripe's dashboard (no metadata of ours) of `amount` of an intent's charge,
     * and the charge as Stripe's `charge.refunded` event carries it then (`amount_refunded`,
     * `refunded`; its `refunds` list is not included, as since API version 2022-11-15).
     */
    dashboardRefund: (intentId: string, amount: number) => {
      const made = createRefund({ payment_intent: intentId, amount: String(amount) })
      if (made.status !== 200) throw new Error(`dashboard refund refused: ${JSON.stringify(made.body)}`)
      const intent = intents.get(intentId)!
      const refunded = [...refunds.values()]
        .filter((r) => r.payment_intent === intentId && r.status === "succeeded")
        .reduce((a, r) => a + (r.amount as number), 0)
      const charge: Json = {
        id: intent.latest_charge,
        object: "charge",
        amount: intent.amount_received,
        amount_captured: intent.amount_received,
        amount_refunded: refunded,
        billing_details: { address: null, email: null, name: null, phone: null },
        captured: true,
        created: intent.created,
        currency: intent.currency,
        customer: intent.customer,
        disputed: false,
        livemode: false,
        metadata: intent.metadata,
        paid: true,
        payment_intent: intent.id,
        payment_method: intent.payment_method,
        refunded: refunded >= (intent.amount_received as number),
        status: "succeeded"
      }
      return { refund: made.body, charge }
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
    /**
     * The next `n` off-session charges decline (a saved card that stopped working), as the
     * declining test card `as` does (default 4000000000000002, a generic decline; 4000000000009979
     * stolen, 4000000000000069 expired…).
     */
    declineOffSession: (n: number, as = "4000000000000002") => {
      offSessionDeclines = n
      offSessionDeclineAs = as
    },
    /** Completes the 3-D Secure challenge of an intent or a SetupIntent (the customer authenticates). */
    authenticate: (intentId: string) => fetch(`${base}/3ds/${intentId}`).then((r) => r.text()),
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** The fake, running. */
export type StripeFake = Awaited<ReturnType<typeof start>>
