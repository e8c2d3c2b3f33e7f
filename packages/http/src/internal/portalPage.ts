/**
 * The customer portal's pages, in the customer's language (the session's `locale`, else the
 * browser's `Accept-Language`, else English): the customer's subscriptions (status, the next
 * invoice's date and amount, card on file, a form to replace it, cancel at period end and its
 * revocation, a choice of the prices the merchant allows switching to) and invoices (with their
 * page and PDF), and the preview of a price switch. Plain HTML, no external assets, forms that
 * post relative to the page. Only what the merchant's portal settings allow is shown.
 */
import type { Portal, Subscriptions } from "@recur/core"
import { type Language, esc, interval, money } from "./checkoutPage.js"
import { date, statusText } from "./invoiceDocument.js"
import * as PaymentElement from "./paymentElement.js"

interface Words {
  readonly title: string
  readonly subscriptions: string
  readonly invoices: string
  readonly noSubscriptions: string
  readonly noInvoices: string
  readonly statuses: Readonly<Record<string, string>>
  readonly nextInvoice: (date: string, amount: string) => string
  readonly paidWith: (card: string) => string
  readonly card: (brand: string, last4: string, month: number, year: number) => string
  readonly checkoutCard: string
  readonly updateCard: string
  readonly cardNumber: string
  readonly month: string
  readonly year: string
  readonly cvc: string
  readonly saveCard: string
  readonly endsOn: (date: string) => string
  readonly keep: string
  readonly cancel: string
  readonly changePlan: string
  readonly newPlan: string
  readonly review: string
  readonly switchTitle: (from: string, to: string) => string
  readonly unusedTime: (name: string) => string
  readonly remainingTime: (name: string) => string
  readonly discountEnds: (code: string) => string
  readonly tax: string
  readonly dueNow: string
  readonly refunded: string
  readonly credited: string
  readonly nothingNow: string
  readonly confirm: string
  readonly back: string
  readonly backTo: (merchant: string) => string
  readonly columns: readonly [number: string, date: string, status: string, amount: string]
  readonly view: string
  readonly expired: string
  readonly expiredHint: string
  readonly tooMany: (seconds: number) => string
  readonly noSuchSubscription: string
  readonly notAvailable: string
  readonly quoteMoved: string
}

