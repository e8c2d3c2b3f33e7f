/**
 * An invoice as a document: the hosted page (HTML, no external assets) and the PDF (pdfkit, the
 * standard Helvetica fonts), both from the same rows, in English, German or French.
 */
import type { Billing } from "@recur/core"
import { DateTime } from "effect"
import PDFDocument from "pdfkit"
import { esc, type Language, money } from "./checkoutPage.js"
import * as PaymentElement from "./paymentElement.js"

interface Words {
  readonly invoice: string
  readonly creditNote: string
  readonly number: string
  readonly issued: string
  readonly paidAt: string
  readonly carried: string
  readonly status: string
  readonly from: string
  readonly billTo: string
  readonly description: string
  readonly period: string
  readonly quantity: string
  readonly amount: string
  readonly subtotal: string
  readonly discount: string
  readonly tax: string
  readonly included: string
  readonly total: string
  readonly amountDue: string
  readonly refunded: string
  readonly pay: string
  readonly cardNumber: string
  readonly month: string
  readonly year: string
  readonly cvc: string
  readonly nameOnCard: string
  readonly download: string
  readonly statuses: Readonly<Record<string, string>>
}

const words: Readonly<Record<Language, Words>> = {
  en: {
    invoice: "Invoice",
    creditNote: "Credit note",
    number: "Number",
    issued: "Issued",
    paidAt: "Paid",
    carried: "Carried to your next invoice",
    status: "Status",
    from: "From",
    billTo: "Bill to",
    description: "Description",
    period: "Period",
    quantity: "Qty",
    amount: "Amount",
    subtotal: "Subtotal",
    discount: "Discount",
    tax: "Tax",
    included: "included",
    total: "Total",
    amountDue: "Amount due",
    refunded: "Refunded",
    pay: "Pay",
    cardNumber: "Card number",
    month: "Month",
    year: "Year",
    cvc: "CVC",
    nameOnCard: "Name on card",
    download: "Download PDF",
    statuses: {
      open: "Open",
      pending: "Processing",
      retrying: "Payment failed — due",
      success: "Paid",
      failed: "Failed",
      refunded: "Refunded",
      partially_refunded: "Partially refunded",
      void: "Void"
    }
  },
  de: {
    invoice: "Rechnung",
    creditNote: "Gutschrift",
    number: "Nummer",
    issued: "Ausgestellt",
    paidAt: "Bezahlt",
    carried: "Auf Ihre nächste Rechnung übertragen",
    status: "Status",
    from: "Von",
    billTo: "Rechnung an",
    description: "Beschreibung",
    period: "Zeitraum",
    quantity: "Menge",
    amount: "Betrag",
    subtotal: "Zwischensumme",
    discount: "Rabatt",
    tax: "Steuer",
    included: "enthalten",
    total: "Gesamt",
    amountDue: "Fälliger Betrag",
    refunded: "Erstattet",
    pay: "Bezahlen",
    cardNumber: "Kartennummer",
    month: "Monat",
    year: "Jahr",
    cvc: "Prüfnummer",
    nameOnCard: "Name auf der Karte",
    download: "PDF herunterladen",
    statuses: {
      open: "Offen",
      pending: "In Bearbeitung",
      retrying: "Zahlung fehlgeschlagen — fällig",
      success: "Bezahlt",
      failed: "Fehlgeschlagen",
      refunded: "Erstattet",
      partially_refunded: "Teilweise erstattet",
      void: "Storniert"
    }
  },
  fr: {
    invoice: "Facture",
    creditNote: "Avoir",
    number: "Numéro",
    issued: "Émise le",
    paidAt: "Payée le",
    carried: "Reporté sur votre prochaine facture",
    status: "Statut",
    from: "De",
    billTo: "Facturé à",
    description: "Description",
    period: "Période",
    quantity: "Qté",
    amount: "Montant",
    subtotal: "Sous-total",
    discount: "Remise",
    tax: "Taxe",
    included: "incluse",
    total: "Total",
    amountDue: "Montant dû",
    refunded: "Remboursé",
    pay: "Payer",
    cardNumber: "Numéro de carte",
    month: "Mois",
    year: "Année",
    cvc: "CVC",
    nameOnCard: "Nom sur la carte",
    download: "Télécharger le PDF",
    statuses: {
      open: "Ouverte",
      pending: "En cours",
      retrying: "Paiement échoué — à régler",
      success: "Payée",
      failed: "Échouée",
      refunded: "Remboursée",
      partially_refunded: "Partiellement remboursée",
      void: "Annulée"
    }
  }
}

/** An invoice status as a reader reads it. */
export const statusText = (language: Language, status: string): string => words[language].statuses[status] ?? status

/** What a link to no invoice (or with a wrong signature) says. */
export const notFound: Readonly<Record<Language, string>> = {
  en: "This invoice does not exist.",
  de: "Diese Rechnung gibt es nicht.",
  fr: "Cette facture n'existe pas."
}

const INTL: Readonly<Record<Language, string>> = { en: "en-US", de: "de-DE", fr: "fr-FR" }

