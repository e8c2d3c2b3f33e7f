/**
 * Sent invoices' emails over SMTP (issue 34, item 5): through the facade, a customer whose
 * invoices are sent with 30-day terms; the renewal's invoice is emailed with its hosted page, its
 * PDF, amount and due date, then a past-due reminder — read back from an SMTP server started by
 * the test (`smtp-server`, in process). Paying on the page is covered over REST
 * (packages/http/test/SendInvoice.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type ParsedMail, simpleParser } from "mailparser"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"
import { createBilling } from "../src/index.js"

const received: Array<ParsedMail> = []
let server: SMTPServer
let port = 0

beforeAll(async () => {
  server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
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

describe("sent invoices over SMTP", () => {
  it("a customer's send_invoice: the renewal emailed in German with its page, PDF, amount and due date, then a past-due reminder", async () => {
    const billing = await createBilling({
      storage: "memory",
      notifications: { smtp: { host: "127.0.0.1", port, secure: false, rejectUnauthorized: false } }
    })
    try {
      const { merchant_id: m } = await billing.merchants.create({
        name: "Kaffee GmbH",
        currency: "EUR",
        frozen_time: Date.parse("2026-01-01T00:00:00Z")
      })
      const product = await billing.catalog.createProduct(m, { product_name: "Bohnen" })
      const price = await billing.catalog.createPrice(m, {
        name: "Bohnen monatlich",
        product_id: product.product_id,
        currency: "EUR",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
      })
      await billing.notifications.updateSettings(m, { sender: "rechnung@kaffee.test", language: "de" })
      // refused: nothing is created
      await expect(
        billing.customers.create(m, { payer_id: "k-0", collection_method: "send_invoice" })
      ).rejects.toMatchObject({ param: "days_until_due" })
      const customer = await billing.customers.create(m, { payer_id: "k-1" })
      await billing.customers.update(m, customer.customer_id, {
        email: "jana@example.com",
        collection_method: "send_invoice",
        days_until_due: 30
      })
      const session = await billing.checkout.createSession(m, {
        payer_id: "k-1",
        line_items: [{ price_id: price.id }]
      })
      const paid = await billing.checkout.pay(m, session.session_id, {
        number: "4242424242424242",
        exp_month: 12,
        exp_year: 2099,
        cvc: "123"
      })
      const sub = paid.subscription!.id
      expect(await billing.subscriptions.setCollection(m, sub, { collection_method: null })).toMatchObject({
        collection_method: null,
        effective_collection_method: "send_invoice",
        effective_days_until_due: 30
      })
      await billing.advanceClock(m, new Date("2026-02-01T00:00:00Z"))
      const renewal = (await billing.invoices.list(m, { subscription_id: sub })).list.find(
        (i) => i.invoice_type === "renewal"
      )!
      expect(renewal).toMatchObject({ biz_status: "open", collection_method: "send_invoice" })
      const issued = to("jana@example.com").find((mail) => mail.subject?.includes("Rechnung"))
      expect(issued?.subject).toBe(`Kaffee GmbH: Rechnung ${renewal.number} über 30.00 EUR`)
      expect(issued?.text).toContain("Sie ist am 2026-03-03 fällig.")
      expect(issued?.text).toContain(`Rechnung ansehen: ${renewal.hosted_invoice_url}`)
      expect(issued?.text).toContain(`PDF herunterladen: ${renewal.invoice_pdf}`)
      expect(issued?.html).toContain(renewal.hosted_invoice_url!)
      expect(issued?.html).not.toMatch(/<img|<link|<script|src=|url\(/i)
      await billing.advanceClock(m, new Date("2026-03-03T00:00:01Z"))
      expect((await billing.subscriptions.get(m, sub)).status).toBe("past_due")
      const late = to("jana@example.com").filter((mail) => mail.subject?.includes("überfällig"))
      expect(late.map((mail) => mail.subject)).toEqual([
        `Kaffee GmbH: Rechnung ${renewal.number} über 30.00 EUR ist überfällig`
      ])
      expect(late[0]!.text).toContain("war am 2026-03-03 fällig")
      // the merchant's dunning days (1, 3, 5, 7 by default): a reminder on each, then unpaid
      await billing.advanceClock(m, new Date("2026-03-11T00:00:00Z"))
      expect(to("jana@example.com").filter((mail) => mail.subject?.includes("überfällig"))).toHaveLength(5)
      expect((await billing.subscriptions.get(m, sub)).status).toBe("unpaid")
      const kinds = (await billing.notifications.list(m)).map((n) => n.kind).sort()
      // March's renewal (on Mar 1, before February's invoice was due) was sent too
      expect(kinds.filter((k) => k.startsWith("invoice"))).toEqual([
        "invoice_issued",
        "invoice_issued",
        ...Array.from({ length: 5 }, () => "invoice_past_due")
      ])
    } finally {
      await billing.close()
    }
  }, 60_000)
})
