/**
 * The hosted checkout page, served by the adapter itself: plain HTML, no external assets,
 * keyboard-usable, embeddable in an iframe.
 *
 * @since 0.1.0
 */
import {
  Billing,
  Checkout as CoreCheckout,
  type CheckoutSession,
  Entities,
  Errors,
  SessionPayments,
  Store
} from "@recur/core"
import { Effect, Layer, Option, Result } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as ApiErrors from "../Errors.js"
import { toApiError } from "../Handlers.js"
import * as Page from "../internal/checkoutPage.js"
import * as Observed from "../internal/observed.js"
import { page, body, cardOf, askAboutTrade, payWait } from "./shared.js"

/** Finds a session by id across merchants (the page is public: the id is the capability). */
const findSession = (sessionId: string) =>
  Effect.gen(function* () {
    const storage = yield* Store.Storage
    const found = yield* storage.repository(Entities.checkoutSession).lookup("id", sessionId)
    return Option.map(found, (v) => v.value)
  })

/** The payer's language for a session's pages. */
const languageFor = (request: HttpServerRequest.HttpServerRequest, session: CheckoutSession.CheckoutSession) =>
  Page.languageOf(session.locale, request.headers["accept-language"])

/**
 * The checkout page for a session. Its forms post relative to the page that shows them
 * (`ses_…/pay` from the checkout page, `pay` from the pay route's answer, `../../checkout/ses_…/pay`
 * from the 3-D Secure page), so they post to the right place wherever the routes are mounted.
 */
const checkoutPage = (
  request: HttpServerRequest.HttpServerRequest,
  view: CoreCheckout.SessionView,
  where: { readonly action: string; readonly base: string },
  error?: { readonly message: string; readonly status: number }
) => {
  const language = languageFor(request, view.session)
  return page(
    Page.wordsOf(language).checkout,
    Page.checkoutBody(view, language, where.action, where.base, error?.message),
    error?.status ?? 200,
    language
  )
}

const viewOf = (merchantId: string, sessionId: string) =>
  Effect.orDie(CoreCheckout.Checkout.use((b) => b.sessionView(merchantId, sessionId)))

/** A page that only says something, in the payer's language. */
const notice = (
  request: HttpServerRequest.HttpServerRequest,
  session: CheckoutSession.CheckoutSession | null,
  say: (w: ReturnType<typeof Page.wordsOf>) => string,
  status: number
) => {
  const language = session ? languageFor(request, session) : Page.languageOf(null, request.headers["accept-language"])
  const w = Page.wordsOf(language)
  return page(w.checkout, `<main><h1>${Page.esc(say(w))}</h1></main>`, status, language)
}

const done = (session: CheckoutSession.CheckoutSession, request: HttpServerRequest.HttpServerRequest) => {
  const w = Page.wordsOf(languageFor(request, session))
  // only ever an absolute http(s) URL (checked when the session was opened; checked again here)
  const target = session.return_url !== null && /^https?:\/\/[^/]/i.test(session.return_url) ? session.return_url : null
  if (session.integration_method === "embedded") {
    return page(
      w.complete,
      `<main><h1>${Page.esc(w.complete)}</h1><script>parent.postMessage({type:"recur:checkout_complete",session_id:${JSON.stringify(session.session_id)}},"*")</script></main>`,
      200,
      languageFor(request, session)
    )
  }
  return target
    ? Effect.succeed(HttpServerResponse.redirect(target, { status: 303 }))
    : page(
        w.complete,
        `<main><h1>${Page.esc(w.complete)}</h1><p>${Page.esc(w.closePage)}</p></main>`,
        200,
        languageFor(request, session)
      )
}

const wantsJson = (request: HttpServerRequest.HttpServerRequest) =>
  (request.headers.accept ?? "").includes("application/json")

/**
 * The pay route for a client that confirms in code (`Accept: application/json`): the envelope,
 * 402 `payment_failed` with the trade's `last_payment_error` on a decline.
 */
