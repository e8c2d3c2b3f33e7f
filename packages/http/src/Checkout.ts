/**
 * The hosted checkout page and the sandbox 3-D Secure challenge, served by the adapter itself:
 * plain HTML, no external assets, keyboard-usable, embeddable in an iframe.
 *
 * @since 0.1.0
 */
import {
  Billing,
  Checkout,
  type Checkout as CoreCheckout,
  type CheckoutSession,
  Dunning,
  Entities,
  ErrorReplies,
  Errors,
  Merchants,
  NetworkAddress,
  Payments,
  Portal,
  type PortalSession,
  type Ports,
  SessionPayments,
  Store,
  Subscriptions
} from "@recur/core"
import * as ApiErrors from "./Errors.js"
import { toApiError } from "./Handlers.js"
import * as Page from "./internal/checkoutPage.js"
import * as InvoiceDocument from "./internal/invoiceDocument.js"
import * as PdfRenderer from "./internal/pdfRenderer.js"
import * as PortalPage from "./internal/portalPage.js"
import * as Limiter from "./internal/limiter.js"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Clock, Effect, Layer, Option, Result } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"

const esc = Page.esc

const page = (title: string, body: string, status = 200, language: Page.Language = "en") =>
  HttpServerResponse.html(`<!doctype html><html lang="${Page.wordsOf(language).htmlLang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem;color:#111}label{display:block;margin:.6rem 0 .2rem}input{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
.row{display:flex;gap:.5rem}.row>div{flex:1}button{margin-top:1rem;width:100%;padding:.7rem;font-size:1rem;background:#1a4fd6;color:#fff;border:0;border-radius:.3rem;cursor:pointer}
button:focus,input:focus,a:focus{outline:3px solid #f5a623}.error{background:#fde8e8;color:#8a1111;padding:.6rem;border-radius:.3rem}.amount{font-size:1.6rem;font-weight:600}
.merchant{color:#555;margin:0}h1{margin:.2rem 0}.stepper{display:flex;align-items:center;gap:.6rem}.stepper .step{width:2.4rem;margin:0;padding:.3rem}.stepper output{min-width:2rem;text-align:center;font-size:1.2rem}
.step:disabled{background:#9aa7c7;cursor:not-allowed}.discount .apply{margin-top:0}.legal{font-size:.85rem;color:#444}a{color:#1a4fd6}</style></head>
<body>${body}</body></html>`).pipe(HttpServerResponse.setStatus(status), Effect.succeed)

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
  Effect.orDie(Checkout.Checkout.use((b) => b.sessionView(merchantId, sessionId)))

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

/**
 * Card-testing guard on the hosted pay route (in this process): each session allows a burst of
 * 10 attempts, then one a minute; each client address (other than loopback) a burst of 30,
 * then one every 10 s. Over either: 429 with `Retry-After`, and no charge is attempted.
 *
 * @since 0.1.0
 */
export const PAY_LIMITS = {
  session: { burst: 10, perSecond: 1 / 60 },
  address: { burst: 30, perSecond: 1 / 10 }
} as const
const perSession = Limiter.make(PAY_LIMITS.session)
const perAddress = Limiter.make(PAY_LIMITS.address)

/**
 * Anonymous lookups of an open trade at the processor (a payer back from 3-D Secure, on the
 * checkout's `/complete` or the invoice's page): a burst of 5 per trade, then one every 30 s.
 * Past it the page shows what the store knows (a webhook or the reconcile worker settles the
 * trade). A decided trade is never looked up again (`Payments.reconcileTrade`).
 *
 * @since 0.1.0
 */
export const LOOKUP_LIMITS = { trade: { burst: 5, perSecond: 1 / 30 } } as const
const perTradeLookup = Limiter.make(LOOKUP_LIMITS.trade)

/**
 * Asks the processor about a trade for a payer's page, within {@link LOOKUP_LIMITS}; failures are
 * the page's to ignore. Answers what the processor said (`requires_action`: the payer has not
 * authenticated), or nothing when it was not asked or did not answer.
 */
