/**
 * The hosted invoice page and its PDF, at the invoice's signed link.
 *
 * @since 0.1.0
 */
import { Billing, InvoicePayments } from "@recur/core"
import { Effect, Layer, Option, Result } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as Page from "../internal/checkoutPage.js"
import * as InvoiceDocument from "../internal/invoiceDocument.js"
import * as PdfRenderer from "../internal/pdfRenderer.js"
import { askAboutTrade, body, cardOf, esc, htmlAttributes, payWait, refusalStatus } from "./shared.js"

/** The states of an invoice whose payment is decided. */
const paid: ReadonlySet<string> = new Set(["success", "refunded", "partially_refunded"])

/** The hosted invoice page (or a page that only says something), never cached, never leaking its link. */
const invoicePage = (title: string, body: string, status: number, language: Page.Language) =>
  HttpServerResponse.html(`<!doctype html><html ${htmlAttributes(language)}><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${esc(title)}</title>
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
  return invoicePage("Not found", `<main><h1>${esc(InvoiceDocument.notFound(language))}</h1></main>`, 404, language)
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

/**
 * The invoice page's routes: `GET /invoice/:id/:token`, its PDF `GET /invoice/:id/:token/pdf`
 * and its Pay form `POST /invoice/:id/:token/pay`.
 *
 * @since 0.1.0
 */
export const routes = Layer.mergeAll(
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
            InvoicePayments.InvoicePayments.use((b) =>
              b.completeInvoiceCard(doc.invoice.merchant_id, doc.invoice.invoice_id, setupId)
            )
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
              message: Option.match(r.error, {
                onNone: () =>
                  Page.messagesOf(Page.languageOf(null, request.headers["accept-language"])).common.paymentFailed,
                onSome: (e) => e.message
              }),
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
              message: Page.messagesOf(Page.languageOf(null, request.headers["accept-language"])).common.tooManyWait(
                wait
              ),
              status: 429
            }),
            "retry-after",
            String(wait)
          )
        const input = yield* Effect.orElseSucceed(body, () => ({}) as Record<string, string>)
        const card = cardOf(input)
        const m = doc.invoice.merchant_id
        const result = yield* Effect.result(
          InvoicePayments.InvoicePayments.use((b) => b.payInvoice(m, doc.invoice.invoice_id, card))
        )
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
            message: Page.messagesOf(Page.languageOf(null, request.headers["accept-language"])).common.unavailable,
            status: 503
          })
        return yield* invoiceAnswer(request, now, here, {
          message: Option.match(r.error, {
            onNone: () =>
              Page.messagesOf(Page.languageOf(null, request.headers["accept-language"])).common.paymentFailed,
            onSome: (e) => e.message
          }),
          status: 402
        })
      })
    )
  )
)