/** A date in the reader's language, in UTC (the instants the engine stores). */
export const date = (language: Language, t: DateTime.Utc | null): string =>
  t === null
    ? ""
    : new Intl.DateTimeFormat(INTL[language], { dateStyle: "medium", timeZone: "UTC" }).format(
        new Date(DateTime.toEpochMillis(t))
      )

/** The rows both renderings show. */
const rowsOf = (doc: Billing.InvoiceDocument, language: Language) => {
  const w = words[language]
  const i = doc.invoice
  const cur = i.currency
  const m = (amount: string) => money(language, amount, cur)
  const lines = i.lines
    .filter((l) => l.kind !== "discount")
    .map((l) => ({
      description: l.description || (l.kind === "refund" ? w.refunded : w.invoice),
      period:
        l.period_start !== null && l.period_end !== null
          ? `${date(language, l.period_start)} – ${date(language, l.period_end)}`
          : "",
      quantity: l.quantity,
      amount: m(l.amount)
    }))
  const totals: Array<readonly [string, string]> = []
  if (i.subtotal !== null) totals.push([w.subtotal, m(i.subtotal)])
  for (const d of i.lines.filter((l) => l.kind === "discount"))
    totals.push([`${w.discount} ${d.description.replace(/^Discount ?/, "")}`.trim(), m(d.amount)])
  for (const t of i.tax_lines)
    totals.push([
      `${t.name} ${t.percentage.replace(".", language === "en" ? "." : ",")} %${t.inclusive ? ` (${w.included})` : ""}`,
      m(t.amount)
    ])
  totals.push([i.invoice_type === "refund" ? w.refunded : w.total, m(i.amount)])
  return {
    title: i.invoice_type === "refund" ? w.creditNote : w.invoice,
    facts: [
      [w.number, i.number ?? i.invoice_id],
      [w.issued, date(language, i.created_at)],
      ...(i.paid_at !== null ? [[w.paidAt, date(language, i.paid_at)] as const] : []),
      // settled with nothing charged: its total is owed on the next invoice, not paid by card
      ...(doc.carried === true ? [[w.carried, m(i.amount)] as const] : []),
      [w.status, w.statuses[i.biz_status] ?? i.biz_status]
    ] as ReadonlyArray<readonly [string, string]>,
    customer: [doc.customer.name, doc.customer.email, doc.customer.address].filter(
      (x): x is string => x !== null && x !== ""
    ),
    lines,
    totals
  }
}

/**
 * The hosted invoice page's body; `pay` gives the Pay form's action (shown for a payable
 * invoice), `error` a message above it.
 */
export const invoiceHtml = (
  doc: Billing.InvoiceDocument,
  language: Language,
  options: { readonly payAction?: string | undefined; readonly pdfHref: string; readonly error?: string | undefined }
): string => {
  const w = words[language]
  const r = rowsOf(doc, language)
  const i = doc.invoice
  const pay =
    options.payAction !== undefined && doc.payable
      ? `<h2>${esc(w.amountDue)}: <span id="due">${esc(money(language, i.amount, i.currency))}</span></h2>
${options.error ? `<p class="error" role="alert">${esc(options.error)}</p>` : ""}
<form method="post" action="${esc(options.payAction)}" id="pay-form">
${
  doc.payments.provider === "stripe"
    ? `${PaymentElement.stripeScript(doc.payments)}${PaymentElement.fields(doc.payments, {
        form: "pay-form",
        suffix: "",
        amountMinor: PaymentElement.minorUnits(i.amount, i.currency),
        currency: i.currency,
        locale: language
      })}`
    : `<label for="card_number">${esc(w.cardNumber)}</label><input id="card_number" name="card_number" inputmode="numeric" autocomplete="cc-number" required>
<div class="row"><div><label for="exp_month">${esc(w.month)}</label><input id="exp_month" name="exp_month" inputmode="numeric" required placeholder="12"></div>
<div><label for="exp_year">${esc(w.year)}</label><input id="exp_year" name="exp_year" inputmode="numeric" required placeholder="2030"></div>
<div><label for="cvc">${esc(w.cvc)}</label><input id="cvc" name="cvc" inputmode="numeric" required></div></div>
<label for="name">${esc(w.nameOnCard)}</label><input id="name" name="name" autocomplete="cc-name">`
}
<button type="submit" id="pay">${esc(w.pay)} ${esc(money(language, i.amount, i.currency))}</button></form>`
      : ""
  return `<main>
<p class="merchant">${esc(w.from)} <strong id="merchant">${esc(doc.merchantName)}</strong></p>
<h1 id="title">${esc(r.title)} <span id="number">${esc(i.number ?? i.invoice_id)}</span></h1>
<dl id="facts">${r.facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join("")}</dl>
${r.customer.length > 0 ? `<section id="customer"><h2>${esc(w.billTo)}</h2>${r.customer.map((c) => `<p>${esc(c)}</p>`).join("")}</section>` : ""}
<table id="lines"><thead><tr><th>${esc(w.description)}</th><th>${esc(w.period)}</th><th class="num">${esc(w.quantity)}</th><th class="num">${esc(w.amount)}</th></tr></thead>
<tbody>${r.lines.map((l) => `<tr><td>${esc(l.description)}</td><td>${esc(l.period)}</td><td class="num">${esc(l.quantity)}</td><td class="num">${esc(l.amount)}</td></tr>`).join("")}</tbody></table>
<table id="totals"><tbody>${r.totals.map(([k, v], n) => `<tr${n === r.totals.length - 1 ? ' class="total"' : ""}><th>${esc(k)}</th><td class="num">${esc(v)}</td></tr>`).join("")}</tbody></table>
${pay}
<p><a href="${esc(options.pdfHref)}" id="pdf">${esc(w.download)}</a></p>
</main>`
}

