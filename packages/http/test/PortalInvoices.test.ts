/**
 * The portal's invoices to pay: a customer's issued invoices still owed that their hosted page
 * takes a payment of, each with a Pay link to that page — a past-due renewal (retrying), the
 * failed renewal of an unpaid subscription (hard decline) — paid there with a new card, which
 * recovers the subscription; the paid invoices stay in the history.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Ports } from "@recur/core"
import { Effect, Layer } from "effect"
import { backends, serve } from "./client.js"

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
const card = (number: string) => ({ card_number: number, exp_month: "12", exp_year: "2030", cvc: "123" })

/** Every call of the payment gateway, by name: the sandbox's, counted. */
const gatewayCalls: Array<string> = []
const counting = Layer.effect(
  Ports.PaymentGateway,
  Effect.gen(function* () {
    const sandbox = yield* Ports.PaymentGateway
    const counted =
      (name: string, f: (...a: Array<unknown>) => unknown) =>
      (...args: Array<unknown>) => {
        gatewayCalls.push(name)
        return f(...args)
      }
    return Ports.PaymentGateway.of(
      Object.fromEntries(
        Object.entries(sandbox).map(([name, value]) => [
          name,
          typeof value === "function" ? counted(name, value as (...a: Array<unknown>) => unknown) : value
        ])
      ) as unknown as typeof sandbox
    )
  })
)

