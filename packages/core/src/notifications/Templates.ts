/**
 * The notification templates: plain functions from a message's facts to its subject, HTML and
 * plain text, in English, German and French. Inline styles only, no image, font or stylesheet
 * from elsewhere; every value is HTML-escaped.
 *
 * @since 0.1.0
 */
import type { NotificationKind, NotificationLanguage } from "./Notification.js"

/**
 * What a message says: the merchant's name, the customer's, and the facts and links of its
 * cause (absent ones are left out).
 *
 * @since 0.1.0
 */
export interface MessageFacts {
  readonly merchantName: string
  readonly customerName: string | null
  /** An amount with its currency, as the invoice shows it (`30.00 USD`). */
  readonly amount: string | null
  readonly invoiceNumber: string | null
  /** The signed hosted invoice page. */
  readonly invoiceUrl: string | null
  readonly pdfUrl: string | null
  /** The portal's card-update flow. */
  readonly portalUrl: string | null
  /** A date (`2026-12-01`): the trial's end, the card's expiry or the cancellation. */
  readonly date: string | null
  /**
   * Whether the subscription has ended by the time the message is sent (a decline whose class
   * stops dunning under a `canceled` final state): a failed payment then says so, with no card link.
   */
  readonly ended?: boolean | undefined
}

/**
 * A rendered message.
 *
 * @since 0.1.0
 */
export interface Rendered {
  readonly subject: string
  readonly html: string
  readonly text: string
}

interface Words {
  readonly subject: (f: MessageFacts) => string
  readonly lines: (f: MessageFacts) => ReadonlyArray<string>
}

type Phrasebook = {
  readonly hello: (name: string | null) => string
  readonly viewInvoice: string
  readonly downloadPdf: string
  readonly updateCard: string
  readonly footer: (merchant: string) => string
  readonly kinds: Record<NotificationKind, Words>
}

const num = (f: MessageFacts) => (f.invoiceNumber !== null ? ` ${f.invoiceNumber}` : "")
const amt = (f: MessageFacts) => f.amount ?? ""

const en: Phrasebook = {
  hello: (n) => (n !== null ? `Hello ${n},` : "Hello,"),
  viewInvoice: "View the invoice",
  downloadPdf: "Download the PDF",
  updateCard: "Update your card",
  footer: (m) => `You receive this message as a customer of ${m}.`,
  kinds: {
    invoice_issued: {
      subject: (f) => `${f.merchantName}: invoice${num(f)} for ${amt(f)}`,
      lines: (f) => [
        `${f.merchantName} has issued invoice${num(f)} for ${amt(f)}.`,
        ...(f.date !== null ? [`It is due on ${f.date}. You can pay it by card on its page.`] : [])
      ]
    },
    invoice_past_due: {
      subject: (f) => `${f.merchantName}: invoice${num(f)} for ${amt(f)} is past due`,
      lines: (f) => [
        `Invoice${num(f)} for ${amt(f)} was due on ${f.date ?? ""} and has not been paid.`,
        "Please pay it by card on its page so that your subscription continues."
      ]
    },
    payment_receipt: {
      subject: (f) => `${f.merchantName}: receipt for your payment of ${amt(f)}`,
      lines: (f) => [`Thank you: we received your payment of ${amt(f)} for invoice${num(f)}.`]
    },
    payment_failed: {
      subject: (f) => `${f.merchantName}: your payment of ${amt(f)} failed`,
      lines: (f) => [
        `We could not charge your card ${amt(f)} for invoice${num(f)}.`,
        f.ended
          ? "Your subscription has been canceled."
          : "Please update your card so that your subscription continues."
      ]
    },
    trial_ending: {
      subject: (f) => `${f.merchantName}: your trial ends on ${f.date ?? ""}`,
      lines: (f) => [`Your trial ends on ${f.date ?? ""}. Your subscription then continues with the card on file.`]
    },
    card_expiring: {
      subject: (f) => `${f.merchantName}: your card expires soon`,
      lines: (f) => [`The card on file expires before your next renewal on ${f.date ?? ""}. Please update it.`]
    },
    subscription_canceled: {
      subject: (f) => `${f.merchantName}: your subscription is canceled`,
      lines: () => ["Your subscription has been canceled. We are sorry to see you go."]
    }
  }
}

