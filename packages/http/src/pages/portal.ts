/**
 * The customer portal's pages, at the portal session's signed link.
 *
 * @since 0.1.0
 */
import {
  Billing,
  type Errors,
  Merchants,
  Notifications,
  PaymentMethods,
  Portal,
  type PortalSession,
  Subscriptions
} from "@recur/core"
import { Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as Page from "../internal/checkoutPage.js"
import * as PortalPage from "../internal/portalPage.js"
import { body, cardOf, esc, htmlAttributes, payWait, refusalStatus } from "./shared.js"

/** `/portal/:id/:token[/subscription/:sub/:action]`: the parts of a portal path. */
const portalPath = (request: HttpServerRequest.HttpServerRequest) => {
  const parts = request.url.split("?")[0]!.split("/")
  return { id: parts[2] ?? "", token: parts[3] ?? "", subscriptionId: parts[5] ?? "" }
}

const portalPage = (body: string, status: number, language: Page.Language) =>
  HttpServerResponse.html(`<!doctype html><html ${htmlAttributes(language)}><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${esc(PortalPage.portalWords(language).title)}</title>
<style>${PortalPage.portalStyle}</style></head>
<body>${body}</body></html>`).pipe(
    HttpServerResponse.setStatus(status),
    HttpServerResponse.setHeaders({ "cache-control": "no-store", "referrer-policy": "no-referrer" }),
    Effect.succeed
  )

/** The customer's language for a portal page: the session's `locale`, else the browser's. */
const portalLanguage = (request: HttpServerRequest.HttpServerRequest, session: PortalSession.PortalSession | null) =>
  Page.languageOf(session?.locale ?? null, request.headers["accept-language"])

/** A portal route of the session its link names: an unknown, wrongly signed or expired link is 404. */
const withPortal = <A, E, R>(
  route: (
    request: HttpServerRequest.HttpServerRequest,
    session: PortalSession.PortalSession,
    path: ReturnType<typeof portalPath>,
    language: Page.Language
  ) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const path = portalPath(request)
    const found = yield* Portal.Portal.use((p) => p.sessionOf(path.id, path.token))
    if (Option.isNone(found)) {
      const language = portalLanguage(request, null)
      const w = PortalPage.portalWords(language)
      return yield* portalPage(`<main><h1>${esc(w.expired)}</h1><p>${esc(w.expiredHint)}</p></main>`, 404, language)
    }
    return yield* route(request, found.value, path, portalLanguage(request, found.value))
  })

type Message = { readonly text: string; readonly error: boolean; readonly status: number }

/** The portal page, with a message above it. */
const portalAnswer = (session: PortalSession.PortalSession, base: string, language: Page.Language, message?: Message) =>
  Effect.flatMap(Effect.orDie(Portal.Portal.use((p) => p.view(session))), (view) =>
    portalPage(PortalPage.portalHtml(view, base, language, message), message?.status ?? 200, language)
  )

/** The way from `/portal/:id/:token/subscription/:sub/:action` back to the portal's page. */
const FROM_ACTION = "../../../"

/**
 * A portal route on one of the session customer's subscriptions, when the merchant allows
 * `feature`: another customer's subscription is 404, a turned-off feature 403, and — for a route
 * that `charges` (a card, a switch) — too many attempts 429 (the card-testing guard of the pay
 * routes), each answered with the portal page.
 */