const payJson = (
  request: HttpServerRequest.HttpServerRequest,
  result: Result.Result<Billing.PaymentResult, Parameters<ReturnType<typeof toApiError>>[0]>
) => {
  const request_id = Observed.requestIdOf(request)
  if (result._tag === "Failure") return Effect.fail(toApiError(request_id)(result.failure))
  const r = result.success
  if (r.status === "unavailable")
    // nothing was charged and the card is not at fault: try again later (no decline, no 402)
    return Effect.succeed(
      HttpServerResponse.setHeader(
        HttpServerResponse.jsonUnsafe(
          {
            code: "processor_unavailable",
            message: "Payments are temporarily unavailable. Nothing was charged; try again in a few minutes.",
            data: {
              request_id,
              reason: Option.getOrElse(
                Option.map(r.error, (e) => e.code),
                () => "processor_unavailable"
              ),
              code: r.trade.last_payment_error?.code ?? null,
              trade_id: r.trade.trade_id,
              trade_status: r.trade.trade_status
            }
          },
          { status: 503 }
        ),
        "retry-after",
        "60"
      )
    )
  if (r.status === "failed") {
    const given = Option.getOrElse(r.error, () => ({ code: "card_declined", message: "The payment failed." }))
    // the decline's class, as the trade keeps it (the trade's own error is the same decline)
    const decline_class = r.trade.last_payment_error?.decline_class
    const error = {
      code: given.code,
      message: given.message,
      ...(decline_class !== undefined ? { decline_class } : {})
    }
    return Effect.fail(
      new ApiErrors.PaymentFailed({
        code: "payment_failed",
        message: error.message,
        data: { request_id, last_payment_error: error }
      })
    )
  }
  return Effect.succeed(
    HttpServerResponse.jsonUnsafe({
      code: "success",
      message: "success",
      data: {
        trade_id: r.trade.trade_id,
        trade_status: r.trade.trade_status,
        next_action: Option.match(r.redirect_url, {
          onNone: () => null,
          onSome: (url) => ({ type: "redirect", redirect: { url } })
        })
      }
    })
  )
}

/**
 * A change the payer makes on the page before paying (the quantity stepper, a discount code):
 * the engine applies it and the payer goes back to the page (303, relative: under any mount
 * prefix), which shows the new amounts; a refusal is the page with its reason (400, or 409 when
 * a payment claimed the session first).
 */
const payerChange = (
  apply: (
    checkout: CoreCheckout.Checkout["Service"],
    merchantId: string,
    sessionId: string,
    input: Record<string, string>
  ) => Effect.Effect<unknown, Errors.RecurError>
) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const session_id = request.url.split("/")[2] ?? ""
    const found = yield* findSession(session_id)
    if (Option.isNone(found)) return yield* notice(request, null, (w) => w.notFound, 404)
    const m = found.value.merchant_id
    const input = yield* Effect.orElseSucceed(body, () => ({}) as Record<string, string>)
    const result = yield* Effect.result(CoreCheckout.Checkout.use((c) => apply(c, m, session_id, input)))
    if (result._tag === "Success") return HttpServerResponse.redirect(`../${session_id}`, { status: 303 })
    const view = yield* viewOf(m, session_id)
    if (view.session.status === "complete") return yield* done(view.session, request)
    if (view.session.status === "expired") return yield* notice(request, view.session, (w) => w.expired, 410)
    return yield* checkoutPage(
      request,
      view,
      { action: "pay", base: "../" },
      { message: result.failure.message, status: result.failure._tag === "SessionRefused" ? 400 : 409 }
    )
  })

/**
 * Where a payer lands after a 3-D Secure challenge (the sandbox's, or a processor's that sends
 * them back), once the trade was asked about: a paid checkout goes where paid checkouts go; an
 * unpaid one shows its page with the failure (`where`: its form's action from this page).
 */