const de: Phrasebook = {
  hello: (n) => (n !== null ? `Hallo ${n},` : "Hallo,"),
  viewInvoice: "Rechnung ansehen",
  downloadPdf: "PDF herunterladen",
  updateCard: "Karte aktualisieren",
  footer: (m) => `Sie erhalten diese Nachricht als Kunde von ${m}.`,
  kinds: {
    invoice_issued: {
      subject: (f) => `${f.merchantName}: Rechnung${num(f)} über ${amt(f)}`,
      lines: (f) => [
        `${f.merchantName} hat die Rechnung${num(f)} über ${amt(f)} ausgestellt.`,
        ...(f.date !== null ? [`Sie ist am ${f.date} fällig. Sie können sie auf ihrer Seite mit Karte bezahlen.`] : [])
      ]
    },
    invoice_past_due: {
      subject: (f) => `${f.merchantName}: Rechnung${num(f)} über ${amt(f)} ist überfällig`,
      lines: (f) => [
        `Die Rechnung${num(f)} über ${amt(f)} war am ${f.date ?? ""} fällig und ist noch nicht bezahlt.`,
        "Bitte bezahlen Sie sie auf ihrer Seite mit Karte, damit Ihr Abonnement weiterläuft."
      ]
    },
    payment_receipt: {
      subject: (f) => `${f.merchantName}: Zahlungsbestätigung über ${amt(f)}`,
      lines: (f) => [`Vielen Dank: Wir haben Ihre Zahlung von ${amt(f)} für die Rechnung${num(f)} erhalten.`]
    },
    payment_failed: {
      subject: (f) => `${f.merchantName}: Ihre Zahlung von ${amt(f)} ist fehlgeschlagen`,
      lines: (f) => [
        `Wir konnten Ihre Karte für die Rechnung${num(f)} nicht mit ${amt(f)} belasten.`,
        f.ended
          ? "Ihr Abonnement wurde gekündigt."
          : "Bitte aktualisieren Sie Ihre Karte, damit Ihr Abonnement weiterläuft."
      ]
    },
    trial_ending: {
      subject: (f) => `${f.merchantName}: Ihr Testzeitraum endet am ${f.date ?? ""}`,
      lines: (f) => [
        `Ihr Testzeitraum endet am ${f.date ?? ""}. Danach läuft Ihr Abonnement mit der hinterlegten Karte weiter.`
      ]
    },
    card_expiring: {
      subject: (f) => `${f.merchantName}: Ihre Karte läuft bald ab`,
      lines: (f) => [
        `Die hinterlegte Karte läuft vor Ihrer nächsten Verlängerung am ${f.date ?? ""} ab. Bitte aktualisieren Sie sie.`
      ]
    },
    subscription_canceled: {
      subject: (f) => `${f.merchantName}: Ihr Abonnement wurde gekündigt`,
      lines: () => ["Ihr Abonnement wurde gekündigt. Schade, dass Sie gehen."]
    }
  }
}