const portalRoute = <R>(
  feature: Portal.Feature,
  charges: boolean,
  route: (
    request: HttpServerRequest.HttpServerRequest,
    session: PortalSession.PortalSession,
    path: ReturnType<typeof portalPath>,
    language: Page.Language,
    refuse: (message: Message) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, Portal.Portal>
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>
) =>
  withPortal((request, session, path, language) =>
    Effect.gen(function* () {
      const w = PortalPage.portalWords(language)
      const refuse = (message: Message) => portalAnswer(session, `${FROM_ACTION}${path.token}/`, language, message)
      const owned = yield* Effect.result(Portal.Portal.use((p) => p.ownSubscription(session, path.subscriptionId)))
      if (owned._tag === "Failure") return yield* refuse({ text: w.noSuchSubscription, error: true, status: 404 })
      if (!(yield* Effect.orDie(Portal.Portal.use((p) => p.allows(session, feature)))))
        return yield* refuse({ text: w.notAvailable, error: true, status: 403 })
      const wait = charges ? yield* payWait(request, session.portal_session_id) : 0
      if (wait > 0)
        return HttpServerResponse.setHeader(
          yield* refuse({ text: Page.messagesOf(language).common.tooManyWait(wait), error: true, status: 429 }),
          "retry-after",
          String(wait)
        )
      return yield* route(request, session, path, language, refuse)
    })
  )

/**
 * A portal action on one of the session customer's subscriptions: done, the customer goes back
 * to the portal (303); refused, the portal says why.
 */
const portalAction = <R>(
  feature: Portal.Feature,
  charges: boolean,
  act: (
    billing: Billing.Billing["Service"],
    merchantId: string,
    subscriptionId: string,
    input: Record<string, string>
  ) => Effect.Effect<unknown, Errors.RecurError, R>
) =>
  portalRoute(feature, charges, (_request, session, path, _language, refuse) =>
    Effect.gen(function* () {
      const input = yield* Effect.orElseSucceed(body, () => ({}) as Record<string, string>)
      const result = yield* Effect.result(
        Billing.Billing.use((b) => act(b, session.merchant_id, path.subscriptionId, input))
      )
      if (result._tag === "Success") return HttpServerResponse.redirect(`${FROM_ACTION}${path.token}`, { status: 303 })
      return yield* refuse({ text: result.failure.message, error: true, status: refusalStatus(result.failure) })
    })
  )

/** The preview of a price switch, or the portal with the refusal. */
const switchAnswer = (
  session: PortalSession.PortalSession,
  path: ReturnType<typeof portalPath>,
  language: Page.Language,
  priceId: string,
  refuse: (message: Message) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, Portal.Portal>,
  message?: Message
) =>
  Effect.gen(function* () {
    const preview = yield* Effect.result(
      Portal.Portal.use((p) => p.previewSwitch(session, path.subscriptionId, priceId))
    )
    if (preview._tag === "Failure")
      return yield* refuse({ text: preview.failure.message, error: true, status: refusalStatus(preview.failure) })
    const merchant = yield* Effect.orDie(Merchants.Merchants.use((ms) => ms.get(session.merchant_id)))
    return yield* portalPage(
      PortalPage.switchHtml(
        { merchantName: merchant.name, ...preview.success, back: `${FROM_ACTION}${path.token}` },
        language,
        message
      ),
      message?.status ?? 200,
      language
    )
  })

/** The preview of a quantity change, or the portal with the refusal. */
const quantityAnswer = (
  session: PortalSession.PortalSession,
  path: ReturnType<typeof portalPath>,
  language: Page.Language,
  input: { readonly item_id: string; readonly quantity: string },
  refuse: (message: Message) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, Portal.Portal>
) =>
  Effect.gen(function* () {
    const preview = yield* Effect.result(
      Portal.Portal.use((p) => p.previewQuantity(session, path.subscriptionId, input.item_id, input.quantity))
    )
    if (preview._tag === "Failure")
      return yield* refuse({ text: preview.failure.message, error: true, status: refusalStatus(preview.failure) })
    const merchant = yield* Effect.orDie(Merchants.Merchants.use((ms) => ms.get(session.merchant_id)))
    return yield* portalPage(
      PortalPage.quantityHtml(
        { merchantName: merchant.name, preview: preview.success, back: `${FROM_ACTION}${path.token}` },
        language
      ),
      200,
      language
    )
  })

/**
 * The customer portal's routes: `GET /portal/card/…` (an email's card-update link),
 * `GET /portal/:id/:token` and the actions on one of the
 * customer's subscriptions (`…/subscription/:id/{payment_method,cancel,revoke,switch,quantity}`).
 *
 * @since 0.1.0
 */
export const routes = Layer.mergeAll(
  // an email's card-update link: a fresh portal session on the card form while the link works
  HttpRouter.add(
    "GET",
    "/portal/card/:signature/:merchant_id/:customer_id/:invoice_id/:expires",
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const parts = request.url.split("?")[0]!.split("/").slice(3)
      const url = yield* Notifications.Notifications.use((n) => n.followCardLink(parts)).pipe(Effect.orDie)
      if (Option.isSome(url))
        return HttpServerResponse.redirect(url.value, {
          status: 303,
          headers: { "cache-control": "no-store", "referrer-policy": "no-referrer" }
        })
      const language = portalLanguage(request, null)
      const w = PortalPage.portalWords(language)
      return yield* portalPage(`<main><h1>${esc(w.expired)}</h1><p>${esc(w.expiredHint)}</p></main>`, 404, language)
    })
  ),
  HttpRouter.add(
    "GET",
    "/portal/:portal_session_id/:token",
    withPortal((_request, session, path, language) => portalAnswer(session, `${path.token}/`, language))
  ),
  HttpRouter.add(
    "POST",
    "/portal/:portal_session_id/:token/subscription/:subscription_id/payment_method",
    portalRoute("payment_method_update", true, (_request, session, path, _language, refuse) =>
      Effect.gen(function* () {
        const input = yield* Effect.orElseSucceed(body, () => ({}) as Record<string, string>)
        // a card whose issuer asks for 3-D Secure: the cardholder is challenged and comes back here
        const back = `${session.url}/subscription/${encodeURIComponent(path.subscriptionId)}/payment_method/complete`
        const result = yield* Effect.result(
          PaymentMethods.PaymentMethods.use((b) =>
            b.updatePaymentMethodOnSession(session.merchant_id, path.subscriptionId, cardOf(input), back)
          )
        )
        if (result._tag === "Failure")
          return yield* refuse({ text: result.failure.message, error: true, status: refusalStatus(result.failure) })
        return Option.match(result.success.redirect_url, {
          onNone: () => HttpServerResponse.redirect(`${FROM_ACTION}${path.token}`, { status: 303 }),
          onSome: (url) => HttpServerResponse.redirect(url, { status: 303 })
        })
      })
    )
  ),
  HttpRouter.add(
    "GET",
    "/portal/:portal_session_id/:token/subscription/:subscription_id/payment_method/complete",
    portalRoute("payment_method_update", false, (request, session, path, language) =>
      Effect.gen(function* () {
        // back from the card set-up's 3-D Secure page: the processor is asked how it ended
        const setupId = new URLSearchParams(request.url.split("?")[1] ?? "").get("setup_intent") ?? ""
        const result = yield* Effect.result(
          PaymentMethods.PaymentMethods.use((b) =>
            b.completePaymentMethod(session.merchant_id, path.subscriptionId, setupId)
          )
        )
        if (result._tag === "Failure")
          // the portal with why, one level deeper than an action's page
          return yield* portalAnswer(session, `../${FROM_ACTION}${path.token}/`, language, {
            text: result.failure.message,
            error: true,
            status: refusalStatus(result.failure)
          })
        return Option.match(result.success.redirect_url, {
          onNone: () => HttpServerResponse.redirect(`../${FROM_ACTION}${path.token}`, { status: 303 }),
          onSome: (url) => HttpServerResponse.redirect(url, { status: 303 })
        })
      })
    )
  ),
  HttpRouter.add(
    "POST",
    "/portal/:portal_session_id/:token/subscription/:subscription_id/cancel",
    portalAction("cancel", false, (_b, m, id) =>
      Subscriptions.Subscriptions.use((s) =>
        s.cancel(m, Subscriptions.cancelOf(id, { when: "end_of_period", reason: "customer portal" }))
      )
    )
  ),
  HttpRouter.add(
    "POST",
    "/portal/:portal_session_id/:token/subscription/:subscription_id/revoke",
    portalAction("cancel", false, (_b, m, id) => Subscriptions.Subscriptions.use((s) => s.revokeCancel(m, id)))
  ),
  HttpRouter.add(
    "GET",
    "/portal/:portal_session_id/:token/subscription/:subscription_id/switch",
    portalRoute("switch_price", false, (request, session, path, language, refuse) =>
      switchAnswer(
        session,
        path,
        language,
        new URLSearchParams(request.url.split("?")[1] ?? "").get("price_id") ?? "",
        refuse
      )
    )
  ),
  HttpRouter.add(
    "POST",
    "/portal/:portal_session_id/:token/subscription/:subscription_id/switch",
    portalRoute("switch_price", true, (_request, session, path, language, refuse) =>
      Effect.gen(function* () {
        const input = yield* Effect.orElseSucceed(body, () => ({}) as Record<string, string>)
        const priceId = String(input.price_id ?? "")
        const done = yield* Effect.result(
          Portal.Portal.use((p) => p.switchPrice(session, path.subscriptionId, priceId, String(input.quote_id ?? "")))
        )
        if (done._tag === "Success") return HttpServerResponse.redirect(`${FROM_ACTION}${path.token}`, { status: 303 })
        // the amount shown is no longer what a switch would charge: show the one it would now
        if (done.failure._tag === "QuoteStale" || done.failure._tag === "QuoteExpired")
          return yield* switchAnswer(session, path, language, priceId, refuse, {
            text: PortalPage.portalWords(language).quoteMoved,
            error: true,
            status: 409
          })
        return yield* refuse({ text: done.failure.message, error: true, status: refusalStatus(done.failure) })
      })
    )
  ),
  HttpRouter.add(
    "GET",
    "/portal/:portal_session_id/:token/subscription/:subscription_id/quantity",
    portalRoute("adjust_quantity", false, (request, session, path, language, refuse) => {
      const query = new URLSearchParams(request.url.split("?")[1] ?? "")
      return quantityAnswer(
        session,
        path,
        language,
        { item_id: query.get("item_id") ?? "", quantity: query.get("quantity") ?? "" },
        refuse
      )
    })
  ),
  HttpRouter.add(
    "POST",
    "/portal/:portal_session_id/:token/subscription/:subscription_id/quantity",
    portalRoute("adjust_quantity", false, (_request, session, path, _language, refuse) =>
      Effect.gen(function* () {
        const input = yield* Effect.orElseSucceed(body, () => ({}) as Record<string, string>)
        const done = yield* Effect.result(
          Portal.Portal.use((p) =>
            p.adjustQuantity(session, path.subscriptionId, String(input.item_id ?? ""), String(input.quantity ?? ""))
          )
        )
        if (done._tag === "Success") return HttpServerResponse.redirect(`${FROM_ACTION}${path.token}`, { status: 303 })
        return yield* refuse({ text: done.failure.message, error: true, status: refusalStatus(done.failure) })
      })
    )
  )
)
