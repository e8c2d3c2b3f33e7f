/**
 * The sandbox's 3-D Secure challenge page.
 *
 * @since 0.1.0
 */
import { Billing, Entities, Store } from "@recur/core"
import { Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { SandboxGateway } from "@recur/payment-sandbox"
import { afterChallenge } from "./checkout.js"
import { body, esc, page } from "./shared.js"

/**
 * `GET|POST /sandbox/3ds/:trade_id`: the sandbox's 3-D Secure challenge.
 *
 * @since 0.1.0
 */
export const routes = Layer.mergeAll(
  HttpRouter.add(
    "GET",
    "/sandbox/3ds/:trade_id",
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const trade_id = request.url.split("/")[3]?.split("?")[0] ?? ""
      return yield* page(
        "3-D Secure",
        `<main><h1>3-D Secure test challenge</h1><p>Sandbox: approve or fail the authentication of trade <code>${esc(trade_id)}</code>.</p>
<form method="post" action="${esc(trade_id)}"><input type="hidden" name="approve" value="1"><button type="submit">Complete authentication</button></form>
<form method="post" action="${esc(trade_id)}"><input type="hidden" name="approve" value="0"><button type="submit" style="background:#8a1111">Fail authentication</button></form></main>`
      )
    })
  ),
  HttpRouter.add(
    "POST",
    "/sandbox/3ds/:trade_id",
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const trade_id = request.url.split("/")[3] ?? ""
      const input = yield* Effect.orElseSucceed(body, () => ({}) as Record<string, string>)
      if (trade_id.startsWith("seti_sandbox_")) {
        // a card set-up's challenge: answered, the cardholder goes back where the set-up said
        const back = yield* (yield* SandboxGateway.SandboxControls).completeSetupChallenge(
          trade_id,
          input.approve === "1"
        )
        return back === undefined
          ? yield* page("Not found", "<main><h1>No such card set-up.</h1></main>", 404)
          : HttpServerResponse.redirect(back, { status: 303 })
      }
      const storage = yield* Store.Storage
      const trade = yield* storage.repository(Entities.trade).lookup("id", trade_id)
      if (Option.isNone(trade)) return yield* page("Not found", "<main><h1>No such payment.</h1></main>", 404)
      const controls = yield* SandboxGateway.SandboxControls
      yield* controls.completeChallenge(trade_id, input.approve === "1")
      const billing = yield* Billing.Billing
      const m = trade.value.value.trade.merchant_id
      const r = yield* Effect.orDie(billing.reconcileTrade(m, trade_id))
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
