import { afterAll, describe, expect, it } from "@effect/vitest"
import { Ids, Money, type Ports } from "@recur/core"
import { Effect, Option } from "effect"
import Stripe_ from "stripe"
import { StripeGateway } from "../src/index.js"
import * as Fake from "./fake/StripeFake.js"

// What the adapter makes of Stripe's answers beyond the contract: unknown outcomes reconciled,
// 3-D Secure, customers mapped once, card numbers refused.
const fake = await Fake.start()
afterAll(() => fake.close())
const gateway = StripeGateway.make({ secretKey: "sk_test_recur", apiBase: fake.base, timeoutMs: 3_000 })
const usd = (n: bigint) => Money.make(n, "USD")
const pm = (id: string) => ({ _tag: "PaymentMethod", id }) as const
const intentsOf = (tradeId: string) =>
  [...fake.intents.values()].filter((i) => (i.metadata as any).recur_trade_id === tradeId)

describe("Stripe adapter outcomes", { timeout: 60_000 }, () => {
  it.effect(
    "a 500 after Stripe charged, on every re-send: Unknown; retrieve finds the charge; the same attempt again charges nothing",
    () =>
      Effect.gen(function* () {
        const trade_id = yield* Ids.make("trd")
        const request = {
          trade_id,
          merchant_id: "mch_1",
          amount: usd(2500n),
          source: pm("pm_card_visa"),
          off_session: false
        }
        // the SDK re-sends a 5xx twice with the same key: all three meet the fault
        fake.fault(/^POST \/v1\/payment_intents$/, "500_after", 3)
        expect((yield* gateway.charge(request))._tag).toBe("Unknown")
        // the engine sends the same attempt again (within the key's day): the first call's answer
        const again = yield* gateway.charge(request)
        expect(again._tag).toBe("Succeeded")
        expect(intentsOf(trade_id).length).toBe(1)
        // from then on it is read by the reference it named
        expect(
          yield* gateway.retrieve(trade_id, {
            attempt: 1,
            references: [{ attempt: 1, reference: intentsOf(trade_id)[0]!.id as string }]
          })
        ).toEqual(again)
        // without references (no storage), once Stripe's search has caught up, it finds it too
        fake.advance(120)
        expect(yield* gateway.retrieve(trade_id)).toEqual(again)
        expect(intentsOf(trade_id).length).toBe(1)
      })
  )

  it.effect(
    "a connection dropped before Stripe heard: Unknown; retrieve says no charge; the attempt then goes through once",
    () =>
      Effect.gen(function* () {
        const trade_id = yield* Ids.make("trd")
        const request = {
          trade_id,
          merchant_id: "mch_1",
          amount: usd(2500n),
          source: pm("pm_card_visa"),
          off_session: false
        }
        // dropped three times: the SDK's own re-sends of a closed connection (2) meet the others
        fake.fault(/^POST \/v1\/payment_intents$/, "drop_before", 3)
        expect((yield* gateway.charge(request))._tag).toBe("Unknown")
        fake.advance(120)
        expect(yield* gateway.retrieve(trade_id)).toMatchObject({ _tag: "Failed", code: "no_such_charge" })
        expect((yield* gateway.charge(request))._tag).toBe("Succeeded")
        expect(intentsOf(trade_id).length).toBe(1)
      })
  )

  it.effect(
    "3-D Secure: requires action with Stripe's redirect; after the customer authenticates, retrieve succeeds",
    () =>
      Effect.gen(function* () {
        const trade_id = yield* Ids.make("trd")
        const outcome = yield* gateway.charge({
          trade_id,
          merchant_id: "mch_1",
          customer_id: "cus_3ds",
          amount: usd(2500n),
          source: pm("pm_card_authenticationRequired"),
          off_session: false,
          return_url: "https://shop.example/back"
        })
        expect(outcome._tag).toBe("RequiresAction")
        if (outcome._tag !== "RequiresAction") return
        expect(outcome.redirect_url).toContain("/3ds/pi_")
        // read by the reference it named (a search would not see it yet)
        expect(outcome.reference).toMatch(/^pi_/)
        const known = { attempt: 1, references: [{ attempt: 1, reference: outcome.reference! }] }
        expect((yield* gateway.retrieve(trade_id, known))._tag).toBe("RequiresAction")
        const back = yield* Effect.promise(() => fetch(outcome.redirect_url, { redirect: "manual" }))
        expect(back.headers.get("location")).toMatch(/^https:\/\/shop\.example\/back\?payment_intent=pi_/)
        const after = yield* gateway.retrieve(trade_id, known)
        expect(after).toMatchObject({ _tag: "Succeeded", last4: "3184" })
        // off session, that card needs the customer again: declined with Stripe's code
        const token = after._tag === "Succeeded" ? Option.getOrThrow(after.token) : ""
        const renewal = yield* gateway.charge({
          trade_id: yield* Ids.make("trd"),
          merchant_id: "mch_1",
          amount: usd(2500n),
          source: { _tag: "Token", token },
          off_session: true
        })
        expect(renewal).toMatchObject({ _tag: "Failed", code: "authentication_required" })
      })
  )

  it.effect(
    "a trade paid twice at Stripe (two intents succeeded): paid once by the first, the extra refunded in full, once",
    () =>
      Effect.gen(function* () {
        const trade_id = yield* Ids.make("trd")
        const attempt = (n: number) =>
          gateway.charge({
            trade_id,
            attempt: n,
            merchant_id: "mch_1",
            customer_id: "cus_twice",
            amount: usd(2500n),
            source: pm("pm_card_visa"),
            off_session: false
          })
        // two attempts each sent without knowing of the other (what the checks now prevent)
        const first = yield* attempt(1)
        const second = yield* attempt(2)
        expect([first._tag, second._tag]).toEqual(["Succeeded", "Succeeded"])
        const ref = (o: typeof first) => (o._tag === "Succeeded" ? o.reference! : "")
        const known = {
          attempt: 2,
          references: [
            { attempt: 1, reference: ref(first) },
            { attempt: 2, reference: ref(second) }
          ]
        }
        for (let i = 0; i < 2; i++) expect(yield* gateway.retrieve(trade_id, known)).toEqual(first)
        const refunds = [...fake.refunds.values()].filter((r: any) => r.payment_intent === ref(second)) as Array<any>
        expect(refunds.map((r) => [r.amount, r.metadata.recur_duplicate_of])).toEqual([[2500, ref(first)]])
        expect([...fake.refunds.values()].filter((r: any) => r.payment_intent === ref(first))).toEqual([])
        expect(fake.violations).toEqual([])
      })
  )

  it.effect("one Stripe customer per customer of ours; card numbers are refused before any call", () =>
    Effect.gen(function* () {
      const before = fake.customers.size
      for (let i = 0; i < 2; i++)
        yield* gateway.charge({
          trade_id: yield* Ids.make("trd"),
          merchant_id: "mch_map",
          customer_id: "cus_same",
          amount: usd(1000n),
          source: pm("pm_card_visa"),
          off_session: false
        })
      const saved = yield* gateway.saveCard({
        merchant_id: "mch_map",
        customer_id: "cus_same",
        source: pm("pm_card_mastercard")
      })
      expect(saved).toMatchObject({ _tag: "Saved", brand: "mastercard", last4: "4444" })
      expect(fake.customers.size - before).toBe(1)
      const calls = fake.requests.length
      const card: Ports.NewPaymentSource = {
        _tag: "Card",
        card: { number: "4242424242424242", exp_month: 12, exp_year: 2030, cvc: "123" }
      }
      expect(
        yield* gateway.charge({
          trade_id: yield* Ids.make("trd"),
          merchant_id: "m",
          amount: usd(1n),
          source: card,
          off_session: false
        })
      ).toMatchObject({ _tag: "Failed", code: "card_not_accepted" })
      expect(yield* gateway.saveCard({ merchant_id: "m", customer_id: "c", source: card })).toMatchObject({
        _tag: "Failed",
        code: "card_not_accepted"
      })
      expect(fake.requests.length).toBe(calls)
      expect(fake.violations).toEqual([])
    })
  )
})

