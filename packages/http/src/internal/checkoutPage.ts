/**
 * The hosted checkout page's words and layout, in the payer's language: the session's `locale`
 * when the page speaks it, else the browser's `Accept-Language`, else English. Amounts are
 * formatted from their exact decimal strings (never through a float).
 */
import type { Checkout } from "@recur/core"
import * as PaymentElement from "./paymentElement.js"

/** The languages the page speaks. */
export type Language = "en" | "de" | "fr"

interface Words {
  readonly htmlLang: string
  readonly intl: string
  readonly checkout: string
  readonly soldBy: string
  readonly payment: string
  readonly quantity: string
  readonly decrease: string
  readonly increase: string
  readonly dueToday: string
  readonly thenLabel: string
  readonly billed: string
  readonly trial: string
  readonly cardNumber: string
  readonly month: string
  readonly year: string
  readonly cvc: string
  readonly nameOnCard: string
  readonly email: string
  readonly pay: string
  readonly cancel: string
  readonly agree: string
  readonly terms: string
  readonly privacy: string
  readonly and: string
  readonly paid: string
  readonly expired: string
  readonly notFound: string
  readonly complete: string
  readonly closePage: string
  /** The payment's outcome is not known yet (back from 3-D Secure, the processor not answering yet). */
  readonly confirming: string
  readonly processing: string
  readonly processingDetail: string
  /** The processor could not take the payment (an outage, the merchant's keys): nothing charged, not a decline. */
  readonly unavailable: string
  readonly tooMany: string
  readonly discountCode: string
  readonly apply: string
  readonly discountApplied: string
  readonly includesTax: string
  readonly units: Readonly<Record<string, readonly [one: string, many: string]>>
  readonly every: (count: number, one: string, many: string) => string
}

