/**
 * An invoice as a document: the hosted page (HTML, no external assets) and the PDF (pdfkit, the
 * standard Helvetica fonts), both from the same rows, in the reader's language (the PDF in
 * English where Helvetica cannot write it: {@link pdfLanguage}).
 */
import { Invoice, Money } from "@recur/core"
import type { Billing } from "@recur/core"
import { DateTime } from "effect"
import PDFDocument from "pdfkit"
import { esc, type Language, money, stripeLocale } from "./checkoutPage.js"
import * as I18n from "./i18n/index.js"
import * as PaymentElement from "./paymentElement.js"

/** An invoice status as a reader reads it. */
export const statusText = (language: Language, status: string): string =>
  (I18n.messagesOf(language).invoice.statuses as Readonly<Record<string, string>>)[status] ?? status

/** What a link to no invoice (or with a wrong signature) says. */
export const notFound = (language: Language): string => I18n.messagesOf(language).invoice.notFound

/** A date in the reader's language, in UTC (the instants the engine stores), Gregorian. */
export const date = (language: Language, t: DateTime.Utc | null): string =>
  t === null ? "" : I18n.date(language, DateTime.toEpochMillis(t))

/**
 * The languages the PDF is written in: those whose words Helvetica (a PDF standard font,
 * Windows-1252) can write. The others (Arabic, Chinese, Japanese, Korean, Polish, Russian, Thai)
 * get the PDF in English with a note that the invoice page shows it in their language: no font
 * for those scripts ships with Recur (see docs/decisions.md).
 */
export const PDF_LANGUAGES: ReadonlySet<Language> = new Set<Language>([
  "de-DE",
  "en-US",
  "es-ES",
  "fr-FR",
  "id-ID",
  "it-IT",
  "nl-NL",
  "pt-PT"
])

/** The language an invoice's PDF is written in for a reader of `language`. */
export const pdfLanguage = (language: Language): Language => (PDF_LANGUAGES.has(language) ? language : "en-US")

