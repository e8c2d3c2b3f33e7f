/**
 * The hosted checkout page's layout, in the payer's language: the session's `locale`, else the
 * browser's `Accept-Language`, else English (the words of each language: `./i18n/`). Amounts are
 * formatted from their exact decimal strings through `Intl` (never through a float).
 */
import type { Checkout } from "@recur/core"
import * as I18n from "./i18n/index.js"
import * as PaymentElement from "./paymentElement.js"

/** The languages the page speaks (the seed's sixteen checkout locales). */
export type Language = I18n.Language

/** The checkout page's words in a language. */
export const wordsOf = (language: Language): I18n.Messages["checkout"] => I18n.messagesOf(language).checkout

/** Everything the pages say in a language. */
export const messagesOf = I18n.messagesOf

/**
 * The page's language: the session's `locale`, else the browser's preferred language spoken here
 * (by `q`, exactly or by primary subtag), else English.
 */
export const languageOf = I18n.languageOf

/** Escapes text for HTML. */
export const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

/** An exact decimal amount in the payer's format (`30.00 USD` → `$30.00`, `30,00 €`), never through a float. */
export const money = I18n.money

const UNITS: ReadonlySet<string> = new Set(["day", "week", "month", "quarter", "year"])

/** `every month`, `alle 3 Monate`, or the unit as stored for one the page has no word for. */
export const interval = (language: Language, unit: string, count: number): string =>
  UNITS.has(unit) ? I18n.messagesOf(language).every(unit as I18n.Unit, count) : unit

/**
 * When a subscription with a billing cycle anchor renews: `on the 1st of each month` for a
 * monthly price, else `every year from 1 Feb 2027` (the anchor's date, in UTC); without an
 * anchor, {@link interval}.
 */
const anchoredInterval = (
  language: Language,
  every: { readonly unit: string; readonly count: number },
  anchor: Checkout.SessionView["session"]["billing_cycle_anchor"]
): string => {
  const plain = interval(language, every.unit, every.count)
  if (anchor === null) return plain
  const m = I18n.messagesOf(language)
  if (every.unit === "month" && every.count === 1) return m.onDay(new Date(anchor.epochMilliseconds).getUTCDate())
  return m.from(plain, I18n.date(language, anchor.epochMilliseconds))
}

const duration = (language: Language, unit: string, count: number): string =>
  UNITS.has(unit) ? I18n.messagesOf(language).duration(unit as I18n.Unit, count) : `${count} ${unit}`

/** The language tag Stripe.js takes for a page language (`de`, `pt`, `zh`, `zh-TW`). */
export const stripeLocale = (language: Language): string =>
  language === "zh-TW" ? "zh-TW" : (language.split("-")[0] ?? "auto")

/** A URL the page may link to: absolute http(s) only (checked when the session was opened, again here). */
const safeLink = (url: string | null): string | null => (url !== null && /^https?:\/\/[^/]/i.test(url) ? url : null)

/**
 * The checkout: what is bought from whom, the quantity stepper (an editable line item, inside its
 * bounds), what is due today and after, the card form, the cancel and terms links. Every `action`
 * is relative to the page that shows it (`base` is the way from that page to `/checkout/`), so it
 * works under any mount prefix.
 */