// Issue 30, items 4 and 5: an outage or the merchant's keys are never a decline; the 3-D Secure
// cards challenge a card set-up on session and decline off session.
describe("Stripe adapter: an outage is not a decline", { timeout: 60_000 }, () => {
  const request = (trade_id: string, extra: Partial<Ports.ChargeRequest> = {}): Ports.ChargeRequest => ({
    trade_id,
    merchant_id: "mch_down",
    customer_id: "cus_down",
    amount: usd(2500n),
    source: pm("pm_card_visa"),
    off_session: false,
    ...extra
  })

  it.effect(
    "429, lock_timeout, 401 and 403 answer Unavailable with the reason, charge nothing and name no key; once Stripe answers the next attempt is charged",
    () =>
      Effect.gen(function* () {
        const cases = [
          ["rate_limit", "processor_unavailable", "rate_limit"],
          ["lock_timeout", "processor_unavailable", "lock_timeout"],
          ["401", "merchant_configuration", "invalid_api_key"],
          ["403", "merchant_configuration", "permission_denied"]
        ] as const
        for (const [fault, reason, code] of cases) {
          const trade_id = yield* Ids.make("trd")
          // every request fails: the customer's look-up first (nothing was created)
          fake.down(fault)
          const outcome = yield* gateway.charge(request(trade_id))
          fake.down(undefined)
          expect(outcome, fault).toMatchObject({ _tag: "Unavailable", reason, code })
          expect(JSON.stringify(outcome)).not.toMatch(/sk_test|rk_test|acct_/)
          expect(intentsOf(trade_id).length).toBe(0)
          // only the intent's creation fails (the customer is known by then)
          fake.down(fault, /^POST \/v1\/payment_intents$/)
          expect(yield* gateway.charge(request(trade_id)), fault).toMatchObject({ _tag: "Unavailable", reason, code })
          fake.down(undefined)
          expect(intentsOf(trade_id).length).toBe(0)
          expect((yield* gateway.charge(request(trade_id, { attempt: 2 })))._tag).toBe("Succeeded")
          expect(intentsOf(trade_id).length).toBe(1)
        }
        // a saved card's renewal (off session, no look-up): the same
        const first = yield* gateway.charge(request(yield* Ids.make("trd")))
        const token = first._tag === "Succeeded" ? Option.getOrThrow(first.token) : ""
        fake.down("401")
        const renewal = yield* gateway.charge({
          ...request(yield* Ids.make("trd")),
          source: { _tag: "Token", token },
          off_session: true
        })
        fake.down(undefined)
        expect(renewal).toMatchObject({ _tag: "Unavailable", reason: "merchant_configuration" })
        // a card set-up meets the same: nothing checked, not the card's fault
        fake.down("rate_limit")
        expect(
          yield* gateway.saveCard({ merchant_id: "mch_down", customer_id: "cus_down", source: pm("pm_card_visa") })
        ).toMatchObject({ _tag: "Unavailable", reason: "processor_unavailable" })
        fake.down(undefined)
        expect(fake.violations).toEqual([])
      })
  )

  it("the mapping: rate limits and lock timeouts are the processor's, keys, permissions and amounts under the minimum the merchant's; declines and 5xx are not", () => {
    const E = (Stripe_ as any).errors
    const raw = (type: string, statusCode: number, code?: string) => ({
      type,
      statusCode,
      message: "Invalid API Key provided: sk_live_****1234",
      ...(code ? { code } : {})
    })
    expect(
      StripeGateway.unavailableOf(new E.StripeRateLimitError(raw("invalid_request_error", 429, "rate_limit")))
    ).toMatchObject({
      reason: "processor_unavailable",
      code: "rate_limit"
    })
    expect(
      StripeGateway.unavailableOf(new E.StripeInvalidRequestError(raw("invalid_request_error", 409, "lock_timeout")))
    ).toMatchObject({
      reason: "processor_unavailable",
      code: "lock_timeout"
    })
    const key = StripeGateway.unavailableOf(new E.StripeAuthenticationError(raw("invalid_request_error", 401)))
    expect(key).toMatchObject({ reason: "merchant_configuration", code: "invalid_api_key" })
    expect(key?.message).not.toContain("sk_live")
    expect(StripeGateway.unavailableOf(new E.StripePermissionError(raw("invalid_request_error", 403)))).toMatchObject({
      reason: "merchant_configuration"
    })
    expect(
      StripeGateway.unavailableOf(
        new E.StripeInvalidRequestError(raw("invalid_request_error", 400, "amount_too_small"))
      )
    ).toMatchObject({
      reason: "merchant_configuration",
      code: "amount_too_small",
      below_minimum: true
    })
    expect(StripeGateway.unavailableOf(new E.StripeCardError(raw("card_error", 402, "card_declined")))).toBeUndefined()
    expect(StripeGateway.unavailableOf(new E.StripeAPIError(raw("api_error", 500)))).toBeUndefined()
    expect(StripeGateway.unavailableOf(new Error("socket hang up"))).toBeUndefined()
  })

  it.effect("the SDK re-sends a 5xx and a lock timeout itself, with the same idempotency key: charged once", () =>
    Effect.gen(function* () {
      const after500 = yield* Ids.make("trd")
      fake.fault(/^POST \/v1\/payment_intents$/, "500_after")
      expect((yield* gateway.charge(request(after500)))._tag).toBe("Succeeded")
      expect(intentsOf(after500).length).toBe(1)
      const locked = yield* Ids.make("trd")
      fake.fault(/^POST \/v1\/payment_intents$/, "lock_timeout")
      expect((yield* gateway.charge(request(locked)))._tag).toBe("Succeeded")
      expect(intentsOf(locked).length).toBe(1)
      const sent = fake.requests.filter(
        (r) =>
          r.path === "/v1/payment_intents" &&
          r.method === "post" &&
          (r.params.metadata as any)?.recur_trade_id === locked
      )
      expect(sent.length).toBe(2)
      expect(fake.violations).toEqual([])
    })
  )
})

