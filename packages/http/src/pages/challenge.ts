/**
 * A payment gateway's own 3-D Secure challenge page (`Ports.ChallengePage`, the sandbox's test
 * challenge), mounted generically: the gateway says what the page shows and what the payer's
 * answer leads to; the adapter serves it in the payer's page layout and, once a charge's
 * challenge is answered, asks about the trade and shows where the payment stands.
 *
 * @since 0.1.0
 */
import { Entities, Ports, Reconciliation, Store } from "@recur/core"
import { Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { afterChallenge } from "./checkout.js"
import { body, page } from "./shared.js"

/**
 * Where the challenge page is mounted: where the sandbox's `redirect_url`s point by default (its
 * `challengeBaseUrl`), the challenge's id appended.
 *
 * @since 0.1.0
 */
export const CHALLENGE_PATH = "/sandbox/3ds"

/** A gateway without a challenge page of its own has no challenge here. */
const noSuchPayment = () => page("Not found", "<main><h1>No such payment.</h1></main>", 404)

/**
 * `GET|POST /sandbox/3ds/:challenge_id`: the gateway's challenge page, and the payer's answer.
 *
 * @since 0.1.0
 */
export const routes = Layer.mergeAll(
  HttpRouter.add(
    "GET",
    `${CHALLENGE_PATH}/:challenge_id`,
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const challengeId = request.url.split("/")[3]?.split("?")[0] ?? ""
      const challenges = (yield* Ports.PaymentGateway).challengePage
      if (challenges === undefined) return yield* noSuchPayment()
      const content = yield* challenges.show(challengeId)
      return yield* page(content.title, content.html)
    })
  ),
  HttpRouter.add(
    "POST",
    `${CHALLENGE_PATH}/:challenge_id`,
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const challengeId = request.url.split("/")[3] ?? ""
      const challenges = (yield* Ports.PaymentGateway).challengePage
      if (challenges === undefined) return yield* noSuchPayment()
      const input = yield* Effect.orElseSucceed(body, () => ({}) as Record<string, string>)
      const answer = yield* challenges.answer(challengeId, input)
      if (answer._tag === "ReturnTo") return HttpServerResponse.redirect(answer.url, { status: 303 })
      if (answer._tag === "Unknown") return yield* page(answer.content.title, answer.content.html, 404)
      // a charge's challenge, answered: the engine asks the gateway about the trade now
      const storage = yield* Store.Storage
      const trade = yield* storage.repository(Entities.trade).lookup("id", answer.trade_id)
      if (Option.isNone(trade)) return yield* noSuchPayment()
      const reconciliation = yield* Reconciliation.Reconciliation
      const m = trade.value.value.trade.merchant_id
      const r = yield* Effect.orDie(reconciliation.reconcileTrade(m, answer.trade_id))
      const sessionId = trade.value.value.trade.session_id
      if (sessionId === null)
        return yield* page(
          "Done",
          `<main><h1>Authentication ${r.status === "succeeded" ? "complete" : "failed"}.</h1></main>`
        )
      return yield* afterChallenge(
        request,
        m,
        sessionId,
        { action: `../../checkout/${sessionId}/pay`, base: "../../checkout/" },
        r.status
      )
    })
  )
)