const words: Readonly<Record<Language, Words>> = {
  en: {
    title: "Your billing",
    subscriptions: "Subscriptions",
    invoices: "Invoices",
    noSubscriptions: "No subscriptions.",
    noInvoices: "No invoices.",
    statuses: {
      init: "Starting",
      trial: "Trial",
      active: "Active",
      canceled: "Canceled",
      incomplete: "Incomplete",
      paused: "Paused",
      past_due: "Past due — payment failed",
      unpaid: "Unpaid — update your card to continue"
    },
    nextInvoice: (d, a) => `next invoice on ${d}: ${a}`,
    paidWith: (card) => `Paid with ${card}`,
    card: (brand, last4, m, y) => `${brand} •••• ${last4}, expires ${m}/${y}`,
    checkoutCard: "the card used at checkout",
    updateCard: "Update payment method",
    cardNumber: "Card number",
    month: "Month",
    year: "Year",
    cvc: "CVC",
    saveCard: "Save card",
    endsOn: (d) => `Ends on ${d}.`,
    keep: "Keep my subscription",
    cancel: "Cancel at the end of the period",
    changePlan: "Change plan",
    newPlan: "New plan",
    review: "Review change",
    switchTitle: (from, to) => `Change from ${from} to ${to}`,
    unusedTime: (name) => `Unused time on ${name}`,
    remainingTime: (name) => `Remaining time on ${name}`,
    discountEnds: (code) => `Discount ${code} does not apply to this plan: it ends with this switch`,
    tax: "Tax",
    dueNow: "Due now",
    refunded: "Refunded to your card",
    credited: "Credited to your balance",
    nothingNow: "Nothing is charged now; your next invoice bills the new plan.",
    confirm: "Confirm change",
    back: "Back",
    backTo: (m) => `Back to ${m}`,
    columns: ["Number", "Date", "Status", "Amount"],
    view: "View",
    expired: "This link has expired or does not exist.",
    expiredHint: "Ask for a new one where you came from.",
    tooMany: (s) => `Too many attempts. Try again in ${s} seconds.`,
    noSuchSubscription: "No such subscription.",
    notAvailable: "This action is not available.",
    quoteMoved: "Something changed since this amount was shown; here is the amount now."
  },
  de: {
    title: "Ihre Abrechnung",
    subscriptions: "Abonnements",
    invoices: "Rechnungen",
    noSubscriptions: "Keine Abonnements.",
    noInvoices: "Keine Rechnungen.",
    statuses: {
      init: "Wird gestartet",
      trial: "Testphase",
      active: "Aktiv",
      canceled: "Gekündigt",
      incomplete: "Unvollständig",
      paused: "Pausiert",
      past_due: "Überfällig — Zahlung fehlgeschlagen",
      unpaid: "Unbezahlt — aktualisieren Sie Ihre Karte, um fortzufahren"
    },
    nextInvoice: (d, a) => `nächste Rechnung am ${d}: ${a}`,
    paidWith: (card) => `Bezahlt mit ${card}`,
    card: (brand, last4, m, y) => `${brand} •••• ${last4}, gültig bis ${m}/${y}`,
    checkoutCard: "der beim Kauf verwendeten Karte",
    updateCard: "Zahlungsmethode ändern",
    cardNumber: "Kartennummer",
    month: "Monat",
    year: "Jahr",
    cvc: "Prüfnummer",
    saveCard: "Karte speichern",
    endsOn: (d) => `Endet am ${d}.`,
    keep: "Abonnement behalten",
    cancel: "Zum Ende des Zeitraums kündigen",
    changePlan: "Tarif wechseln",
    newPlan: "Neuer Tarif",
    review: "Änderung prüfen",
    switchTitle: (from, to) => `Wechsel von ${from} zu ${to}`,
    unusedTime: (name) => `Nicht genutzte Zeit für ${name}`,
    remainingTime: (name) => `Verbleibende Zeit für ${name}`,
    discountEnds: (code) => `Rabatt ${code} gilt nicht für diesen Tarif: er endet mit diesem Wechsel`,
    tax: "Steuer",
    dueNow: "Jetzt fällig",
    refunded: "Auf Ihre Karte erstattet",
    credited: "Ihrem Guthaben gutgeschrieben",
    nothingNow: "Jetzt wird nichts berechnet; Ihre nächste Rechnung berechnet den neuen Tarif.",
    confirm: "Änderung bestätigen",
    back: "Zurück",
    backTo: (m) => `Zurück zu ${m}`,
    columns: ["Nummer", "Datum", "Status", "Betrag"],
    view: "Ansehen",
    expired: "Dieser Link ist abgelaufen oder existiert nicht.",
    expiredHint: "Fordern Sie dort, wo Sie herkommen, einen neuen an.",
    tooMany: (s) => `Zu viele Versuche. Versuchen Sie es in ${s} Sekunden erneut.`,
    noSuchSubscription: "Dieses Abonnement gibt es nicht.",
    notAvailable: "Diese Aktion ist nicht verfügbar.",
    quoteMoved: "Seit der Anzeige hat sich etwas geändert; dies ist der aktuelle Betrag."
  },
  fr: {
    title: "Votre facturation",
    subscriptions: "Abonnements",
    invoices: "Factures",
    noSubscriptions: "Aucun abonnement.",
    noInvoices: "Aucune facture.",
    statuses: {
      init: "En cours de démarrage",
      trial: "Période d'essai",
      active: "Actif",
      canceled: "Résilié",
      incomplete: "Incomplet",
      paused: "En pause",
      past_due: "En retard — le paiement a échoué",
      unpaid: "Impayé — mettez à jour votre carte pour continuer"
    },
    nextInvoice: (d, a) => `prochaine facture le ${d} : ${a}`,
    paidWith: (card) => `Payé avec ${card}`,
    card: (brand, last4, m, y) => `${brand} •••• ${last4}, expire ${m}/${y}`,
    checkoutCard: "la carte utilisée lors de l'achat",
    updateCard: "Modifier le moyen de paiement",
    cardNumber: "Numéro de carte",
    month: "Mois",
    year: "Année",
    cvc: "Cryptogramme",
    saveCard: "Enregistrer la carte",
    endsOn: (d) => `Se termine le ${d}.`,
    keep: "Garder mon abonnement",
    cancel: "Résilier à la fin de la période",
    changePlan: "Changer d'offre",
    newPlan: "Nouvelle offre",
    review: "Vérifier le changement",
    switchTitle: (from, to) => `Passer de ${from} à ${to}`,
    unusedTime: (name) => `Temps non utilisé de ${name}`,
    remainingTime: (name) => `Temps restant de ${name}`,
    discountEnds: (code) => `La remise ${code} ne s'applique pas à cette offre : elle prend fin avec ce changement`,
    tax: "Taxe",
    dueNow: "À payer maintenant",
    refunded: "Remboursé sur votre carte",
    credited: "Crédité sur votre solde",
    nothingNow: "Rien n'est débité maintenant ; votre prochaine facture applique la nouvelle offre.",
    confirm: "Confirmer le changement",
    back: "Retour",
    backTo: (m) => `Retour à ${m}`,
    columns: ["Numéro", "Date", "Statut", "Montant"],
    view: "Voir",
    expired: "Ce lien a expiré ou n'existe pas.",
    expiredHint: "Demandez-en un nouveau là d'où vous venez.",
    tooMany: (s) => `Trop de tentatives. Réessayez dans ${s} secondes.`,
    noSuchSubscription: "Cet abonnement n'existe pas.",
    notAvailable: "Cette action n'est pas disponible.",
    quoteMoved: "Quelque chose a changé depuis l'affichage de ce montant ; voici le montant actuel."
  }
}