const words: Readonly<Record<Language, Words>> = {
  en: {
    htmlLang: "en",
    intl: "en-US",
    checkout: "Checkout",
    soldBy: "Sold by",
    payment: "Payment",
    quantity: "Quantity",
    decrease: "Decrease quantity",
    increase: "Increase quantity",
    dueToday: "Due today",
    thenLabel: "Then",
    billed: "Billed",
    trial: "Trial",
    cardNumber: "Card number",
    month: "Month",
    year: "Year",
    cvc: "CVC",
    nameOnCard: "Name on card",
    email: "Email",
    pay: "Pay",
    cancel: "Cancel and return to",
    agree: "By paying you agree to the merchant's",
    terms: "Terms of Service",
    privacy: "Privacy Policy",
    and: "and",
    paid: "This checkout is already paid.",
    expired: "This checkout has expired.",
    notFound: "This checkout does not exist.",
    complete: "Payment complete",
    closePage: "You can close this page.",
    confirming: "We are confirming your payment. This page refreshes by itself; please do not pay again.",
    processing: "Your payment is processing.",
    processingDetail: "We will confirm it shortly.",
    unavailable: "Payments are temporarily unavailable. Nothing was charged; please try again in a few minutes.",
    tooMany: "Too many attempts",
    discountCode: "Discount code",
    apply: "Apply",
    discountApplied: "Discount applied",
    includesTax: "Includes tax",
    units: {
      day: ["day", "days"],
      week: ["week", "weeks"],
      month: ["month", "months"],
      quarter: ["quarter", "quarters"],
      year: ["year", "years"]
    },
    every: (count, one, many) => (count === 1 ? `every ${one}` : `every ${count} ${many}`)
  },
  de: {
    htmlLang: "de",
    intl: "de-DE",
    checkout: "Bezahlen",
    soldBy: "Verkauft von",
    payment: "Zahlung",
    quantity: "Menge",
    decrease: "Menge verringern",
    increase: "Menge erhöhen",
    dueToday: "Heute fällig",
    thenLabel: "Danach",
    billed: "Abrechnung",
    trial: "Testphase",
    cardNumber: "Kartennummer",
    month: "Monat",
    year: "Jahr",
    cvc: "Prüfnummer",
    nameOnCard: "Name auf der Karte",
    email: "E-Mail",
    pay: "Bezahlen",
    cancel: "Abbrechen und zurück zu",
    agree: "Mit der Zahlung stimmen Sie zu:",
    terms: "Nutzungsbedingungen",
    privacy: "Datenschutzerklärung",
    and: "und",
    paid: "Dieser Bezahlvorgang ist bereits bezahlt.",
    expired: "Dieser Bezahlvorgang ist abgelaufen.",
    notFound: "Diesen Bezahlvorgang gibt es nicht.",
    complete: "Zahlung abgeschlossen",
    closePage: "Sie können diese Seite schließen.",
    confirming: "Wir bestätigen Ihre Zahlung. Diese Seite aktualisiert sich selbst; bitte zahlen Sie nicht erneut.",
    processing: "Ihre Zahlung wird bearbeitet.",
    processingDetail: "Wir bestätigen sie in Kürze.",
    unavailable:
      "Zahlungen sind vorübergehend nicht möglich. Es wurde nichts belastet; bitte versuchen Sie es in einigen Minuten erneut.",
    tooMany: "Zu viele Versuche",
    discountCode: "Rabattcode",
    apply: "Einlösen",
    discountApplied: "Rabatt eingelöst",
    includesTax: "Enthaltene Steuer",
    units: {
      day: ["Tag", "Tage"],
      week: ["Woche", "Wochen"],
      month: ["Monat", "Monate"],
      quarter: ["Quartal", "Quartale"],
      year: ["Jahr", "Jahre"]
    },
    every: (count, one, many) => (count === 1 ? `pro ${one}` : `alle ${count} ${many}`)
  },
  fr: {
    htmlLang: "fr",
    intl: "fr-FR",
    checkout: "Paiement",
    soldBy: "Vendu par",
    payment: "Paiement",
    quantity: "Quantité",
    decrease: "Diminuer la quantité",
    increase: "Augmenter la quantité",
    dueToday: "À payer aujourd'hui",
    thenLabel: "Puis",
    billed: "Facturé",
    trial: "Essai",
    cardNumber: "Numéro de carte",
    month: "Mois",
    year: "Année",
    cvc: "Cryptogramme",
    nameOnCard: "Nom sur la carte",
    email: "E-mail",
    pay: "Payer",
    cancel: "Annuler et revenir à",
    agree: "En payant, vous acceptez les",
    terms: "Conditions d'utilisation",
    privacy: "Politique de confidentialité",
    and: "et la",
    paid: "Ce paiement est déjà effectué.",
    expired: "Ce paiement a expiré.",
    notFound: "Ce paiement n'existe pas.",
    complete: "Paiement effectué",
    closePage: "Vous pouvez fermer cette page.",
    confirming:
      "Nous confirmons votre paiement. Cette page se met à jour d’elle-même ; merci de ne pas payer à nouveau.",
    processing: "Votre paiement est en cours de traitement.",
    processingDetail: "Nous le confirmerons sous peu.",
    unavailable:
      "Les paiements sont temporairement indisponibles. Rien n'a été débité ; veuillez réessayer dans quelques minutes.",
    tooMany: "Trop de tentatives",
    discountCode: "Code de réduction",
    apply: "Appliquer",
    discountApplied: "Réduction appliquée",
    includesTax: "Dont taxes",
    units: {
      day: ["jour", "jours"],
      week: ["semaine", "semaines"],
      month: ["mois", "mois"],
      quarter: ["trimestre", "trimestres"],
      year: ["an", "ans"]
    },
    every: (count, one, many) => (count === 1 ? `par ${one}` : `tous les ${count} ${many}`)
  }
}

/** The page's words in a language. */
export const wordsOf = (language: Language): Words => words[language]

