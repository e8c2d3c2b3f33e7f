/**
 * Revenue recovery in a real browser: a renewal hard-declined (a stolen card) emails the customer
 * — the email read back from an SMTP server started by the test (`smtp-server`, in process) — and
 * its card-update link, opened in Chromium, leads to the portal's card form, where a new card
 * makes the subscription active again and pays the failed invoice. And the portal's invoices to
 * pay: Pay leads to the invoice's hosted page, which takes the new card.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type ParsedMail, simpleParser } from "mailparser"
import type { AddressInfo } from "node:net"
import type { Browser } from "playwright-core"
import { SMTPServer } from "smtp-server"
import { caller, shot, stage } from "./harness.js"

const received: Array<ParsedMail> = []
let smtp: SMTPServer
let browser: Browser
let base = ""
let key = ""
let close = async () => {}

beforeAll(async () => {
  smtp = new SMTPServer({
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
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve))
  const port = (smtp.server.address() as AddressInfo).port
  const s = await stage({
    engine: { notifications: { smtp: { host: "127.0.0.1", port, secure: false, rejectUnauthorized: false } } }
  })
  ;({ base, browser, close } = s)
  key = await s.merchantKey({ name: "Recovery Shop", currency: "USD", frozen_time: Date.parse("2026-01-01T00:00:00Z") })
}, 120_000)

afterAll(async () => {
  await close()
  await new Promise<void>((resolve) => smtp.close(() => resolve()))
}, 60_000)

const call = caller("portal-recovery", () => ({ base, key }))

/** The messages the SMTP server received for `address`, waiting up to `ms` for at least `count`. */
const mailTo = async (address: string, count: number, ms = 10_000) => {
  const mine = () => received.filter((m) => JSON.stringify(m.to ?? "").includes(address))
  for (const until = Date.now() + ms; mine().length < count && Date.now() < until; )
    await new Promise((resolve) => setTimeout(resolve, 50))
  return mine()
}

/** A customer (`email`) subscribed to a 25.00 monthly price, paid at checkout with `number`. */
const subscribe = async (email: string, number: string) => {
  const product = await call("POST", "/api/v1/products", { product_name: "Studio" })
  const price = await call("POST", "/api/v1/prices", {
    name: "Studio monthly",
    product_id: product.data.product_id,
    currency: "USD",
    billing_type: "recurring",
    price_type: "flat_price",
    price_plan: { billing_cycle_unit: "month", base_price_val: "25.00" }
  })
  const session = await call("POST", "/api/v1/session", { email, line_items: [{ price_id: price.data.price_id }] })
  const paid = await fetch(`${base}/checkout/${session.data.session_id}/pay`, {
    method: "POST",
    headers: { accept: "application/json", "content-type": "application/json" },
    body: JSON.stringify({ card_number: number, exp_month: "12", exp_year: "2030", cvc: "123" })
  })
  expect(paid.status).toBe(200)
  const s = (await call("GET", `/api/v1/session/${session.data.session_id}`)).data.session
  return { customerId: s.customer_id as string, subscriptionId: s.subscription_id as string }
}

const renewalOf = async (subscriptionId: string) =>
  ((await call("GET", `/api/v1/invoices?subscription_id=${subscriptionId}`)).data.list as Array<any>).find(
    (i) => i.invoice_type === "renewal"
  )
const statusOf = async (subscriptionId: string) =>
  (await call("GET", `/api/v1/subscription/${subscriptionId}`)).data.subscription.status as string