/** The portal's words in a language. */
export const portalWords = (language: Language): Words => words[language]

/** The portal page's style. */
export const portalStyle = `body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#111}
section.sub{border:1px solid #ddd;border-radius:.4rem;padding:1rem;margin:1rem 0}h2{margin:.2rem 0}.muted{color:#555}
table{width:100%;border-collapse:collapse}th,td{text-align:left;padding:.4rem;border-bottom:1px solid #ddd}.num{text-align:right}
label{display:block;margin:.5rem 0 .2rem}input,select{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}.row{display:flex;gap:.5rem}.row>div{flex:1}
button{margin-top:.8rem;padding:.6rem 1rem;font-size:1rem;background:#1a4fd6;color:#fff;border:0;border-radius:.3rem;cursor:pointer}
button.secondary{background:#fff;color:#8a1111;border:1px solid #8a1111}button:focus,input:focus,select:focus,a:focus,summary:focus{outline:3px solid #f5a623}
.error{background:#fde8e8;color:#8a1111;padding:.6rem;border-radius:.3rem}.notice{background:#e8f5e9;padding:.6rem;border-radius:.3rem}a{color:#1a4fd6}
.total{font-size:1.4rem;font-weight:600}`

const LIVE = ["trial", "active", "past_due", "unpaid", "paused"]

/** A message above a page: a refusal (`role=alert`) or a notice. */
const messageHtml = (message?: { readonly text: string; readonly error: boolean }) =>
  message
    ? `<p class="${message.error ? "error" : "notice"}" role="${message.error ? "alert" : "status"}">${esc(message.text)}</p>`
    : ""

