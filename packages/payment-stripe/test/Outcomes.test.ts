import { afterAll, describe, expect, it } from "@effect/vitest"
import { Ids, Money, type Ports } from "@recur/core"
import { Effect, Option } from "effect"
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
    "a 500 after Stripe charged: Unknown; retrieve finds the charge; the same attempt again charges nothing",
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
        fake.fault(/^POST \/v1\/payment_intents$/, "500_after")
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
        // dropped twice: the SDK's own retry of a closed connection meets the second
        fake.fault(/^POST \/v1\/payment_intents$/, "drop_before", 2)
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
