import { afterAll, describe, expect, it } from "@effect/vitest"
import { Ids, Money } from "@recur/core"
import { Effect, Option } from "effect"
import { PaymentGatewayContract } from "@recur/testing"
import { StripeCurrency, StripeGateway } from "../src/index.js"
import * as Fake from "./fake/StripeFake.js"

// The adapter's amounts in Stripe's units, call by call, on the fake (which refuses what Stripe
// refuses): a KWD charge and its refunds rounded down to 10 fils, a refund that rounds to 0 never
// sent, a zero charge with a saved card never sent, and the fake's own refusals.
const fake = await Fake.start()
afterAll(() => fake.close())
const gateway = StripeGateway.make({ secretKey: "sk_test_recur", apiBase: fake.base, timeoutMs: 3_000 })
const kwd = (n: bigint) => Money.make(n, "KWD")

describe("Stripe adapter: amounts in Stripe's units", { timeout: 60_000 }, () => {
  it.effect("12.345 KWD is charged 12.340; refunds round down too, one of 0.005 is refused unsent", () =>
    Effect.gen(function* () {
      const trade_id = yield* Ids.make("trd")
      const charged = yield* gateway.charge({
        trade_id,
        merchant_id: "mch_1",
        amount: kwd(12_345n),
        source: { _tag: "PaymentMethod", id: "pm_card_visa" },
        off_session: false
      })
      expect(charged._tag).toBe("Succeeded")
      const intent = [...fake.intents.values()].find((i) => (i.metadata as any).recur_trade_id === trade_id) as any
      expect([intent.amount, intent.currency]).toEqual([12_340, "kwd"])
      // the engine hands the charge's reference back: the intent is read by id (search lags)
      const charges = PaymentGatewayContract.knownOf(charged)
      const sent = fake.requests.length
      const tiny = yield* gateway.refund({ refund_id: "ref_tiny", trade_id, amount: kwd(5n), charges })
      expect(tiny).toMatchObject({ _tag: "Failed", code: "amount_too_small" })
      expect(fake.requests.length).toBe(sent)
      const part = yield* gateway.refund({ refund_id: "ref_part", trade_id, amount: kwd(1_005n), charges })
      expect(part._tag).toBe("Succeeded")
      // the rest: Recur's 11.340 of the 12.345 it booked, never more than Stripe took
      const rest = yield* gateway.refund({ refund_id: "ref_rest", trade_id, amount: kwd(11_340n), charges })
      expect(rest._tag).toBe("Succeeded")
      expect(
        ([...fake.refunds.values()] as Array<any>).filter((r) => r.payment_intent === intent.id).map((r) => r.amount)
      ).toEqual([1_000, 11_340])
      expect(fake.violations).toEqual([])
    })
  )

  it.effect("a zero charge with a saved card is refused unsent; the gateway's minimum is Stripe's", () =>
    Effect.gen(function* () {
      const first = yield* gateway.charge({
        trade_id: yield* Ids.make("trd"),
        merchant_id: "mch_1",
        customer_id: "cus_units",
        amount: Money.make(0n, "USD"),
        source: { _tag: "PaymentMethod", id: "pm_card_visa" },
        off_session: false
      })
      expect(first._tag).toBe("Succeeded")
      if (first._tag !== "Succeeded") return
      expect(first.transaction_id.startsWith("seti_")).toBe(true)
      const sent = fake.requests.length
      const zero = yield* gateway.charge({
        trade_id: yield* Ids.make("trd"),
        merchant_id: "mch_1",
        amount: Money.make(0n, "USD"),
        source: { _tag: "Token", token: Option.getOrThrow(first.token) },
        off_session: true
      })
      expect(zero).toMatchObject({ _tag: "Failed", code: "amount_too_small" })
      expect(fake.requests.length).toBe(sent)
      expect(yield* gateway.minimumCharge!({ merchant_id: "mch_1", currency: "GBP" })).toEqual(
        Option.some(Money.make(30n, "GBP"))
      )
      expect(yield* gateway.minimumCharge!({ merchant_id: "mch_1", currency: "KWD" })).toEqual(Option.none())
    })
  )

  it("the fake refuses what Stripe refuses: 0, under the minimum, a KWD amount not ending in 0, ISK not in 00", async () => {
    const post = (path: string, body: Record<string, string>) =>
      fetch(`${fake.base}${path}`, {
        method: "POST",
        headers: { authorization: "Bearer sk_test_recur", "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(body)
      }).then(async (r) => [r.status, ((await r.json()) as any).error?.code])
    const intent = (amount: string, currency: string) =>
      post("/v1/payment_intents", { amount, currency, payment_method: "pm_card_visa", confirm: "true" })
    expect(await intent("0", "usd")).toEqual([400, "parameter_invalid_integer"])
    expect(await intent("49", "usd")).toEqual([400, "amount_too_small"])
    expect(await intent("12345", "kwd")).toEqual([400, "invalid_charge_amount"])
    expect(await intent("49950", "isk")).toEqual([400, "invalid_charge_amount"])
    expect(await intent("12340", "kwd")).toEqual([200, undefined])
    // every amount the adapter's table makes is one the fake takes
    for (const code of ["KWD", "BHD", "ISK", "MGA", "JPY", "USD", "GBP", "HUF"]) {
      const sent = StripeCurrency.toStripe(Money.make(123_456n, code)).amount
      expect(await intent(String(sent), code.toLowerCase())).toEqual([200, undefined])
    }
    expect(fake.violations).toEqual([])
  }, 30_000)
})