/** The portal's overview; forms post to `<base>subscription/<id>/<action>`. */
export const portalHtml = (
  view: Portal.PortalView,
  base: string,
  language: Language,
  message?: { readonly text: string; readonly error: boolean }
): string => {
  const w = words[language]
  const allowed = view.settings
  const focusCard = view.session.flow === "payment_method_update" && allowed.payment_method_update
  const subs = view.subscriptions.map(
    ({ payment_method: pm, price_name, items, subscription: s, upcoming, switch_options }, n) => {
      const action = (what: string) => esc(`${base}subscription/${s.id}/${what}`)
      const card = pm ? w.card(pm.brand, pm.last4, pm.exp_month, pm.exp_year) : w.checkoutCard
      const live = LIVE.includes(s.status)
      const cardForm =
        live && allowed.payment_method_update
          ? `<details${focusCard || s.status === "past_due" || s.status === "unpaid" ? " open" : ""}><summary>${esc(w.updateCard)}</summary>
<form method="post" action="${action("payment_method")}" class="card-form" id="card-form-${n}">
${
  view.payments.provider === "stripe"
    ? PaymentElement.fields(view.payments, {
        form: `card-form-${n}`,
        suffix: `-${n}`,
        amountMinor: 0,
        currency: view.currency,
        locale: language
      })
    : `<label for="card_number_${n}">${esc(w.cardNumber)}</label><input id="card_number_${n}" name="card_number" inputmode="numeric" autocomplete="cc-number" required${focusCard && n === 0 ? " autofocus" : ""}>
<div class="row"><div><label for="exp_month_${n}">${esc(w.month)}</label><input id="exp_month_${n}" name="exp_month" inputmode="numeric" required placeholder="12"></div>
<div><label for="exp_year_${n}">${esc(w.year)}</label><input id="exp_year_${n}" name="exp_year" inputmode="numeric" required placeholder="2030"></div>
<div><label for="cvc_${n}">${esc(w.cvc)}</label><input id="cvc_${n}" name="cvc" inputmode="numeric" required></div></div>`
}
<button type="submit">${esc(w.saveCard)}</button></form></details>`
          : ""
      const switchForm =
        switch_options.length > 0
          ? `<details><summary>${esc(w.changePlan)}</summary>
<form method="get" action="${action("switch")}" class="switch-form"><label for="price_${n}">${esc(w.newPlan)}</label>
<select id="price_${n}" name="price_id">${switch_options
              .map((o) => {
                const amount = o.amount !== null ? ` — ${money(language, o.amount, o.currency)}` : ""
                const every = o.interval ? ` ${interval(language, o.interval.unit, o.interval.count)}` : ""
                return `<option value="${esc(o.price_id)}">${esc(`${o.name}${amount}${o.amount !== null ? every : ""}`)}</option>`
              })
              .join("")}</select>
<button type="submit">${esc(w.review)}</button></form></details>`
          : ""
      const cancel =
        live && s.status !== "unpaid" && allowed.cancel
          ? s.cancel_at_period_end
            ? `<p class="muted">${esc(w.endsOn(date(language, s.current_period_end)))}</p><form method="post" action="${action("revoke")}"><button type="submit">${esc(w.keep)}</button></form>`
            : `<form method="post" action="${action("cancel")}"><button type="submit" class="secondary">${esc(w.cancel)}</button></form>`
          : ""
      const next =
        upcoming !== null
          ? ` · <span class="upcoming">${esc(w.nextInvoice(date(language, upcoming.invoice_date), money(language, upcoming.amount, upcoming.currency)))}</span>`
          : ""
      // a subscription of several items lists each with its quantity
      const itemList =
        items.length > 1
          ? `<ul class="items" id="items-${n}">${items
              .map((i) => `<li>${esc(i.name)}${i.quantity !== "1" ? ` × ${esc(i.quantity)}` : ""}</li>`)
              .join("")}</ul>\n`
          : ""
      return `<section class="sub" id="sub-${esc(s.id)}"><h2>${esc(price_name)}</h2>
${itemList}<p><span class="status">${esc(w.statuses[s.status] ?? s.status)}</span>${next}</p>
<p class="muted">${esc(w.paidWith(card))}</p>
${cardForm}
${switchForm}
${cancel}</section>`
    }
  )
  const [cNumber, cDate, cStatus, cAmount] = w.columns
  const invoices = view.invoices.map(
    (i) =>
      `<tr><td>${esc(i.number ?? i.invoice_id)}</td><td>${esc(date(language, i.created_at))}</td><td>${esc(statusText(language, i.biz_status))}</td><td class="num">${esc(money(language, i.amount, i.currency))}</td><td>${i.hosted_invoice_url ? `<a href="${esc(i.hosted_invoice_url)}">${esc(w.view)}</a> · <a href="${esc(i.invoice_pdf ?? "")}">PDF</a>` : ""}</td></tr>`
  )
  const back = view.session.return_url
  const invoiceSection = allowed.invoice_history
    ? `<h2>${esc(w.invoices)}</h2>
${invoices.length > 0 ? `<table id="invoices"><thead><tr><th>${esc(cNumber)}</th><th>${esc(cDate)}</th><th>${esc(cStatus)}</th><th class="num">${esc(cAmount)}</th><th></th></tr></thead><tbody>${invoices.join("")}</tbody></table>` : `<p>${esc(w.noInvoices)}</p>`}`
    : ""
  return `${view.payments.provider === "stripe" ? PaymentElement.stripeScript(view.payments) : ""}<main><p class="muted">${esc(view.merchantName)}</p>
<h1>${esc(w.title)}</h1>
<p id="customer">${esc([view.customer.name, view.customer.email].filter((x) => x !== null && x !== "").join(" · "))}</p>
${messageHtml(message)}
<h2>${esc(w.subscriptions)}</h2>
${subs.length > 0 ? subs.join("\n") : `<p>${esc(w.noSubscriptions)}</p>`}
${invoiceSection}
${back ? `<p><a href="${esc(back)}" id="return">${esc(w.backTo(view.merchantName))}</a></p>` : ""}
</main>`
}