const fr: Phrasebook = {
  hello: (n) => (n !== null ? `Bonjour ${n},` : "Bonjour,"),
  viewInvoice: "Voir la facture",
  downloadPdf: "Télécharger le PDF",
  updateCard: "Mettre à jour votre carte",
  footer: (m) => `Vous recevez ce message en tant que client de ${m}.`,
  kinds: {
    invoice_issued: {
      subject: (f) => `${f.merchantName} : facture${num(f)} de ${amt(f)}`,
      lines: (f) => [
        `${f.merchantName} a émis la facture${num(f)} de ${amt(f)}.`,
        ...(f.date !== null ? [`Elle est à régler le ${f.date}. Vous pouvez la payer par carte sur sa page.`] : [])
      ]
    },
    invoice_past_due: {
      subject: (f) => `${f.merchantName} : la facture${num(f)} de ${amt(f)} est en retard`,
      lines: (f) => [
        `La facture${num(f)} de ${amt(f)} était à régler le ${f.date ?? ""} et n'est pas encore payée.`,
        "Veuillez la payer par carte sur sa page pour que votre abonnement continue."
      ]
    },
    payment_receipt: {
      subject: (f) => `${f.merchantName} : reçu de votre paiement de ${amt(f)}`,
      lines: (f) => [`Merci : nous avons bien reçu votre paiement de ${amt(f)} pour la facture${num(f)}.`]
    },
    payment_failed: {
      subject: (f) => `${f.merchantName} : votre paiement de ${amt(f)} a échoué`,
      lines: (f) => [
        `Nous n'avons pas pu débiter votre carte de ${amt(f)} pour la facture${num(f)}.`,
        f.ended
          ? "Votre abonnement est résilié."
          : "Veuillez mettre à jour votre carte pour que votre abonnement continue."
      ]
    },
    trial_ending: {
      subject: (f) => `${f.merchantName} : votre essai se termine le ${f.date ?? ""}`,
      lines: (f) => [
        `Votre essai se termine le ${f.date ?? ""}. Votre abonnement continuera ensuite avec la carte enregistrée.`
      ]
    },
    card_expiring: {
      subject: (f) => `${f.merchantName} : votre carte expire bientôt`,
      lines: (f) => [
        `La carte enregistrée expire avant votre prochain renouvellement le ${f.date ?? ""}. Veuillez la mettre à jour.`
      ]
    },
    subscription_canceled: {
      subject: (f) => `${f.merchantName} : votre abonnement est résilié`,
      lines: () => ["Votre abonnement a été résilié. Nous regrettons de vous voir partir."]
    }
  }
}

const books: Record<NotificationLanguage, Phrasebook> = { en, de, fr }

/**
 * HTML-escapes a text.
 *
 * @since 0.1.0
 */
export const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

/**
 * Renders one message in one language.
 *
 * @since 0.1.0
 */
export const render = (kind: NotificationKind, language: NotificationLanguage, facts: MessageFacts): Rendered => {
  const book = books[language]
  const words = book.kinds[kind]
  const links: Array<readonly [string, string]> = []
  if (facts.portalUrl !== null && (kind === "payment_failed" || kind === "card_expiring"))
    links.push([book.updateCard, facts.portalUrl])
  if (
    facts.invoiceUrl !== null &&
    (kind === "invoice_issued" ||
      kind === "invoice_past_due" ||
      kind === "payment_receipt" ||
      kind === "payment_failed")
  )
    links.push([book.viewInvoice, facts.invoiceUrl])
  if (facts.pdfUrl !== null && (kind === "invoice_issued" || kind === "invoice_past_due" || kind === "payment_receipt"))
    links.push([book.downloadPdf, facts.pdfUrl])
  const subject = words.subject(facts)
  const lines = words.lines(facts)
  const text = [
    book.hello(facts.customerName),
    "",
    ...lines,
    ...(links.length > 0 ? ["", ...links.map(([label, url]) => `${label}: ${url}`)] : []),
    "",
    "—",
    facts.merchantName,
    book.footer(facts.merchantName),
    ""
  ].join("\n")
  const p = (s: string) => `<p style="margin:0 0 16px 0">${escapeHtml(s)}</p>`
  const button = ([label, url]: readonly [string, string]) =>
    `<p style="margin:0 0 12px 0"><a href="${escapeHtml(url)}" style="display:inline-block;padding:10px 18px;background:#1f2937;color:#ffffff;text-decoration:none;border-radius:6px">${escapeHtml(label)}</a></p>`
  const html = [
    `<!doctype html><html lang="${language}"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`,
    `<body style="margin:0;padding:24px;background:#f3f4f6;font-family:Helvetica,Arial,sans-serif;color:#111827">`,
    `<div style="max-width:560px;margin:0 auto;background:#ffffff;padding:24px;border-radius:8px">`,
    `<h1 style="font-size:18px;margin:0 0 16px 0">${escapeHtml(facts.merchantName)}</h1>`,
    p(book.hello(facts.customerName)),
    ...lines.map(p),
    ...links.map(button),
    `<p style="margin:24px 0 0 0;font-size:12px;color:#6b7280">${escapeHtml(book.footer(facts.merchantName))}</p>`,
    `</div></body></html>`
  ].join("\n")
  return { subject, html, text }
}