/** The rows both renderings show. */
const rowsOf = (doc: Billing.InvoiceDocument, language: Language) => {
  const w = I18n.messagesOf(language).invoice
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
      amount: m(l.amount),
      // the line's shares of the invoice's discounts and tax, when it has any (not on invoices
      // built before they were kept): a sub-row under the line
      shares: [
        ...(l.discount_amount !== null && /[1-9]/.test(l.discount_amount)
          ? [[w.discount, m(`-${l.discount_amount}`)] as const]
          : []),
        ...(l.tax_amount !== null && /[1-9]/.test(l.tax_amount) ? [[w.tax, m(l.tax_amount)] as const] : [])
      ] as ReadonlyArray<readonly [string, string]>
    }))
  const totals: Array<readonly [string, string]> = []
  if (i.subtotal !== null) totals.push([w.subtotal, m(i.subtotal)])
  for (const d of i.lines.filter((l) => l.kind === "discount"))
    totals.push([`${w.discount} ${d.description.replace(/^Discount ?/, "")}`.trim(), m(d.amount)])
  for (const t of i.tax_lines)
    totals.push([
      `${t.name} ${I18n.percent(language, t.percentage)}${t.inclusive ? ` (${w.included})` : ""}`,
      m(t.amount)
    ])
  // the customer's credit it applied (a debit carried into it is one of its lines)
  if (i.credit_applied !== null && /[1-9]/.test(i.credit_applied) && !i.credit_applied.startsWith("-"))
    totals.push([w.appliedBalance, m(`-${i.credit_applied}`)])
  totals.push([i.invoice_type === "refund" ? w.refunded : w.total, m(i.amount)])
  // credit notes that reduced it before payment: its total stays as issued, less is asked
  if (i.pre_payment_credit_notes_amount !== null && /[1-9]/.test(i.pre_payment_credit_notes_amount)) {
    totals.push([w.creditNotes, m(`-${i.pre_payment_credit_notes_amount}`)])
    totals.push([w.amountDue, m(Money.format(Invoice.amountDue(i)))])
  }
  return {
    // a voided invoice keeps its number, and says VOID in its title
    title:
      (i.invoice_type === "refund" ? w.creditNote : w.invoice) +
      (i.biz_status === "void" ? ` — ${w.statuses.void.toLocaleUpperCase(language)}` : ""),
    facts: [
      [w.number, i.number ?? i.invoice_id],
      [w.issued, date(language, i.created_at)],
      ...(i.due_date !== null ? [[w.due, date(language, i.due_date)] as const] : []),
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

/** A line's shares of the discounts and tax as the sub-row under it (none without shares). */
const sharesRow = (shares: ReadonlyArray<readonly [string, string]>): string =>
  shares.length === 0
    ? ""
    : `<tr class="shares"><td colspan="4">${shares.map(([k, v]) => `<span>${esc(k)}: <span class="num">${esc(v)}</span></span>`).join(" · ")}</td></tr>`

/**
 * The hosted invoice page's body; `pay` gives the Pay form's action (shown for a payable
 * invoice), `error` a message above it.
 */
export const invoiceHtml = (
  doc: Billing.InvoiceDocument,
  language: Language,
  options: { readonly payAction?: string | undefined; readonly pdfHref: string; readonly error?: string | undefined }
): string => {
  const w = I18n.messagesOf(language).invoice
  const c = I18n.messagesOf(language).card
  const r = rowsOf(doc, language)
  const i = doc.invoice
  // what the Pay form charges: the amount less the credit notes that reduced it (its trade's amount)
  const remaining = Money.format(Invoice.amountRemaining(i))
  const pay =
    options.payAction !== undefined && doc.payable
      ? `<h2>${esc(w.amountDue)}: <span id="due">${esc(money(language, remaining, i.currency))}</span></h2>
${options.error ? `<p class="error" role="alert">${esc(options.error)}</p>` : ""}
<form method="post" action="${esc(options.payAction)}" id="pay-form">
${
  doc.payments.provider === "stripe"
    ? `${PaymentElement.stripeScript(doc.payments)}${PaymentElement.fields(doc.payments, {
        form: "pay-form",
        suffix: "",
        amountMinor: PaymentElement.minorUnits(remaining, i.currency),
        currency: i.currency,
        locale: stripeLocale(language)
      })}`
    : `<label for="card_number">${esc(c.cardNumber)}</label><input id="card_number" name="card_number" inputmode="numeric" autocomplete="cc-number" required>
<div class="row"><div><label for="exp_month">${esc(c.month)}</label><input id="exp_month" name="exp_month" inputmode="numeric" required placeholder="12"></div>
<div><label for="exp_year">${esc(c.year)}</label><input id="exp_year" name="exp_year" inputmode="numeric" required placeholder="2030"></div>
<div><label for="cvc">${esc(c.cvc)}</label><input id="cvc" name="cvc" inputmode="numeric" required></div></div>
<label for="name">${esc(c.nameOnCard)}</label><input id="name" name="name" autocomplete="cc-name">`
}
<button type="submit" id="pay">${esc(w.pay)} ${esc(money(language, i.amount, i.currency))}</button></form>`
      : ""
  return `<main>
<p class="merchant">${esc(w.from)} <strong id="merchant">${esc(doc.merchantName)}</strong></p>
<h1 id="title">${esc(r.title)} <span id="number">${esc(i.number ?? i.invoice_id)}</span></h1>
<dl id="facts">${r.facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join("")}</dl>
${r.customer.length > 0 ? `<section id="customer"><h2>${esc(w.billTo)}</h2>${r.customer.map((c) => `<p>${esc(c)}</p>`).join("")}</section>` : ""}
<table id="lines"><thead><tr><th>${esc(w.description)}</th><th>${esc(w.period)}</th><th class="num">${esc(w.quantity)}</th><th class="num">${esc(w.amount)}</th></tr></thead>
<tbody>${r.lines.map((l) => `<tr><td>${esc(l.description)}</td><td>${esc(l.period)}</td><td class="num">${esc(l.quantity)}</td><td class="num">${esc(l.amount)}</td></tr>${sharesRow(l.shares)}`).join("")}</tbody></table>
<table id="totals"><tbody>${r.totals.map(([k, v], n) => `<tr${n === r.totals.length - 1 ? ' class="total"' : ""}><th>${esc(k)}</th><td class="num">${esc(v)}</td></tr>`).join("")}</tbody></table>
${pay}
<p><a href="${esc(options.pdfHref)}" id="pdf">${esc(w.download)}</a></p>
</main>`
}

/** The page's style: readable on a phone, printable. */
export const invoiceStyle = `body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#111}
table{width:100%;border-collapse:collapse;margin:1rem 0}th,td{text-align:start;padding:.4rem;border-bottom:1px solid #ddd}.num{text-align:end}
.shares td{font-size:.85em;color:#555;padding-top:0;padding-inline-start:1.2rem}
#totals{max-width:24rem;margin-inline-start:auto}#totals td{text-align:end}.total th,.total td{font-weight:700;border-top:2px solid #111}
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

/** The note a PDF written in English for a reader of another language carries. */
export const PDF_ENGLISH_NOTE =
  "This PDF is in English: its standard font cannot write your language. The invoice page shows this invoice in your language."

/**
 * The invoice as a PDF: A4, the same rows as the page, in {@link pdfLanguage} of the reader's
 * language — with a note, when that is English for another reader, that the page speaks theirs.
 */
export const invoicePdf = (doc: Billing.InvoiceDocument, reader: Language): Promise<Uint8Array> =>
  new Promise((resolve, reject) => {
    const language = pdfLanguage(reader)
    const w = I18n.messagesOf(language).invoice
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
    if (language !== reader) pdf.moveDown(0.3).fontSize(8).text(PDF_ENGLISH_NOTE).fontSize(10)
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
    for (const l of r.lines) {
      row([l.description, l.period, l.quantity, l.amount])
      if (l.shares.length > 0) {
        // the line's shares of the discounts and tax, small, under it
        const y = pdf.y - 2
        pdf
          .font("Helvetica")
          .fontSize(8)
          .text(t(l.shares.map(([k, v]) => `${k}: ${v}`).join("   ")), cols[0] + 10, y, { width: 485 })
          .fontSize(10)
        pdf.x = left
        pdf.y += 4
      }
    }
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