describe("revenue recovery in Chromium", () => {
  it("a hard-declined renewal emails the customer; the email's card link opens the portal's card form; a new card there recovers the subscription and pays the invoice", async () => {
    expect(
      (await call("POST", "/api/v1/notification_settings", { sender: "Recovery Shop <billing@recovery.test>" })).data
        .notification_settings.enabled
    ).toBe(true)
    const mia = await subscribe("mia@example.com", "4000000000000358")
    // the renewal: the saved card is now reported stolen, a hard decline — no retry, unpaid at once
    await call("POST", "/api/v1/test_helpers/advance_clock", { frozen_time: "2026-02-01T00:00:10Z" })
    expect(await statusOf(mia.subscriptionId)).toBe("unpaid")
    const failed = await renewalOf(mia.subscriptionId)
    expect([failed.biz_status, failed.dunning.decline_class, failed.dunning.next_action]).toEqual([
      "failed",
      "hard",
      "new_payment_method"
    ])
    const mail = (await mailTo("mia@example.com", 2)).find((m) => m.subject?.includes("failed"))
    expect(mail?.subject).toBe("Recovery Shop: your payment of 25.00 USD failed")
    expect(mail?.from?.text).toBe('"Recovery Shop" <billing@recovery.test>')
    const link = new RegExp(`Update your card: (${base.replace(/[.]/g, "\\.")}/portal/card/\\S+)`).exec(
      mail?.text ?? ""
    )?.[1]
    expect(link, mail?.text).toBeDefined()
    expect(mail?.html).toContain(`href="${link}"`)

    // read a day later, in the browser
    await call("POST", "/api/v1/test_helpers/advance_clock", { frozen_time: "2026-02-02T09:00:00Z" })
    const page = await browser.newPage()
    await page.goto(link!)
    expect(page.url()).toMatch(new RegExp(`^${base}/portal/bps_[0-9a-z]{26}/`))
    const portal = page.url()
    expect(await page.textContent(".status")).toContain("Unpaid")
    // the failed invoice is there to pay too
    expect(await page.textContent("#open-invoices")).toContain(failed.number)
    // the card form is open with the focus in it: a new card typed with the keyboard
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.name)).toBe("card_number")
    await page.keyboard.type("5555 5555 5555 4444")
    for (const value of ["11", "2031", "321"]) {
      await page.keyboard.press("Tab")
      await page.keyboard.type(value)
    }
    await Promise.all([
      page.waitForResponse((r) => r.url() === portal && r.request().method() === "GET"),
      page.keyboard.press("Enter")
    ])
    await page.waitForLoadState()
    expect(await page.textContent(".status")).toContain("Active")
    expect(await page.textContent(".sub")).toContain("•••• 4444, expires 11/2031")
    expect(await page.locator("#to-pay").count()).toBe(0)
    await page.close()
    // over REST: active again, the failed invoice paid (the same invoice, its number kept)
    expect(await statusOf(mia.subscriptionId)).toBe("active")
    const paid = await renewalOf(mia.subscriptionId)
    expect([paid.invoice_id, paid.number, paid.biz_status, paid.amount]).toEqual([
      failed.invoice_id,
      failed.number,
      "success",
      "25.00"
    ])
    // and the customer gets the receipt of the recovered payment (sent by the worker, which a
    // frozen sandbox clock runs when it is advanced)
    await call("POST", "/api/v1/test_helpers/advance_clock", { frozen_time: "2026-02-02T09:00:01Z" })
    const receipts = (await mailTo("mia@example.com", 3)).filter((m) => m.subject?.includes("receipt"))
    expect(receipts).toHaveLength(2)
    expect(receipts[1]?.text).toContain(paid.hosted_invoice_url)
  })

  it("the portal lists the invoices to pay; Pay opens the invoice's page, where a new card pays it and recovers the subscription", async () => {
    const leo = await subscribe("leo@example.com", "4000000000000358")
    // the next renewal of this subscription, a month after its checkout
    const sub = (await call("GET", `/api/v1/subscription/${leo.subscriptionId}`)).data.subscription
    await call("POST", "/api/v1/test_helpers/advance_clock", {
      frozen_time: new Date(Date.parse(sub.next_invoice_date) + 10_000).toISOString().replace(/\.\d{3}Z$/, "Z")
    })
    expect(await statusOf(leo.subscriptionId)).toBe("unpaid")
    const failed = await renewalOf(leo.subscriptionId)
    const link = (await call("POST", "/api/v1/customer-portal/auth", { customer_id: leo.customerId })).data
      .portal_session.url as string
    const page = await browser.newPage()
    await page.goto(link)
    const row = page.locator(`#to-pay-${failed.invoice_id}`)
    expect(await row.textContent()).toContain(failed.number)
    expect(await row.textContent()).toContain("$25.00")
    await page.screenshot({ path: shot("portal-to-pay.png"), fullPage: true })
    // Pay, from the keyboard: the invoice's hosted page
    await page.focus(`#to-pay-${failed.invoice_id} a.pay`)
    await Promise.all([page.waitForURL(failed.hosted_invoice_url), page.keyboard.press("Enter")])
    expect(await page.textContent("#number")).toBe(failed.number)
    await page.fill("#card_number", "4242 4242 4242 4242")
    await page.fill("#exp_month", "12")
    await page.fill("#exp_year", "2030")
    await page.fill("#cvc", "123")
    await Promise.all([
      page.waitForResponse((r) => r.url() === failed.hosted_invoice_url && r.request().method() === "GET"),
      page.click("#pay")
    ])
    expect(await page.textContent("#facts")).toContain("Paid")
    expect(await page.locator("#pay-form").count()).toBe(0)
    // back in the portal: nothing to pay, the subscription active, the invoice paid in the history
    await page.goto(link)
    expect(await page.locator("#to-pay").count()).toBe(0)
    expect(await page.textContent(".status")).toContain("Active")
    expect(await page.textContent("#invoices")).toContain(failed.number)
    await page.close()
    expect(await statusOf(leo.subscriptionId)).toBe("active")
    expect((await renewalOf(leo.subscriptionId)).biz_status).toBe("success")
  })
})
