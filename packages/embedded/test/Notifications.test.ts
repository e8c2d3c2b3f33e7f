/**
 * Customer notifications end to end over SMTP: a real SMTP server started by the test (the
 * `smtp-server` package, in process) receives what the SMTP notifier sends, and the messages are
 * read back with `mailparser`.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "@effect/vitest"
import { type ParsedMail, simpleParser } from "mailparser"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"
import { type BillingClient, createBilling } from "../src/index.js"

const card = (number: string) => ({ number, exp_month: 12, exp_year: 2099, cvc: "123" })

const received: Array<ParsedMail> = []
const refuse = { on: false }
let server: SMTPServer
let port = 0

beforeAll(async () => {
  server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onRcptTo: (_address, _session, callback) =>
      refuse.on ? callback(Object.assign(new Error("mailbox unavailable"), { responseCode: 550 })) : callback(),
    onData: (stream, _session, callback) => {
      simpleParser(stream).then(
        (mail) => {
          received.push(mail)
          callback()
        },
        (e) => callback(e as Error)
      )
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  port = (server.server.address() as AddressInfo).port
}, 10_000)

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
}, 10_000)

const to = (address: string) => received.filter((m) => m.to !== undefined && JSON.stringify(m.to).includes(address))

/** A sandbox merchant frozen on Jan 1, 2026, with a monthly price of 30.00. */
const merchantWithPrice = async (billing: BillingClient, name: string) => {
  const { merchant_id } = await billing.merchants.create({
    name,
    currency: "USD",
    frozen_time: Date.parse("2026-01-01T00:00:00Z")
  })
  const product = await billing.catalog.createProduct(merchant_id, { product_name: "Pro" })
  const price = await billing.catalog.createPrice(merchant_id, {
    name: "Pro monthly",
    product_id: product.product_id,
    currency: "USD",
    billing_type: "recurring",
    price_type: "flat_price",
    price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
  })
  return { merchantId: merchant_id, priceId: price.id }
}