export const checkoutBody = (
  view: Checkout.SessionView,
  language: Language,
  action: string,
  base: string,
  error?: string
): string => {
  const all = I18n.messagesOf(language)
  const w = all.checkout
  const c = all.card
  const s = view.session
  const item = s.line_items[0]
  const due = s.amount ?? "0"
  const title = view.productName ?? w.payment
  /** A quantity stepper posting `quantity` (and `line`, the line item, when the session has several). */
  const stepperOf = (line: number | null, quantity: string, minText: string | null, maxText: string | null) => {
    const q = BigInt(quantity)
    const min = minText !== null ? BigInt(minText) : 1n
    const max = maxText !== null ? BigInt(maxText) : 999_999_999n
    const id = line === null ? "quantity" : `quantity-${line}`
    const button = (to: bigint, label: string, text: string) =>
      `<button type="submit" name="quantity" value="${to}" aria-label="${esc(label)}" class="step"${to < min || to > max ? " disabled" : ""}>${text}</button>`
    return `<form method="post" action="${esc(`${base}${s.session_id}/quantity`)}" class="stepper">${line === null ? "" : `<input type="hidden" name="line" value="${line}">`}<span id="${id}-label">${esc(w.quantity)}</span>
${button(q - 1n, w.decrease, "−")}<output aria-labelledby="${id}-label" id="${id}">${esc(quantity)}</output>${button(q + 1n, w.increase, "+")}</form>`
  }
  // several line items: the header names the product of the first (the base item) and no price
  // (each line names its own, once); one line each, its quantity (a stepper inside its bounds when editable) and
  // its amount; a metered line says it is billed by usage (no quantity, nothing due today)
  const several =
    view.lines.length > 1
      ? `<ul id="lines" class="lines">${view.lines
          .map(
            (l, i) =>
              `<li class="line${l.oneTime ? " one-time" : ""}" id="line-${i}"><span class="line-name">${esc(l.priceName)}</span>${
                l.oneTime ? ` <span class="line-once">(${esc(w.oneTime)})</span>` : ""
              }${l.metered ? ` <span class="line-usage" id="line-usage-${i}">${esc(w.byUsage)}</span>` : ""}${
                l.amount !== null
                  ? ` <span class="line-amount">${esc(money(language, l.amount, s.currency))}</span>`
                  : ""
              }${
                l.metered
                  ? ""
                  : l.editable
                    ? stepperOf(i, l.quantity, l.min, l.max)
                    : l.quantity !== "1"
                      ? ` <span class="line-quantity">× ${esc(l.quantity)}</span>`
                      : ""
              }</li>`
          )
          .join("\n")}</ul>`
      : null
  const stepper =
    several !== null
      ? several
      : item?.quantity_editable === true
        ? (() => {
            const q = BigInt(item.quantity)
            const min = item.quantity_min !== null ? BigInt(item.quantity_min) : 1n
            const max = item.quantity_max !== null ? BigInt(item.quantity_max) : 999_999_999n
            const button = (to: bigint, label: string, text: string) =>
              `<button type="submit" name="quantity" value="${to}" aria-label="${esc(label)}" class="step"${to < min || to > max ? " disabled" : ""}>${text}</button>`
            return `<form method="post" action="${esc(`${base}${s.session_id}/quantity`)}" class="stepper"><span id="qty-label">${esc(w.quantity)}</span>
${button(q - 1n, w.decrease, "−")}<output aria-labelledby="qty-label" id="quantity">${esc(item.quantity)}</output>${button(q + 1n, w.increase, "+")}</form>`
          })()
        : item !== undefined && item.quantity !== "1"
          ? `<p>${esc(w.quantity)}: <span id="quantity">${esc(item.quantity)}</span></p>`
          : ""
  const every = view.interval ? anchoredInterval(language, view.interval, s.billing_cycle_anchor) : null
  const discount =
    s.discount_code !== null
      ? `<p id="discount">${esc(w.discountApplied)}: <strong>${esc(s.discount_code)}</strong></p>`
      : s.allow_discount_codes
        ? `<form method="post" action="${esc(`${base}${s.session_id}/discount`)}" class="discount"><label for="discount_code">${esc(w.discountCode)}</label>
<div class="row"><div><input id="discount_code" name="discount_code" autocomplete="off" autocapitalize="characters" maxlength="20"></div><div><button type="submit" id="apply" class="apply">${esc(w.apply)}</button></div></div></form>`
        : ""
  const lines = [
    view.trial ? `<p>${esc(w.trial)}: ${esc(duration(language, view.trial.unit, view.trial.count))}</p>` : "",
    `<p>${esc(w.dueToday)}: <span class="amount" id="due">${esc(money(language, due, s.currency))}</span></p>`,
    s.tax_amount !== null && /[1-9]/.test(s.tax_amount)
      ? `<p id="tax">${esc(w.includesTax)}: ${esc(money(language, s.tax_amount, s.currency))}</p>`
      : "",
    every && view.cycleAmount !== null && (view.trial !== null || view.cycleAmount !== due)
      ? `<p id="then">${esc(w.thenLabel)} ${esc(money(language, view.cycleAmount, s.currency))} ${esc(every)}</p>`
      : every
        ? `<p id="then">${esc(w.billed)} ${esc(every)}</p>`
        : ""
  ].join("\n")
  const terms = safeLink(s.terms_of_service_url)
  const privacy = safeLink(s.privacy_policy_url)
  const legal =
    terms || privacy
      ? `<p class="legal">${esc(w.agree)} ${[
          terms ? `<a href="${esc(terms)}">${esc(w.terms)}</a>` : "",
          privacy ? `<a href="${esc(privacy)}">${esc(w.privacy)}</a>` : ""
        ]
          .filter(Boolean)
          .join(` ${esc(w.and)} `)}.</p>`
      : ""
  const cancel = safeLink(s.cancel_url)
  return `${view.payments.provider === "stripe" ? PaymentElement.stripeScript(view.payments) : ""}<main><p class="merchant">${esc(w.soldBy)} <strong id="merchant">${esc(view.merchantName)}</strong></p>
<h1 id="product">${esc(title)}</h1>
${several === null && view.priceName && view.priceName !== title ? `<p id="price-name">${esc(view.priceName)}</p>` : ""}
${error ? `<p class="error" role="alert">${esc(error)}</p>` : ""}
${stepper}
${discount}
${lines}
<form method="post" action="${esc(action)}" id="pay-form">
${
  view.payments.provider === "stripe"
    ? PaymentElement.fields(view.payments, {
        form: "pay-form",
        suffix: "",
        amountMinor: PaymentElement.minorUnits(due, s.currency),
        currency: s.currency,
        locale: stripeLocale(language)
      })
    : `<label for="card_number">${esc(c.cardNumber)}</label><input id="card_number" name="card_number" inputmode="numeric" autocomplete="cc-number" required>
<div class="row"><div><label for="exp_month">${esc(c.month)}</label><input id="exp_month" name="exp_month" inputmode="numeric" required placeholder="12"></div>
<div><label for="exp_year">${esc(c.year)}</label><input id="exp_year" name="exp_year" inputmode="numeric" required placeholder="2030"></div>
<div><label for="cvc">${esc(c.cvc)}</label><input id="cvc" name="cvc" inputmode="numeric" required></div></div>
<label for="name">${esc(c.nameOnCard)}</label><input id="name" name="name" autocomplete="cc-name">`
}
<label for="email">${esc(w.email)}</label><input id="email" name="email" type="email" autocomplete="email" value="${esc(s.email ?? "")}">
<button type="submit" id="pay">${esc(w.pay)} ${esc(money(language, due, s.currency))}</button></form>
${legal}
${cancel ? `<p><a href="${esc(cancel)}" id="cancel">${esc(w.cancel)} ${esc(view.merchantName)}</a></p>` : ""}</main>`
}
