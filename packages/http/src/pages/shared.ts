/**
 * What the hosted pages share: the payer's page layout, the form body, the card a form pays
 * with, and the card-testing guards of the routes that charge.
 *
 * @since 0.1.0
 */
import { type Errors, NetworkAddress, type Ports, Reconciliation } from "@recur/core"
import { ErrorReplies } from "@recur/contract"
import { Clock, Effect, Option } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import * as Page from "../internal/checkoutPage.js"
import * as Limiter from "../internal/limiter.js"

/** Escapes text for HTML. */
export const esc = Page.esc

/** `lang` and `dir` of a page's `<html>` in a language (`dir="rtl"` for Arabic). */
export const htmlAttributes = (language: Page.Language): string =>
  `lang="${language}" dir="${Page.messagesOf(language).dir}"`

/** A payer's page (checkout, 3-D Secure): plain HTML, no external assets, in the payer's language. */
export const page = (title: string, body: string, status = 200, language: Page.Language = "en-US") =>
  HttpServerResponse.html(`<!doctype html><html ${htmlAttributes(language)}><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem;color:#111}label{display:block;margin:.6rem 0 .2rem}input{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
.row{display:flex;gap:.5rem}.row>div{flex:1}button{margin-top:1rem;width:100%;padding:.7rem;font-size:1rem;background:#1a4fd6;color:#fff;border:0;border-radius:.3rem;cursor:pointer}
button:focus,input:focus,a:focus{outline:3px solid #f5a623}.error{background:#fde8e8;color:#8a1111;padding:.6rem;border-radius:.3rem}.amount{font-size:1.6rem;font-weight:600}
.merchant{color:#555;margin:0}h1{margin:.2rem 0}.stepper{display:flex;align-items:center;gap:.6rem}.stepper .step{width:2.4rem;margin:0;padding:.3rem}.stepper output{min-width:2rem;text-align:center;font-size:1.2rem}
.step:disabled{background:#9aa7c7;cursor:not-allowed}.discount .apply{margin-top:0}.legal{font-size:.85rem;color:#444}a{color:#1a4fd6}</style></head>
<body>${body}</body></html>`).pipe(HttpServerResponse.setStatus(status), Effect.succeed)

/** A page's form (URL-encoded, or JSON from code), as fields. */
export const body = Effect.gen(function* () {
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
export const cardOf = (input: Record<string, string>): Ports.NewPaymentSource =>
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

/** The status of a refusal the engine gave a page's action: the API's own for that error. */
export const refusalStatus = (e: Errors.RecurError) => ErrorReplies.replyTo(e).httpStatus

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
 * trade). A decided trade is never looked up again (`Reconciliation.reconcileTrade`).
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
export const askAboutTrade = (merchantId: string, tradeId: string) =>
  Effect.gen(function* () {
    if (perTradeLookup(tradeId, yield* Clock.currentTimeMillis) > 0) return undefined
    const asked = yield* Effect.option(Reconciliation.Reconciliation.use((r) => r.reconcileTrade(merchantId, tradeId)))
    return Option.isSome(asked) ? asked.value.status : undefined
  })

const isLoopback = (address: string) => NetworkAddress.specialPurpose(address)?.startsWith("loopback") === true

/** Seconds to wait before this pay attempt may run, or 0. */
export const payWait = (request: HttpServerRequest.HttpServerRequest, sessionId: string) =>
  Effect.map(Clock.currentTimeMillis, (now) => {
    const bySession = perSession(sessionId, now)
    // a payer on this machine is the operator (or a local proxy, which should forward the client's address)
    const address = Option.getOrUndefined(request.remoteAddress)
    const byAddress = address !== undefined && !isLoopback(address) ? perAddress(address, now) : 0
    return Math.max(bySession, byAddress)
  })