for (const [name, storage] of backends()) {
  describe(`the portal's invoices to pay (${name})`, { timeout: 180_000 }, () => {
    const api = serve(storage(), { payments: counting })
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const fresh = async () => (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
    /** A customer whose subscription (30.00 a month) was paid at checkout by `number`. */
    const customerWith = async (k: string, payer: string, number: string) => {
      const { priceId } = await api.priceOf(k)
      const s = await api.call("POST", "/api/v1/session", k, { payer_id: payer, line_items: [{ price_id: priceId }] })
      const id = (s.body as any).data.session_id as string
      const paid = await api.call("POST", `/checkout/${id}/pay`, null, card(number), { accept: "application/json" })
      expect(paid.status).toBe(200)
      const session = ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session
      return { customerId: session.customer_id as string, subscriptionId: session.subscription_id as string }
    }
    const portalPath = async (k: string, customerId: string, locale?: string) => {
      const r = await api.call("POST", "/api/v1/customer-portal/auth", k, {
        customer_id: customerId,
        ...(locale ? { locale } : {})
      })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      return new URL((r.body as any).data.portal_session.url as string).pathname
    }
    const page = async (path: string) => {
      const r = await api.handler(new Request(`http://localhost${path}`))
      return { status: r.status, html: await r.text() }
    }
    const subOf = async (k: string, id: string) =>
      ((await api.call("GET", `/api/v1/subscription/${id}`, k)).body as any).data.subscription
    const invoicesOf = async (k: string, subscriptionId: string) =>
      ((await api.call("GET", `/api/v1/invoices?subscription_id=${subscriptionId}`, k)).body as any).data
        .list as Array<any>
    /** The `#to-pay` section's rows: each invoice's id, and its Pay link's target. */
    const toPay = (html: string) =>
      [...html.matchAll(/<tr id="to-pay-(inv_[0-9a-z]+)">.*?<a class="pay" href="([^"]+)"/g)].map((m) => ({
        invoiceId: m[1]!,
        href: m[2]!.replace(/&amp;/g, "&")
      }))
    /** Pays an invoice on its hosted page (the Pay link's target) with `number`. */
    const payOnPage = (href: string, number: string) =>
      api.handler(
        new Request(`http://localhost${new URL(href).pathname}/pay`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: form(card(number))
        })
      )
    const advance = (k: string, at: string) =>
      api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: at })

    it("a past-due renewal is listed with its retry date and a Pay link; paid on its page, the subscription is active and the list empty", async () => {
      const k = await fresh()
      const ada = await customerWith(k, "ada", "4000000000000341")
      const bob = await customerWith(k, "bob", "4000000000000341")
      // nothing owed: no section
      expect((await page(await portalPath(k, ada.customerId))).html).not.toContain('id="to-pay"')
      await advance(k, "2026-02-01T00:00:10Z")
      // a portal link works for an hour: a new one after the renewal
      const path = await portalPath(k, ada.customerId)
      expect((await subOf(k, ada.subscriptionId)).status).toBe("past_due")
      const renewal = (await invoicesOf(k, ada.subscriptionId)).find((i) => i.invoice_type === "renewal")
      expect([renewal.biz_status, renewal.number]).toEqual(["retrying", expect.stringMatching(/^INV-/)])
      // the page asks the processor nothing
      const calls = gatewayCalls.length
      expect(gatewayCalls).toContain("charge")
      const { html } = await page(path)
      expect(gatewayCalls.slice(calls)).toEqual([])
      const rows = toPay(html)
      expect(rows).toEqual([{ invoiceId: renewal.invoice_id, href: renewal.hosted_invoice_url }])
      const row = /<tr id="to-pay-[^"]+">(.*?)<\/tr>/.exec(html)![1]!
      expect(row).toContain(renewal.number)
      expect(row).toContain("$30.00")
      expect(row).toContain("Payment failed — due")
      expect(row).toContain("Your card will be tried again on Feb 2, 2026.")
      expect(row).toContain(`aria-label="Pay invoice ${renewal.number}"`)
      // only this customer's: Bob's past-due invoice is not on Ada's page
      const bobRenewal = (await invoicesOf(k, bob.subscriptionId)).find((i) => i.invoice_type === "renewal")
      expect(html).not.toContain(bobRenewal.invoice_id)
      // the Pay link's page takes the payment
      const invoicePage = await api.handler(new Request(`http://localhost${new URL(rows[0]!.href).pathname}`))
      expect(await invoicePage.text()).toContain('id="pay-form"')
      const paid = await payOnPage(rows[0]!.href, "4242424242424242")
      expect(paid.status).toBe(303)
      expect((await subOf(k, ada.subscriptionId)).status).toBe("active")
      const after = (await invoicesOf(k, ada.subscriptionId)).find((i) => i.invoice_id === renewal.invoice_id)
      expect(after.biz_status).toBe("success")
      const now = (await page(path)).html
      expect(now).not.toContain('id="to-pay"')
      // both invoices stay in the history, paid
      const history = /<table id="invoices">(.*?)<\/table>/s.exec(now)![1]!
      expect(history).toContain("INV-000001")
      expect(history).toContain(renewal.number)
      expect(history.match(/<td>Paid<\/td>/g)).toHaveLength(2)
    })

    it("a hard-declined renewal (unpaid at once) is listed; paid on its page with a new card, the subscription recovers and renews on it", async () => {
      const k = await fresh()
      const eve = await customerWith(k, "eve", "4000000000000358")
      await advance(k, "2026-02-01T00:00:10Z")
      expect((await subOf(k, eve.subscriptionId)).status).toBe("unpaid")
      const failed = (await invoicesOf(k, eve.subscriptionId)).find((i) => i.invoice_type === "renewal")
      expect([failed.biz_status, failed.dunning?.decline_class, failed.dunning?.next_action]).toEqual([
        "failed",
        "hard",
        "new_payment_method"
      ])
      const path = await portalPath(k, eve.customerId)
      const { html } = await page(path)
      const rows = toPay(html)
      expect(rows).toEqual([{ invoiceId: failed.invoice_id, href: failed.hosted_invoice_url }])
      expect(html).not.toContain("tried again")
      // a declined new card: refused on the page; still unpaid, still listed
      const declined = await payOnPage(rows[0]!.href, "4000000000000002")
      expect(declined.status).toBe(400)
      expect(await declined.text()).toContain('class="error" role="alert"')
      expect((await subOf(k, eve.subscriptionId)).status).toBe("unpaid")
      expect(toPay((await page(path)).html)).toHaveLength(1)
      const paid = await payOnPage(rows[0]!.href, "5555555555554444")
      expect(paid.status).toBe(303)
      const sub = await subOf(k, eve.subscriptionId)
      expect(sub.status).toBe("active")
      const after = (await invoicesOf(k, eve.subscriptionId)).find((i) => i.invoice_id === failed.invoice_id)
      expect([after.biz_status, after.amount]).toEqual(["success", failed.amount])
      expect((await page(path)).html).not.toContain('id="to-pay"')
      // the next renewal charges the new card
      await advance(k, "2026-03-01T00:00:10Z")
      expect((await subOf(k, eve.subscriptionId)).status).toBe("active")
      const march = (await invoicesOf(k, eve.subscriptionId)).filter((i) => i.invoice_type === "renewal")
      expect(march.map((i) => i.biz_status)).toEqual(["success", "success"])
    })

    it("shown whatever the invoice history setting; a failed invoice no page can take (a canceled subscription's) is not listed", async () => {
      const k = await fresh()
      expect((await api.call("POST", "/api/v1/portal_settings", k, { invoice_history: false })).status).toBe(200)
      const ada = await customerWith(k, "ada", "4000000000000341")
      await advance(k, "2026-02-01T00:00:10Z")
      const path = await portalPath(k, ada.customerId)
      const { html } = await page(path)
      expect(html).not.toContain('id="invoices"')
      expect(toPay(html)).toHaveLength(1)
      // a merchant whose dunning ends in cancellation: the hard decline cancels, the invoice stays failed
      const k2 = await fresh()
      expect((await api.call("POST", "/api/v1/billing_settings", k2, { dunning_final_state: "canceled" })).status).toBe(
        200
      )
      const gus = await customerWith(k2, "gus", "4000000000000358")
      await advance(k2, "2026-02-01T00:00:10Z")
      expect((await subOf(k2, gus.subscriptionId)).status).toBe("canceled")
      const failed = (await invoicesOf(k2, gus.subscriptionId)).find((i) => i.invoice_type === "renewal")
      expect(failed.biz_status).toBe("failed")
      const gusPage = (await page(await portalPath(k2, gus.customerId))).html
      expect(gusPage).not.toContain('id="to-pay"')
      // still in the history, as failed
      expect(/<table id="invoices">(.*?)<\/table>/s.exec(gusPage)![1]).toContain(failed.number)
    })

    it("in German and French", async () => {
      const k = await fresh()
      const ada = await customerWith(k, "ada", "4000000000000341")
      await advance(k, "2026-02-01T00:00:10Z")
      const de = (await page(await portalPath(k, ada.customerId, "de-DE"))).html
      expect(de).toContain("<h2>Offene Rechnungen</h2>")
      expect(de).toContain("Ihre Karte wird am 02.02.2026 erneut belastet.")
      expect(de).toMatch(/aria-label="Rechnung INV-\d+ bezahlen">Bezahlen<\/a>/)
      const fr = (await page(await portalPath(k, ada.customerId, "fr-FR"))).html
      expect(fr).toContain("<h2>Factures à payer</h2>")
      expect(fr).toMatch(/aria-label="Payer la facture INV-\d+">Payer<\/a>/)
    })
  })
}