const askAboutTrade = (merchantId: string, tradeId: string) =>
  Effect.gen(function* () {
    if (perTradeLookup(tradeId, yield* Clock.currentTimeMillis) > 0) return undefined
    const asked = yield* Effect.option(Payments.Payments.use((b) => b.reconcileTrade(merchantId, tradeId)))
    return Option.isSome(asked) ? asked.value.status : undefined
  })

/** The states of an invoice whose payment is decided. */
const paid: ReadonlySet<string> = new Set(["success", "refunded", "partially_refunded"])

const isLoopback = (address: string) => NetworkAddress.specialPurpose(address)?.startsWith("loopback") === true

/** Seconds to wait before this pay attempt may run, or 0. */
const payWait = (request: HttpServerRequest.HttpServerRequest, sessionId: string) =>
  Effect.map(Clock.currentTimeMillis, (now) => {
    const bySession = perSession(sessionId, now)
    // a payer on this machine is the operator (or a local proxy, which should forward the client's address)
    const address = Option.getOrUndefined(request.remoteAddress)
    const byAddress = address !== undefined && !isLoopback(address) ? perAddress(address, now) : 0
    return Math.max(bySession, byAddress)
  })

const done = (session: CheckoutSession.CheckoutSession, request: HttpServerRequest.HttpServerRequest) => {
  const w = Page.wordsOf(languageFor(request, session))
  // only ever an absolute http(s) URL (checked when the session was opened; checked again here)
  const target = session.return_url !== null && /^https?:\/\/[^/]/i.test(session.return_url) ? session.return_url : null
  if (session.integration_method === "embedded") {
    return page(
      "Paid",
      `<main><h1>${Page.esc(w.complete)}</h1><script>parent.postMessage({type:"recur:checkout_complete",session_id:${JSON.stringify(session.session_id)}},"*")</script></main>`
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

const body = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const type = request.headers["content-type"] ?? ""
  if (type.includes("application/json")) return (yield* request.json) as Record<string, string>
  const text = yield* request.text
  return Object.fromEntries(new URLSearchParams(text)) as Record<string, string>
})

/**
 * What a hosted page's form pays with: a payment method the processor's own form collected
 * (`payment_method`, Stripe.js), else the card fields.
 */
const cardOf = (input: Record<string, string>): Ports.NewPaymentSource =>
  typeof input.payment_method === "string" && input.payment_method !== ""
    ? { _tag: "PaymentMethod", id: input.payment_method }
    : {
        _tag: "Card",
        card: {
          number: String(input.card_number ?? "").replace(/\s/g, ""),
          exp_month: Number(input.exp_month),
          exp_year: Number(input.exp_year),
          cvc: String(input.cvc ?? ""),
          ...(input.name ? { name: String(input.name) } : {})
        }
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
  const request_id = request.headers["request-id"] ?? ""
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
    const error = Option.getOrElse(r.error, () => ({ code: "card_declined", message: "The payment failed." }))
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
    checkout: Checkout.Checkout["Service"],
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
    const result = yield* Effect.result(Checkout.Checkout.use((c) => apply(c, m, session_id, input)))
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

/** The hosted invoice page (or a page that only says something), never cached, never leaking its link. */
const invoicePage = (title: string, body: string, status: number, language: Page.Language) =>
  HttpServerResponse.html(`<!doctype html><html lang="${Page.wordsOf(language).htmlLang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${esc(title)}</title>
<style>${InvoiceDocument.invoiceStyle}</style></head>
<body>${body}</body></html>`).pipe(
    HttpServerResponse.setStatus(status),
    // the link is the capability: no cache keeps it, no referrer carries it elsewhere
    HttpServerResponse.setHeaders({ "cache-control": "no-store", "referrer-policy": "no-referrer" }),
    Effect.succeed
  )

/** `/invoice/:id/:token[/...]`: the id and the token from the path. */
const invoicePath = (request: HttpServerRequest.HttpServerRequest) => {
  const parts = request.url.split("?")[0]!.split("/")
  return { invoiceId: parts[2] ?? "", token: parts[3] ?? "" }
}

const invoiceNotFound = (request: HttpServerRequest.HttpServerRequest) => {
  const language = Page.languageOf(null, request.headers["accept-language"])
  return invoicePage("Not found", `<main><h1>${esc(InvoiceDocument.notFound[language])}</h1></main>`, 404, language)
}

/** The page of the invoice the request's link names, with an optional error above its Pay form. */
const invoiceAnswer = (
  request: HttpServerRequest.HttpServerRequest,
  doc: Billing.InvoiceDocument,
  where: { readonly pay: string; readonly pdf: string },
  error?: { readonly message: string; readonly status: number }
) => {
  const language = Page.languageOf(null, request.headers["accept-language"])
  return invoicePage(
    `${doc.invoice.number ?? doc.invoice.invoice_id} — ${doc.merchantName}`,
    InvoiceDocument.invoiceHtml(doc, language, { payAction: where.pay, pdfHref: where.pdf, error: error?.message }),
    error?.status ?? 200,
    language
  )
}

/**
 * The invoice PDFs of this process: each rendered once per state of the invoice (what it states;
 * not whether its page offers a Pay form) and language, kept in a bounded cache, rendered one at
 * a time between other requests (see `internal/pdfRenderer`).
 */
const invoicePdfs = PdfRenderer.make(
  InvoiceDocument.invoicePdf,
  (doc, language) => `${doc.invoice.invoice_id} ${language}`,
  ({ payable: _payable, payments: _payments, ...stated }) =>
    JSON.stringify(stated, (_key, value) => (typeof value === "bigint" ? value.toString() : value))
)

/**
 * What the invoice PDFs of this process cost so far: renders made, documents and bytes cached,
 * renders waiting.
 *
 * @since 0.1.0
 */
export const invoicePdfStats = (): PdfRenderer.Stats => invoicePdfs.stats()

const findInvoice = (request: HttpServerRequest.HttpServerRequest) => {
  const { invoiceId, token } = invoicePath(request)
  return Effect.orDie(Billing.Billing.use((b) => b.invoiceDocument(invoiceId, token)))
}

/** A route of the invoice its link names: 404 (the same for no invoice and a wrong signature) otherwise. */
const withInvoice = <A, E, R>(
  route: (
    request: HttpServerRequest.HttpServerRequest,
    doc: Billing.InvoiceDocument,
    token: string
  ) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const found = yield* findInvoice(request)
    if (Option.isNone(found)) return yield* invoiceNotFound(request)
    return yield* route(request, found.value, invoicePath(request).token)
  })

/** `/portal/:id/:token[/subscription/:sub/:action]`: the parts of a portal path. */
const portalPath = (request: HttpServerRequest.HttpServerRequest) => {
  const parts = request.url.split("?")[0]!.split("/")
  return { id: parts[2] ?? "", token: parts[3] ?? "", subscriptionId: parts[5] ?? "" }
}

const portalPage = (body: string, status: number, language: Page.Language) =>
  HttpServerResponse.html(`<!doctype html><html lang="${language}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${esc(PortalPage.portalWords(language).title)}</title>
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
          yield* refuse({ text: w.tooMany(wait), error: true, status: 429 }),
          "retry-after",
          String(wait)
        )
      return yield* route(request, session, path, language, refuse)
    })
  )

/** The status of a refusal the engine gave a page's action: the API's own for that error. */
const refusalStatus = (e: Errors.RecurError) => ErrorReplies.replyTo(e).httpStatus

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

/**
 * Where a payer lands after a 3-D Secure challenge (the sandbox's, or a processor's that sends
 * them back), once the trade was asked about: a paid checkout goes where paid checkouts go; an
 * unpaid one shows its page with the failure (`where`: its form's action from this page).
 */
const afterChallenge = (
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
        message: "The 3-D Secure authentication was not completed.",
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
    const why = trade?.last_payment_error?.message ?? "3-D Secure authentication failed."
    return yield* checkoutPage(request, view, where, { message: why, status: 402 })
  })

/**
 * The routes: `GET /checkout/:id`, `POST /checkout/:id/pay`, `POST /checkout/:id/quantity` (the payer's
 * quantity stepper), `GET|POST /sandbox/3ds/:trade_id`.
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
      if (Option.isNone(found)) return yield* notice(request, null, (w) => w.notFound, 404)
      // a paid or expired session is said so, as the GET says it: no form, no charge attempted
      const before = yield* Effect.orDie(
        Checkout.Checkout.use((b) => b.getSession(found.value.merchant_id, session_id))
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
        const message = `Too many payment attempts. Try again in ${wait} seconds.`
        return HttpServerResponse.setHeader(
          wantsJson(request)
            ? HttpServerResponse.jsonUnsafe(
                {
                  code: "rate_limit_exceeded",
                  message,
                  data: { request_id: request.headers["request-id"] ?? "" }
                },
                { status: 429 }
              )
            : yield* page(
                "Checkout",
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
      const result = yield* Effect.result(sessionPayments.paySession(m, session_id, card))
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
          message: Page.wordsOf(languageFor(request, session)).unavailable,
          status: 503
        })
      return yield* checkoutPage(request, view, here, {
        message: Option.match(r.error, { onNone: () => "The payment failed.", onSome: (e) => e.message }),
        status: 402
      })
    })
  ),
  HttpRouter.add(
    "POST",
    "/checkout/:session_id/quantity",
    payerChange((b, m, id, input) => b.setQuantity(m, id, String(input.quantity ?? "")))
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
  ),
  HttpRouter.add(
    "GET",
    "/invoice/:invoice_id/:token",
    withInvoice((request, doc, token) =>
      Effect.gen(function* () {
        // back from a processor's 3-D Secure page: ask about the payment before showing the invoice
        // (a paid invoice's trade is decided: nothing to ask)
        if (
          /[?&]payment_intent=/.test(request.url) &&
          doc.invoice.trade_id !== null &&
          !paid.has(doc.invoice.biz_status)
        ) {
          yield* askAboutTrade(doc.invoice.merchant_id, doc.invoice.trade_id)
          const now = yield* Effect.orDie(Billing.Billing.use((b) => b.invoiceDocument(doc.invoice.invoice_id, token)))
          return yield* invoiceAnswer(
            request,
            Option.getOrElse(now, () => doc),
            { pay: `${token}/pay`, pdf: `${token}/pdf` }
          )
        }
        // back from a new card's 3-D Secure page (a failed invoice paid with a new card): the
        // card set-up is asked about; saved, the invoice is reopened and charged with it
        const setupId = new URLSearchParams(request.url.split("?")[1] ?? "").get("setup_intent")
        if (setupId !== null && doc.invoice.biz_status === "failed") {
          const here = { pay: `${token}/pay`, pdf: `${token}/pdf` }
          const result = yield* Effect.result(
            Dunning.Dunning.use((b) => b.completeInvoiceCard(doc.invoice.merchant_id, doc.invoice.invoice_id, setupId))
          )
          const now = Option.getOrElse(
            yield* Effect.orDie(Billing.Billing.use((b) => b.invoiceDocument(doc.invoice.invoice_id, token))),
            () => doc
          )
          if (result._tag === "Failure")
            return yield* invoiceAnswer(request, now, here, {
              message: result.failure.message,
              status: refusalStatus(result.failure)
            })
          const r = result.success
          if (r.status === "requires_action")
            return HttpServerResponse.redirect(
              Option.getOrElse(r.redirect_url, () => "/"),
              { status: 303 }
            )
          if (r.status === "failed")
            return yield* invoiceAnswer(request, now, here, {
              message: Option.match(r.error, { onNone: () => "The payment failed.", onSome: (e) => e.message }),
              status: 402
            })
          return yield* invoiceAnswer(request, now, here)
        }
        return yield* invoiceAnswer(request, doc, { pay: `${token}/pay`, pdf: `${token}/pdf` })
      })
    )
  ),
  HttpRouter.add(
    "GET",
    "/invoice/:invoice_id/:token/pdf",
    withInvoice((request, doc) =>
      Effect.gen(function* () {
        const language = Page.languageOf(null, request.headers["accept-language"])
        const rendered = yield* Effect.result(
          Effect.tryPromise({ try: () => invoicePdfs.pdf(doc, language), catch: (e) => e })
        )
        if (Result.isFailure(rendered)) {
          if (!(rendered.failure instanceof PdfRenderer.Busy)) return yield* Effect.die(rendered.failure)
          return HttpServerResponse.text(rendered.failure.message, { status: 503 }).pipe(
            HttpServerResponse.setHeaders({ "retry-after": "1", "cache-control": "no-store" })
          )
        }
        const bytes = rendered.success
        const name = (doc.invoice.number ?? doc.invoice.invoice_id).replace(/[^A-Za-z0-9-]/g, "")
        return HttpServerResponse.uint8Array(bytes, { contentType: "application/pdf" }).pipe(
          HttpServerResponse.setHeaders({
            "content-disposition": `inline; filename="${name}.pdf"`,
            "cache-control": "no-store",
            "referrer-policy": "no-referrer"
          })
        )
      })
    )
  ),
  HttpRouter.add(
    "POST",
    "/invoice/:invoice_id/:token/pay",
    withInvoice((request, doc, token) =>
      Effect.gen(function* () {
        const here = { pay: "pay", pdf: "pdf" }
        const wait = yield* payWait(request, doc.invoice.invoice_id)
        if (wait > 0)
          return HttpServerResponse.setHeader(
            yield* invoiceAnswer(request, doc, here, {
              message: `Too many payment attempts. Try again in ${wait} seconds.`,
              status: 429
            }),
            "retry-after",
            String(wait)
          )
        const input = yield* Effect.orElseSucceed(body, () => ({}) as Record<string, string>)
        const card = cardOf(input)
        const m = doc.invoice.merchant_id
        const result = yield* Effect.result(Dunning.Dunning.use((b) => b.payInvoice(m, doc.invoice.invoice_id, card)))
        // what the invoice is now, whatever the attempt did
        const now = Option.getOrElse(
          yield* Effect.orDie(Billing.Billing.use((b) => b.invoiceDocument(doc.invoice.invoice_id, token))),
          () => doc
        )
        if (result._tag === "Failure")
          return yield* invoiceAnswer(request, now, here, {
            message: result.failure.message,
            status: refusalStatus(result.failure)
          })
        const r = result.success
        if (r.status === "succeeded") return HttpServerResponse.redirect(`../${token}`, { status: 303 })
        if (r.status === "requires_action")
          return HttpServerResponse.redirect(
            Option.getOrElse(r.redirect_url, () => "/"),
            { status: 303 }
          )
        if (r.status === "processing") return HttpServerResponse.redirect(`../${token}`, { status: 303 })
        if (r.status === "unavailable")
          return yield* invoiceAnswer(request, now, here, {
            message: "Payments are temporarily unavailable. Nothing was charged; please try again in a few minutes.",
            status: 503
          })
        return yield* invoiceAnswer(request, now, here, {
          message: Option.match(r.error, { onNone: () => "The payment failed.", onSome: (e) => e.message }),
          status: 402
        })
      })
    )
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
          Dunning.Dunning.use((b) =>
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
          Dunning.Dunning.use((b) => b.completePaymentMethod(session.merchant_id, path.subscriptionId, setupId))
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
      const payments = yield* Payments.Payments
      const m = trade.value.value.trade.merchant_id
      const r = yield* Effect.orDie(payments.reconcileTrade(m, trade_id))
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