describe("Stripe adapter: cards that always ask for 3-D Secure", { timeout: 60_000 }, () => {
  for (const method of ["pm_card_authenticationRequired", "pm_card_threeDSecure2Required"]) {
    it.effect(`${method}: a card set-up with a return_url is challenged, completed by the cardholder, then saved`, () =>
      Effect.gen(function* () {
        const customer_id = yield* Ids.make("cus")
        const setup = yield* gateway.saveCard({
          merchant_id: "mch_3ds",
          customer_id,
          source: pm(method),
          return_url: "https://shop.example/card/done"
        })
        expect(setup._tag).toBe("RequiresAction")
        if (setup._tag !== "RequiresAction") return
        expect(setup.redirect_url).toContain("/3ds/seti_")
        // not yet authenticated: still waiting; another customer's or merchant's asking finds nothing
        expect(
          (yield* gateway.completeSaveCard!({ merchant_id: "mch_3ds", customer_id, setup_id: setup.setup_id }))._tag
        ).toBe("RequiresAction")
        expect(
          yield* gateway.completeSaveCard!({
            merchant_id: "mch_3ds",
            customer_id: "cus_other",
            setup_id: setup.setup_id
          })
        ).toMatchObject({ _tag: "Failed" })
        expect(
          yield* gateway.completeSaveCard!({ merchant_id: "mch_other", customer_id, setup_id: setup.setup_id })
        ).toMatchObject({ _tag: "Failed" })
        const back = yield* Effect.promise(() => fetch(setup.redirect_url, { redirect: "manual" }))
        const returned = new URL(back.headers.get("location")!)
        expect(`${returned.origin}${returned.pathname}`).toBe("https://shop.example/card/done")
        expect(returned.searchParams.get("setup_intent")).toBe(setup.setup_id)
        const saved = yield* gateway.completeSaveCard!({
          merchant_id: "mch_3ds",
          customer_id,
          setup_id: setup.setup_id
        })
        expect(saved).toMatchObject({ _tag: "Saved", brand: "visa" })
        // off session that card still wants its cardholder: declined authentication_required
        const token = saved._tag === "Saved" ? saved.token : ""
        expect(
          yield* gateway.charge({
            trade_id: yield* Ids.make("trd"),
            merchant_id: "mch_3ds",
            amount: usd(900n),
            source: { _tag: "Token", token },
            off_session: true
          })
        ).toMatchObject({ _tag: "Failed", code: "authentication_required" })
        // without a return_url (no cardholder to send anywhere) it cannot be saved
        expect(yield* gateway.saveCard({ merchant_id: "mch_3ds", customer_id, source: pm(method) })).toMatchObject({
          _tag: "Failed",
          code: "authentication_required"
        })
        // a failed authentication is Failed
        const again = yield* gateway.saveCard({
          merchant_id: "mch_3ds",
          customer_id,
          source: pm(method),
          return_url: "https://shop.example/card/done"
        })
        if (again._tag !== "RequiresAction") return expect(again._tag).toBe("RequiresAction")
        yield* Effect.promise(() => fetch(`${again.redirect_url}?fail=1`, { redirect: "manual" }))
        expect(
          yield* gateway.completeSaveCard!({ merchant_id: "mch_3ds", customer_id, setup_id: again.setup_id })
        ).toMatchObject({ _tag: "Failed", code: "setup_intent_authentication_failure" })
        expect(fake.violations).toEqual([])
      })
    )
  }
})