export const afterChallenge = (
  request: HttpServerRequest.HttpServerRequest,
  merchantId: string,
  sessionId: string,
  where: { readonly action: string; readonly base: string },
  asked?: string
) =>
  Effect.gen(function* () {
    const view = yield* viewOf(merchantId, sessionId)
    if (view.session.status === "complete") return yield* done(view.session, request)
    if (view.session.status === "expired") return yield* notice(request, view.session, (w) => w.expired, 410)
    const tradeId = view.session.trade_id
    const trade =
      tradeId !== null
        ? Option.getOrNull(
            yield* Effect.option(Effect.orDie(Billing.Billing.use((b) => b.getTrade(merchantId, tradeId))))
          )
        : null
    // still undecided (the processor has not answered yet, or the challenge's outcome is not in):
    // "we are confirming your payment" — no failure, no Pay button; the page looks again by itself
    // the processor says the payer has not authenticated (back without finishing the challenge):
    // the form again — paying now cancels the waiting charge first, so nothing is paid twice
    if (trade !== null && trade.trade_status === "processing" && asked === "requires_action")
      return yield* checkoutPage(request, view, where, {
        message: Page.messagesOf(languageFor(request, view.session)).common.authNotCompleted,
        status: 402
      })
    if (trade !== null && trade.trade_status === "processing") {
      const language = languageFor(request, view.session)
      const w = Page.wordsOf(language)
      return yield* page(
        w.checkout,
        `<main><h1>${Page.esc(w.confirming)}</h1><meta http-equiv="refresh" content="10"></main>`,
        202,
        language
      )
    }
    const why =
      trade?.last_payment_error?.message ?? Page.messagesOf(languageFor(request, view.session)).common.authFailed
    return yield* checkoutPage(request, view, where, { message: why, status: 402 })
  })

/**
 * The checkout page's routes: `GET /checkout/:id`, `GET /checkout/:id/complete` (back from a
 * processor's 3-D Secure page), `POST /checkout/:id/pay`, `POST /checkout/:id/quantity` (the payer's
 * quantity stepper) and `POST /checkout/:id/discount`.
 *
 * @since 0.1.0
 */