/**
 * The preview of a price switch: the engine's quote (credit for the unused time, charge for the
 * rest of the period, tax, what is charged or given back now) and the form that commits exactly
 * it (`quote_id`). Posted to `switch` relative to the page; the back link is `back`.
 */
export const switchHtml = (
  input: {
    readonly merchantName: string
    readonly from: string
    readonly option: Portal.SwitchOption
    readonly quote: Subscriptions.Quote
    readonly back: string
  },
  language: Language,
  message?: { readonly text: string; readonly error: boolean }
): string => {
  const w = words[language]
  const q = input.quote
  const m = (amount: string) => money(language, amount, q.currency)
  const prorated = q.outcome === "upgrade" || q.outcome === "refund" || q.outcome === "credit_balance"
  const total = q.total.startsWith("-") ? q.total.slice(1) : q.total
  const rows = prorated
    ? [
        [w.unusedTime(input.from), q.lines[0]?.amount ?? `-${q.credit}`],
        [w.remainingTime(input.option.name), q.lines[1]?.amount ?? q.charge],
        ...(/[1-9]/.test(q.tax) ? [[w.tax, q.tax]] : [])
      ]
        .map(([label, amount]) => `<tr><td>${esc(label!)}</td><td class="num">${esc(m(amount!))}</td></tr>`)
        .join("")
    : ""
  const outcome =
    q.outcome === "upgrade"
      ? `<p>${esc(w.dueNow)}: <span class="total" id="due-now">${esc(m(total))}</span></p>`
      : q.outcome === "refund"
        ? `<p>${esc(w.refunded)}: <span class="total" id="due-now">${esc(m(total))}</span></p>`
        : q.outcome === "credit_balance"
          ? `<p>${esc(w.credited)}: <span class="total" id="due-now">${esc(m(total))}</span></p>`
          : `<p id="due-now">${esc(w.nothingNow)}</p>`
  return `<main><p class="muted">${esc(input.merchantName)}</p>
<h1>${esc(w.switchTitle(input.from, input.option.name))}</h1>
${messageHtml(message)}
${rows ? `<table id="quote"><tbody>${rows}</tbody></table>` : ""}
${q.discounts_ending.map((d) => `<p class="discount-ends">${esc(w.discountEnds(d.discount_code !== "" ? d.discount_code : d.discount_id))}</p>`).join("")}
${outcome}
<form method="post" action="switch"><input type="hidden" name="price_id" value="${esc(input.option.price_id)}"><input type="hidden" name="quote_id" value="${esc(q.quote_id)}">
<button type="submit" id="confirm">${esc(w.confirm)}</button></form>
<p><a href="${esc(input.back)}">${esc(w.back)}</a></p>
</main>`
}