describe("customer notifications over SMTP", () => {
  it("a receipt, a declined renewal with the portal's card-update link, and a cancellation, in French, read back from the SMTP server", async () => {
    const billing = await createBilling({
      storage: "memory",
      notifications: { smtp: { host: "127.0.0.1", port, secure: false, rejectUnauthorized: false } }
    })
    try {
      const { merchantId, priceId } = await merchantWithPrice(billing, "Société Générale de Thé")
      expect(await billing.notifications.settings(merchantId)).toBeNull()
      const settings = await billing.notifications.updateSettings(merchantId, {
        sender: "Thé Facturation <factures@the.test>",
        reply_to: "aide@the.test",
        language: "fr"
      })
      expect(settings).toMatchObject({ enabled: true, language: "fr", reply_to: "aide@the.test" })
      const session = await billing.checkout.createSession(merchantId, {
        email: "zoe@example.com",
        line_items: [{ price_id: priceId }]
      })
      const paid = await billing.checkout.pay(merchantId, session.session_id, card("4000000000000341"))
      await billing.advanceClock(merchantId, new Date("2026-01-01T00:00:01Z"))
      const [receipt] = to("zoe@example.com")
      expect(receipt?.subject).toBe("Société Générale de Thé : reçu de votre paiement de 30.00 USD")
      expect(receipt?.from?.text).toBe('"Thé Facturation" <factures@the.test>')
      expect(receipt?.replyTo?.text).toBe("aide@the.test")
      expect(receipt?.headers.get("content-language")).toBe("fr")
      expect(receipt?.messageId).toMatch(/^<ntf_[0-9a-z]{26}@recur>$/)
      const invoice = (await billing.invoices.list(merchantId, { limit: 10 })).list[0]!
      expect(receipt?.text).toContain(`Voir la facture: ${invoice.hosted_invoice_url}`)
      expect(receipt?.text).toContain(`Télécharger le PDF: ${invoice.invoice_pdf}`)
      expect(receipt?.html).toContain("Société Générale de Thé")
      // no external asset: no image, stylesheet or script, links only
      expect(receipt?.html).not.toMatch(/<img|<link|<script|src=|url\(/i)
      expect(receipt?.attachments).toEqual([])

      // the renewal declines: the customer is told, with a link into the portal's card form
      await billing.advanceClock(merchantId, new Date("2026-02-01T00:00:10Z"))
      const failed = to("zoe@example.com").filter((m) => m.subject?.includes("a échoué"))
      expect(failed).toHaveLength(1)
      expect(failed[0]!.text).toMatch(
        /Mettre à jour votre carte: http:\/\/localhost:4000\/portal\/card\/[A-Za-z0-9_-]+\/mch_[0-9a-z]+\/cus_[0-9a-z]+\/inv_[0-9a-z]+\/\d+/
      )
      expect((await billing.subscriptions.get(merchantId, paid.subscription!.id)).status).toBe("past_due")

      await billing.subscriptions.cancel(merchantId, paid.subscription!.id, {})
      await billing.advanceClock(merchantId, new Date("2026-02-01T00:00:20Z"))
      expect(to("zoe@example.com").map((m) => m.subject)).toEqual([
        "Société Générale de Thé : reçu de votre paiement de 30.00 USD",
        "Société Générale de Thé : votre paiement de 30.00 USD a échoué",
        "Société Générale de Thé : votre abonnement est résilié"
      ])
      const outbox = await billing.notifications.list(merchantId)
      expect(outbox.map((n) => [n.kind, n.status, n.attempts]).sort()).toEqual([
        ["payment_failed", "sent", 1],
        ["payment_receipt", "sent", 1],
        ["subscription_canceled", "sent", 1]
      ])
    } finally {
      await billing.close()
    }
  }, 60_000)

  it("a message the server refuses stays pending with the server's answer, and goes out once on a later attempt", async () => {
    const billing = await createBilling({
      storage: "memory",
      notifications: { smtp: { host: "127.0.0.1", port, secure: false, rejectUnauthorized: false } }
    })
    try {
      const { merchantId, priceId } = await merchantWithPrice(billing, "Acme")
      await billing.notifications.updateSettings(merchantId, { sender: "billing@acme.test" })
      refuse.on = true
      const session = await billing.checkout.createSession(merchantId, {
        email: "yan@example.com",
        line_items: [{ price_id: priceId }]
      })
      await billing.checkout.pay(merchantId, session.session_id, card("4242424242424242"))
      await billing.advanceClock(merchantId, new Date("2026-01-01T00:00:01Z"))
      const [pending] = await billing.notifications.list(merchantId)
      expect(pending).toMatchObject({ status: "pending", attempts: 1 })
      expect(pending!.last_error).toMatch(/^rejected: SMTP 550/)
      expect(to("yan@example.com")).toEqual([])
      refuse.on = false
      await billing.advanceClock(merchantId, new Date("2026-01-01T01:00:00Z"))
      expect(to("yan@example.com").map((m) => m.subject)).toEqual(["Acme: receipt for your payment of 30.00 USD"])
      expect((await billing.notifications.list(merchantId))[0]).toMatchObject({ status: "sent", attempts: 2 })
    } finally {
      refuse.on = false
      await billing.close()
    }
  }, 60_000)
})

describe("customer notifications without a notifier", () => {
  it("each message is skipped at once (no_notifier), said once per process, no error, no retry", async () => {
    const lines: Array<string> = []
    const spies = (["log", "info", "warn", "error", "debug"] as const).map((method) =>
      vi.spyOn(console, method).mockImplementation((...args: Array<unknown>) => {
        lines.push(args.map(String).join(" "))
      })
    )
    const billing = await createBilling({ storage: "memory", logLevel: "info" })
    try {
      const { merchantId, priceId } = await merchantWithPrice(billing, "No Mail Inc")
      await billing.notifications.updateSettings(merchantId, { sender: "billing@nomail.test" })
      for (const email of ["a@example.com", "b@example.com"]) {
        const session = await billing.checkout.createSession(merchantId, { email, line_items: [{ price_id: priceId }] })
        await billing.checkout.pay(merchantId, session.session_id, card("4000000000000341"))
      }
      await billing.advanceClock(merchantId, new Date("2026-01-01T00:00:01Z"))
      // the renewals decline: two more messages, skipped as well
      await billing.advanceClock(merchantId, new Date("2026-02-01T00:00:10Z"))
      const outbox = await billing.notifications.list(merchantId)
      expect(outbox.map((n) => [n.kind, n.status, n.attempts, n.last_error]).sort()).toEqual([
        ["payment_failed", "skipped", 0, "no_notifier"],
        ["payment_failed", "skipped", 0, "no_notifier"],
        ["payment_receipt", "skipped", 0, "no_notifier"],
        ["payment_receipt", "skipped", 0, "no_notifier"]
      ])
      const told = lines.filter((l) => l.includes("no notifier"))
      expect(told).toHaveLength(1)
      expect(lines.filter((l) => /ERROR|NotifierError|\n\s+at /.test(l))).toEqual([])
    } finally {
      await billing.close()
      for (const spy of spies) spy.mockRestore()
    }
  }, 60_000)
})
