import { describe, expect, it } from "@effect/vitest"
import { Ids, Money, Ports } from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Effect } from "effect"

const usd = Money.make(3000n, "USD")
const card = (number: string) => ({
  _tag: "Card" as const,
  card: { number, exp_month: 12, exp_year: 2099, cvc: "123" }
})

/** The sandbox's challenge page, which the gateway port carries for the host to serve. */
const challengePage = Effect.map(Ports.PaymentGateway, (g) => {
  if (g.challengePage === undefined) throw new Error("the sandbox gateway has a challenge page")
  return g.challengePage
})

describe("the sandbox's 3-D Secure challenge page (Ports.ChallengePage)", () => {
  it.effect(
    "shows the challenge's forms, the id escaped",
    () =>
      Effect.gen(function* () {
        const page = yield* challengePage
        const shown = yield* page.show(`trd_x"><script>`)
        expect(shown.title).toBe("3-D Secure")
        expect(shown.html).toContain("<code>trd_x&quot;&gt;&lt;script&gt;</code>")
        expect(shown.html).toContain(`action="trd_x&quot;&gt;&lt;script&gt;"`)
        expect(shown.html).toContain(`name="approve" value="1"`)
        expect(shown.html).toContain(`name="approve" value="0"`)
        expect(shown.html).not.toContain("<script>")
      }).pipe(Effect.provide(SandboxGateway.layer())),
    10_000
  )

  it.effect(
    "a charge's answer decides the charge and names its trade for the engine to ask about",
    () =>
      Effect.gen(function* () {
        const g = yield* Ports.PaymentGateway
        const page = yield* challengePage
        for (const [approve, outcome] of [
          ["1", "Succeeded"],
          ["0", "Failed"]
        ] as const) {
          const tradeId = yield* Ids.make("trd")
          const first = yield* g.charge({
            trade_id: tradeId,
            merchant_id: "m",
            amount: usd,
            source: card("4000000000003220"),
            off_session: false
          })
          expect(first._tag).toBe("RequiresAction")
          expect(yield* page.answer(tradeId, { approve })).toEqual(Ports.ChallengeAnswer.Charge({ trade_id: tradeId }))
          expect((yield* g.retrieve(tradeId))._tag).toBe(outcome)
        }
        // a challenge no charge waits on: nothing decided, the trade still named (the engine asks)
        const unknown = yield* Ids.make("trd")
        expect(yield* page.answer(unknown, { approve: "1" })).toEqual(
          Ports.ChallengeAnswer.Charge({ trade_id: unknown })
        )
        expect((yield* g.retrieve(unknown))._tag).toBe("Failed")
      }).pipe(Effect.provide(SandboxGateway.layer())),
    10_000
  )

  it.effect(
    "a card set-up's answer sends the cardholder back to its return URL; an unknown set-up is said so",
    () =>
      Effect.gen(function* () {
        const g = yield* Ports.PaymentGateway
        const page = yield* challengePage
        const setup = yield* g.saveCard({
          merchant_id: "m",
          customer_id: "c",
          source: card("4000002760003184"),
          return_url: "https://shop.example/back?x=1"
        })
        if (setup._tag !== "RequiresAction") throw new Error(`expected a challenge, got ${setup._tag}`)
        expect(setup.redirect_url).toBe(`/sandbox/3ds/${setup.setup_id}`)
        expect(yield* page.answer(setup.setup_id, { approve: "1" })).toEqual(
          Ports.ChallengeAnswer.ReturnTo({ url: `https://shop.example/back?x=1&setup_intent=${setup.setup_id}` })
        )
        expect(
          (yield* g.completeSaveCard!({ merchant_id: "m", customer_id: "c", setup_id: setup.setup_id }))._tag
        ).toBe("Saved")
        expect(yield* page.answer("seti_sandbox_missing", { approve: "1" })).toEqual(
          Ports.ChallengeAnswer.Unknown({
            content: { title: "Not found", html: "<main><h1>No such card set-up.</h1></main>" }
          })
        )
      }).pipe(Effect.provide(SandboxGateway.layer())),
    10_000
  )
})
