import { describe, expect, it } from "@effect/vitest"
import { Notification, Templates } from "@recur/core"

const facts: Templates.MessageFacts = {
  merchantName: "Acme <Tools> & Co",
  customerName: "Zoë",
  amount: "30.00 EUR",
  invoiceNumber: "INV-000042",
  invoiceUrl: "https://pay.example/invoice/inv_1/sig?a=1&b=2",
  pdfUrl: "https://pay.example/invoice/inv_1/sig/pdf",
  portalUrl: "https://pay.example/portal/bps_1/sig",
  date: "2026-03-01"
}

const subjects: Record<Notification.NotificationLanguage, Record<Notification.NotificationKind, string>> = {
  en: {
    invoice_issued: "Acme <Tools> & Co: invoice INV-000042 for 30.00 EUR",
    invoice_past_due: "Acme <Tools> & Co: invoice INV-000042 for 30.00 EUR is past due",
    payment_receipt: "Acme <Tools> & Co: receipt for your payment of 30.00 EUR",
    payment_failed: "Acme <Tools> & Co: your payment of 30.00 EUR failed",
    trial_ending: "Acme <Tools> & Co: your trial ends on 2026-03-01",
    card_expiring: "Acme <Tools> & Co: your card expires soon",
    subscription_canceled: "Acme <Tools> & Co: your subscription is canceled"
  },
  de: {
    invoice_issued: "Acme <Tools> & Co: Rechnung INV-000042 über 30.00 EUR",
    invoice_past_due: "Acme <Tools> & Co: Rechnung INV-000042 über 30.00 EUR ist überfällig",
    payment_receipt: "Acme <Tools> & Co: Zahlungsbestätigung über 30.00 EUR",
    payment_failed: "Acme <Tools> & Co: Ihre Zahlung von 30.00 EUR ist fehlgeschlagen",
    trial_ending: "Acme <Tools> & Co: Ihr Testzeitraum endet am 2026-03-01",
    card_expiring: "Acme <Tools> & Co: Ihre Karte läuft bald ab",
    subscription_canceled: "Acme <Tools> & Co: Ihr Abonnement wurde gekündigt"
  },
  fr: {
    invoice_issued: "Acme <Tools> & Co : facture INV-000042 de 30.00 EUR",
    invoice_past_due: "Acme <Tools> & Co : la facture INV-000042 de 30.00 EUR est en retard",
    payment_receipt: "Acme <Tools> & Co : reçu de votre paiement de 30.00 EUR",
    payment_failed: "Acme <Tools> & Co : votre paiement de 30.00 EUR a échoué",
    trial_ending: "Acme <Tools> & Co : votre essai se termine le 2026-03-01",
    card_expiring: "Acme <Tools> & Co : votre carte expire bientôt",
    subscription_canceled: "Acme <Tools> & Co : votre abonnement est résilié"
  }
}

/** Which links each message carries. */
const links: Record<Notification.NotificationKind, ReadonlyArray<keyof Templates.MessageFacts>> = {
  invoice_issued: ["invoiceUrl", "pdfUrl"],
  invoice_past_due: ["invoiceUrl", "pdfUrl"],
  payment_receipt: ["invoiceUrl", "pdfUrl"],
  payment_failed: ["portalUrl", "invoiceUrl"],
  trial_ending: [],
  card_expiring: ["portalUrl"],
  subscription_canceled: []
}

describe("notification templates", () => {
  for (const language of Notification.NotificationLanguage.literals)
    it(`every message renders in ${language}: subject, HTML and text, the merchant's name, its links, no external asset`, () => {
      for (const kind of Notification.allKinds) {
        const r = Templates.render(kind, language, facts)
        expect(r.subject).toBe(subjects[language][kind])
        expect(r.text).toContain("Acme <Tools> & Co")
        expect(r.text).toContain("Zoë")
        expect(r.html).toContain(`<html lang="${language}">`)
        // the merchant's name escaped, never raw markup
        expect(r.html).toContain("Acme &lt;Tools&gt; &amp; Co")
        expect(r.html).not.toContain("<Tools>")
        expect(r.html).not.toMatch(/<img|<link|<script|<style|src=|url\(|@import/i)
        for (const field of ["invoiceUrl", "pdfUrl", "portalUrl"] as const) {
          const url = facts[field]!
          const shown = links[kind].includes(field)
          expect(r.text.includes(url), `${language} ${kind} text ${field}`).toBe(shown)
          expect(r.html.includes(`href="${Templates.escapeHtml(url)}"`), `${language} ${kind} html ${field}`).toBe(
            shown
          )
        }
      }
    })

  it("a message without the customer's name or an invoice number still reads", () => {
    const r = Templates.render("payment_receipt", "en", { ...facts, customerName: null, invoiceNumber: null })
    expect(r.text.startsWith("Hello,\n")).toBe(true)
    expect(r.text).toContain("for invoice.")
  })
})