/** The page's style: readable on a phone, printable. */
export const invoiceStyle = `body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#111}
table{width:100%;border-collapse:collapse;margin:1rem 0}th,td{text-align:left;padding:.4rem;border-bottom:1px solid #ddd}.num{text-align:right}
#totals{max-width:24rem;margin-left:auto}#totals td{text-align:right}.total th,.total td{font-weight:700;border-top:2px solid #111}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}dt{color:#555}dd{margin:0}
label{display:block;margin:.6rem 0 .2rem}input{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}.row{display:flex;gap:.5rem}.row>div{flex:1}
button{margin-top:1rem;width:100%;padding:.7rem;font-size:1rem;background:#1a4fd6;color:#fff;border:0;border-radius:.3rem;cursor:pointer}
button:focus,input:focus,a:focus{outline:3px solid #f5a623}.error{background:#fde8e8;color:#8a1111;padding:.6rem;border-radius:.3rem}
a{color:#1a4fd6}@media print{#pay-form,#pdf{display:none}}`

/**
 * Helvetica (a PDF standard font) writes Windows-1252: characters outside it (other scripts)
 * would come out as garbage, so they become `?` — the page shows them as they are.
 */
const winAnsi = (s: string): string =>
  s
    .replace(/[\u202f\u00a0]/g, " ")
    .replace(/[\u2013\u2014]/g, "-")
    .replace(/[^\u0020-\u007e\u00a1-\u00ff€]/g, "?")

/** The invoice as a PDF: A4, the same rows as the page. */
export const invoicePdf = (doc: Billing.InvoiceDocument, language: Language): Promise<Uint8Array> =>
  new Promise((resolve, reject) => {
    const w = words[language]
    const r = rowsOf(doc, language)
    const i = doc.invoice
    const pdf = new PDFDocument({
      size: "A4",
      margin: 50,
      info: { Title: `${r.title} ${i.number ?? i.invoice_id}`, Author: doc.merchantName, Creator: "Recur" }
    })
    const chunks: Array<Uint8Array> = []
    pdf.on("data", (c: Uint8Array) => chunks.push(c))
    pdf.on("error", reject)
    pdf.on("end", () => {
      const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0))
      let at = 0
      for (const c of chunks) {
        out.set(c, at)
        at += c.length
      }
      resolve(out)
    })
    const t = winAnsi
    pdf
      .font("Helvetica-Bold")
      .fontSize(20)
      .text(t(`${r.title} ${i.number ?? i.invoice_id}`))
    pdf
      .moveDown(0.3)
      .font("Helvetica")
      .fontSize(10)
      .text(t(`${w.from}: ${doc.merchantName}`))
    pdf.moveDown()
    for (const [k, v] of r.facts) pdf.text(t(`${k}: ${v}`))
    if (r.customer.length > 0) {
      pdf.moveDown().font("Helvetica-Bold").text(t(w.billTo)).font("Helvetica")
      for (const c of r.customer) pdf.text(t(c))
    }
    pdf.moveDown(1.5)
    const left = 50
    const cols = [left, 250, 400, 445] as const
    const widths = [195, 145, 40, 100] as const
    const row = (cells: ReadonlyArray<string>, bold = false) => {
      const y = pdf.y
      pdf.font(bold ? "Helvetica-Bold" : "Helvetica")
      let bottom = y
      cells.forEach((c, n) => {
        pdf.text(t(c), cols[n]!, y, { width: widths[n]!, align: n >= 2 ? "right" : "left" })
        bottom = Math.max(bottom, pdf.y)
      })
      pdf.x = left
      pdf.y = bottom + 4
    }
    row([w.description, w.period, w.quantity, w.amount], true)
    pdf
      .moveTo(left, pdf.y - 2)
      .lineTo(545, pdf.y - 2)
      .stroke()
    for (const l of r.lines) row([l.description, l.period, l.quantity, l.amount])
    pdf.moveDown()
    r.totals.forEach(([k, v], n) => {
      const y = pdf.y
      const last = n === r.totals.length - 1
      pdf.font(last ? "Helvetica-Bold" : "Helvetica")
      pdf.text(t(k), 300, y, { width: 140 })
      pdf.text(t(v), 445, y, { width: 100, align: "right" })
      pdf.x = left
    })
    pdf.end()
  })