export const routes = Layer.mergeAll(
  HttpRouter.add(
    "GET",
    "/checkout/:session_id",
    Effect.gen(function* () {
      const { session_id } = yield* HttpServerRequest.HttpServerRequest.pipe(
        Effect.map((r) => ({ session_id: r.url.split("/")[2]?.split("?")[0] ?? "" }))
      )
      const request = yield* HttpServerRequest.HttpServerRequest
      const found = yield* findSession(session_id)
      if (Option.isNone(found)) return yield* notice(request, null, (w) => w.notFound, 404)
      const view = yield* viewOf(found.value.merchant_id, session_id)
      const session = view.session
      if (session.status === "complete") return yield* notice(request, session, (w) => w.paid, 200)
      if (session.status === "expired") return yield* notice(request, session, (w) => w.expired, 410)
      return yield* checkoutPage(request, view, { action: `${session.session_id}/pay`, base: "" })
    })
  ),
  HttpRouter.add(
    "GET",
    "/checkout/:session_id/complete",
    Effect.gen(function* () {
      // where a processor's 3-D Secure page sends the payer back: the payment is asked about now
      const request = yield* HttpServerRequest.HttpServerRequest
      const session_id = request.url.split("/")[2] ?? ""
      const found = yield* findSession(session_id)
      if (Option.isNone(found)) return yield* notice(request, null, (w) => w.notFound, 404)
      const m = found.value.merchant_id
      const asked =
        found.value.trade_id !== null && found.value.status === "open"
          ? yield* askAboutTrade(m, found.value.trade_id)
          : undefined
      return yield* afterChallenge(request, m, session_id, { action: "pay", base: "../" }, asked)
    })
  ),
  HttpRouter.add(
    "POST",
    "/checkout/:session_id/pay",
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const session_id = request.url.split("/")[2] ?? ""
      const found = yield* findSession(session_id)
      if (Option.isNone(found))
        return wantsJson(request)
          ? yield* payJson(request, Result.fail(new Errors.NotFound({ resource: "session", id: session_id })))
          : yield* notice(request, null, (w) => w.notFound, 404)
      // a paid or expired session is said so, as the GET says it: no form, no charge attempted
      const before = yield* Effect.orDie(
        CoreCheckout.Checkout.use((b) => b.getSession(found.value.merchant_id, session_id))
      )
      if (before.status === "complete" || before.status === "expired") {
        if (wantsJson(request))
          return yield* payJson(
            request,
            Result.fail(new Errors.SessionNotPayable({ sessionId: session_id, state: before.status }))
          )
        // paid: where a paid checkout goes (the merchant's return_url, or the paid page)
        return yield* before.status === "complete"
          ? done(before, request)
          : notice(request, before, (w) => w.expired, 410)
      }
      const wait = yield* payWait(request, session_id)
      if (wait > 0) {
        const message = Page.messagesOf(languageFor(request, before)).common.tooManyWait(wait)
        return HttpServerResponse.setHeader(
          wantsJson(request)
            ? HttpServerResponse.jsonUnsafe(
                {
                  code: "rate_limit_exceeded",
                  message,
                  data: { request_id: Observed.requestIdOf(request) }
                },
                { status: 429 }
              )
            : yield* page(
                Page.wordsOf(languageFor(request, before)).checkout,
                `<main><h1>${Page.esc(Page.wordsOf(languageFor(request, before)).tooMany)}</h1><p>${Page.esc(message)}</p></main>`,
                429,
                languageFor(request, before)
              ),
          "retry-after",
          String(wait)
        )
      }
      const input = yield* Effect.orElseSucceed(body, () => ({}) as Record<string, string>)
      const sessionPayments = yield* SessionPayments.SessionPayments
      const m = found.value.merchant_id
      const card = cardOf(input)
      // the email and name the payer typed: kept on the customer where it has none
      const payer = { email: input.email, name: input.name }
      const result = yield* Effect.result(sessionPayments.paySession(m, session_id, card, payer))
      if (wantsJson(request)) return yield* payJson(request, result)
      const view = yield* viewOf(m, session_id)
      const session = view.session
      const here = { action: "pay", base: "../" }
      if (result._tag === "Failure") {
        // a double-click: the other click paid it, so this one shows the same outcome
        if (result.failure._tag === "SessionNotPayable" && session.status === "complete")
          return yield* done(session, request)
        return yield* checkoutPage(request, view, here, {
          message: result.failure.message,
          status: result.failure._tag === "SessionNotPayable" ? 409 : 400
        })
      }
      const r = result.success
      if (r.status === "succeeded") return yield* done(session, request)
      if (r.status === "requires_action")
        return HttpServerResponse.redirect(
          Option.getOrElse(r.redirect_url, () => "/"),
          { status: 303 }
        )
      if (r.status === "processing") {
        const language = languageFor(request, session)
        const w = Page.wordsOf(language)
        return yield* page(
          w.checkout,
          `<main><h1>${Page.esc(w.processing)}</h1><p>${Page.esc(w.processingDetail)}</p></main>`,
          202,
          language
        )
      }
      // the processor could not take it: nothing charged, the form again to try later (no decline)
      if (r.status === "unavailable")
        return yield* checkoutPage(request, view, here, {
          message: Page.messagesOf(languageFor(request, session)).common.unavailable,
          status: 503
        })
      return yield* checkoutPage(request, view, here, {
        message: Option.match(r.error, {
          onNone: () => Page.messagesOf(languageFor(request, session)).common.paymentFailed,
          onSome: (e) => e.message
        }),
        status: 402
      })
    })
  ),
  HttpRouter.add(
    "POST",
    "/checkout/:session_id/quantity",
    payerChange((b, m, id, input) => {
      // the line item of a session with several (the first when absent or not a line's index)
      const line = Number(input.line ?? 0)
      return b.setQuantity(m, id, String(input.quantity ?? ""), Number.isInteger(line) && line >= 0 ? line : 0)
    })
  ),
  HttpRouter.add(
    "POST",
    "/checkout/:session_id/discount",
    payerChange((b, m, id, input) =>
      b.setDiscountCode(
        m,
        id,
        String(input.discount_code ?? "")
          .trim()
          .toUpperCase()
      )
    )
  )
)