const supported = (tag: string): Language | undefined => {
  const primary = tag.trim().toLowerCase().split(/[-_;]/)[0]
  return primary === "en" || primary === "de" || primary === "fr" ? primary : undefined
}

/**
 * The page's language: the session's `locale` when spoken here, else the first language of
 * `Accept-Language` spoken here, else English.
 */
export const languageOf = (locale: string | null, acceptLanguage: string | undefined): Language => {
  const fromLocale = locale !== null ? supported(locale) : undefined
  if (fromLocale) return fromLocale
  for (const part of (acceptLanguage ?? "").split(",")) {
    const found = supported(part)
    if (found) return found
  }
  return "en"
}

export const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

/**
 * An exact decimal amount in the payer's format (`30.00 USD` → `$30.00`, `30,00 €`): the integer
 * part formatted as a bigint, the fraction digits kept as written — never through a float.
 */
export const money = (language: Language, amount: string, currency: string): string => {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(amount)
  if (match === null) return `${amount} ${currency}`
  const [, sign = "", integer = "0", fraction = ""] = match
  try {
    const format = new Intl.NumberFormat(words[language].intl, {
      style: "currency",
      currency,
      minimumFractionDigits: fraction.length,
      maximumFractionDigits: fraction.length
    })
    return format
      .formatToParts(BigInt(`${sign}${integer}`))
      .map((part) => (part.type === "fraction" ? fraction : part.value))
      .join("")
  } catch {
    return `${amount} ${currency}`
  }
}

/** `every month`, `alle 3 Monate`, or the unit as stored for one the page has no word for. */
export const interval = (language: Language, unit: string, count: number): string => {
  const w = words[language]
  const names = w.units[unit]
  return names ? w.every(count, names[0], names[1]) : unit
}

const duration = (language: Language, unit: string, count: number): string => {
  const names = words[language].units[unit]
  return names ? `${count} ${count === 1 ? names[0] : names[1]}` : `${count} ${unit}`
}

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
  const w = words[language]
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
  // several line items: one line each, its quantity (a stepper inside its bounds when editable) and its amount
  const several =
    view.lines.length > 1
      ? `<ul id="lines" class="lines">${view.lines
          .map(
            (l, i) =>
              `<li class="line" id="line-${i}"><span class="line-name">${esc(l.priceName)}</span>${
                l.amount !== null
                  ? ` <span class="line-amount">${esc(money(language, l.amount, s.currency))}</span>`
                  : ""
              }${
                l.editable
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
  const every = view.interval ? interval(language, view.interval.unit, view.interval.count) : null
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
${view.priceName && view.priceName !== title ? `<p id="price-name">${esc(view.priceName)}</p>` : ""}
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
        locale: language
      })
    : `<label for="card_number">${esc(w.cardNumber)}</label><input id="card_number" name="card_number" inputmode="numeric" autocomplete="cc-number" required>
<div class="row"><div><label for="exp_month">${esc(w.month)}</label><input id="exp_month" name="exp_month" inputmode="numeric" required placeholder="12"></div>
<div><label for="exp_year">${esc(w.year)}</label><input id="exp_year" name="exp_year" inputmode="numeric" required placeholder="2030"></div>
<div><label for="cvc">${esc(w.cvc)}</label><input id="cvc" name="cvc" inputmode="numeric" required></div></div>
<label for="name">${esc(w.nameOnCard)}</label><input id="name" name="name" autocomplete="cc-name">`
}
<label for="email">${esc(w.email)}</label><input id="email" name="email" type="email" autocomplete="email" value="${esc(s.email ?? "")}">
<button type="submit" id="pay">${esc(w.pay)} ${esc(money(language, due, s.currency))}</button></form>
${legal}
${cancel ? `<p><a href="${esc(cancel)}" id="cancel">${esc(w.cancel)} ${esc(view.merchantName)}</a></p>` : ""}</main>`
}
