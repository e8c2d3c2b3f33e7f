import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Browser } from "playwright-core"
import { caller, shot, stage } from "./harness.js"

// The customer portal in a real browser: an unpaid customer comes back with a new card, using
// only the keyboard; then cancels at the end of the period and changes their mind.
let browser: Browser
let base = ""
let key = ""
let close = async () => {}

beforeAll(async () => {
  const s = await stage({ routes: { "/account": "<h1>Your account</h1>" } })
  ;({ base, browser, close } = s)
  key = await s.merchantKey({ name: "Portal Shop", currency: "USD", frozen_time: Date.parse("2026-01-01T00:00:00Z") })
})

afterAll(() => close())

const call = caller("portal", () => ({ base, key }))

describe("the customer portal in Chromium", () => {
  it("an unpaid customer saves a new card with the keyboard and is active again; cancels and keeps the subscription", async () => {
    const product = await call("POST", "/api/v1/products", { product_name: "Studio" })
    const price = await call("POST", "/api/v1/prices", {
      name: "Studio monthly",
      product_id: product.data.product_id,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", base_price_val: "25.00" }
    })
    const session = await call("POST", "/api/v1/session", {
      payer_id: "portal-1",
      line_items: [{ price_id: price.data.price_id }]
    })
    const paid = await fetch(`${base}/checkout/${session.data.session_id}/pay`, {
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify({ card_number: "4000000000000341", exp_month: "12", exp_year: "2030", cvc: "123" })
    })
    expect(paid.status).toBe(200)
    const s = (await call("GET", `/api/v1/session/${session.data.session_id}`)).data.session
    await call("POST", "/api/v1/test_helpers/advance_clock", { frozen_time: "2026-02-20T00:00:00Z" })
    const link = (
      await call("POST", "/api/v1/customer-portal/auth", {
        customer_id: s.customer_id,
        return_url: `${base}/account`,
        flow: "payment_method_update"
      })
    ).data.portal_session.url as string
    const page = await browser.newPage()
    await page.goto(link)
    expect(await page.textContent(".status")).toContain("Unpaid")
    await page.screenshot({ path: shot("portal-unpaid.png"), fullPage: true })
    // the card form has the focus (flow payment_method_update)
    await page.keyboard.type("4242 4242 4242 4242")
    for (const value of ["12", "2030", "123"]) {
      await page.keyboard.press("Tab")
      await page.keyboard.type(value)
    }
    await Promise.all([
      page.waitForResponse((r) => r.url() === link && r.request().method() === "GET"),
      page.keyboard.press("Enter")
    ])
    await page.waitForLoadState()
    expect(await page.textContent(".status")).toContain("Active")
    expect(await page.textContent(".sub")).toContain("visa •••• 4242, expires 12/2030")
    expect((await call("GET", `/api/v1/subscription/${s.subscription_id}`)).data.subscription.status).toBe("active")
    // cancel at the end of the period, then keep it
    await Promise.all([
      page.waitForResponse((r) => r.url() === link && r.request().method() === "GET"),
      page.click("text=Cancel at the end of the period")
    ])
    expect(await page.textContent(".sub")).toContain("Ends on")
    await Promise.all([
      page.waitForResponse((r) => r.url() === link && r.request().method() === "GET"),
      page.click("text=Keep my subscription")
    ])
    expect(await page.textContent(".sub")).toContain("next invoice on")
    await page.screenshot({ path: shot("portal-active.png"), fullPage: true })
    // the invoice's PDF opens from the portal
    const pdfHref = await page.getAttribute("#invoices a:text('PDF')", "href")
    const pdf = await fetch(pdfHref!)
    expect([pdf.status, pdf.headers.get("content-type")]).toEqual([200, "application/pdf"])
    await Promise.all([page.waitForURL(`${base}/account`), page.click("#return")])
    await page.close()
  })

  it("a customer switches plan with the keyboard: the amount shown before confirming is the amount charged", async () => {
    const product = await call("POST", "/api/v1/products", { product_name: "Team" })
    const plan = async (name: string, amount: string) =>
      (
        await call("POST", "/api/v1/prices", {
          name,
          product_id: product.data.product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: amount }
        })
      ).data.price_id as string
    const basic = await plan("Team Basic", "30.00")
    const pro = await plan("Team Pro", "50.00")
    await call("POST", "/api/v1/tax_rates", { name: "Sales tax", percentage: "8.875", country: "US", region: "NY" })
    expect((await call("POST", "/api/v1/portal_settings", { switch_prices: [basic, pro] })).data.switch_prices).toEqual(
      [basic, pro]
    )
    const clock = (await call("GET", "/api/v1/test_helpers/clock")).data.frozen_time as string
    const session = await call("POST", "/api/v1/session", {
      payer_id: "portal-2",
      line_items: [{ price_id: basic }],
      billing_address: { country_code: "US", province_code: "NY" }
    })
    const paid = await fetch(`${base}/checkout/${session.data.session_id}/pay`, {
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify({ card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" })
    })
    expect(paid.status).toBe(200)
    const s = (await call("GET", `/api/v1/session/${session.data.session_id}`)).data.session
    // ten days into the period
    await call("POST", "/api/v1/test_helpers/advance_clock", {
      frozen_time: new Date(Date.parse(clock) + 10 * 86_400_000).toISOString()
    })
    const link = (await call("POST", "/api/v1/customer-portal/auth", { customer_id: s.customer_id })).data
      .portal_session.url as string
    const page = await browser.newPage()
    await page.goto(link)
    // open "Change plan" and review the switch with the keyboard only
    await page.focus("details:has(.switch-form) summary")
    await page.keyboard.press("Enter")
    await page.keyboard.press("Tab")
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.id)).toMatch(/^price_/)
    await page.keyboard.press("Tab")
    await Promise.all([page.waitForURL(/\/switch\?price_id=/), page.keyboard.press("Enter")])
    const shown = (await page.textContent("#due-now"))!.replace(/[^0-9.]/g, "")
    expect(await page.textContent("h1")).toBe("Change from Team Basic to Team Pro")
    await page.screenshot({ path: shot("portal-switch-preview.png"), fullPage: true })
    await page.focus("#confirm")
    await Promise.all([
      page.waitForResponse((r) => r.url() === link && r.request().method() === "GET"),
      page.keyboard.press("Enter")
    ])
    await page.waitForLoadState()
    expect(await page.textContent(".sub h2")).toBe("Team Pro")
    const invoices = (await call("GET", `/api/v1/invoices?subscription_id=${s.subscription_id}`)).data
      .list as Array<any>
    const upgrade = invoices.find((i) => i.invoice_type === "upgrade")
    expect([upgrade.amount, upgrade.biz_status]).toEqual([shown, "success"])
    expect(Number(upgrade.tax_amount)).toBeGreaterThan(0)
    const trade = (await call("GET", `/api/v1/trade/${upgrade.trade_id}`)).data.trade
    expect([trade.amount, trade.trade_status]).toEqual([shown, "succeeded"])
    // the next invoice shown is the upcoming invoice the engine computes
    const next = (await call("GET", `/api/v1/subscription/${s.subscription_id}/upcoming_invoice`)).data.upcoming_invoice
    expect(await page.textContent(".upcoming")).toContain(next.amount)
    await page.screenshot({ path: shot("portal-switched.png"), fullPage: true })
    await page.close()
  })

  it("the portal in German (the session's locale)", async () => {
    const customers = (await call("GET", "/api/v1/subscription?limit=1")).data.list as Array<any>
    const link = (
      await call("POST", "/api/v1/customer-portal/auth", { customer_id: customers[0].customer_id, locale: "de-DE" })
    ).data.portal_session.url as string
    const page = await browser.newPage()
    await page.goto(link)
    expect(await page.textContent("h1")).toBe("Ihre Abrechnung")
    expect(await page.getAttribute("html", "lang")).toBe("de-DE")
    await page.screenshot({ path: shot("portal-de.png"), fullPage: true })
    await page.close()
  })

  it("a customer changes an add-on's seats with the keyboard: the next invoice before and after, pending for the next cycle", async () => {
    const price = async (product_name: string, name: string, amount: string) => {
      const product = await call("POST", "/api/v1/products", { product_name })
      return (
        await call("POST", "/api/v1/prices", {
          name,
          product_id: product.data.product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: amount }
        })
      ).data.price_id as string
    }
    const team = await price("Workspace", "Workspace", "49.00")
    const seats = await price("Seats", "Seat", "12.00")
    await call("POST", "/api/v1/portal_settings", { adjust_quantities: [{ price_id: seats, min: 1, max: 10 }] })
    const session = await call("POST", "/api/v1/session", {
      payer_id: "portal-3",
      line_items: [{ price_id: team }, { price_id: seats, quantity: "2" }]
    })
    const paid = await fetch(`${base}/checkout/${session.data.session_id}/pay`, {
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify({ card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" })
    })
    expect(paid.status).toBe(200)
    const s = (await call("GET", `/api/v1/session/${session.data.session_id}`)).data.session
    const link = (await call("POST", "/api/v1/customer-portal/auth", { customer_id: s.customer_id })).data
      .portal_session.url as string
    const page = await browser.newPage()
    await page.goto(link)
    const sub = page.locator(`#sub-${s.subscription_id}`)
    expect(await sub.locator(".items").textContent()).toContain("Seat × 2")
    await sub.locator("details:has(.quantity-form) summary").focus()
    await page.keyboard.press("Enter")
    await page.keyboard.press("Tab")
    await page.keyboard.press("Control+A")
    await page.keyboard.type("4")
    await Promise.all([page.waitForURL(/\/quantity\?item_id=.*&quantity=4/), page.keyboard.press("Enter")])
    expect(await page.textContent("h1")).toBe("Change Seat from 2 to 4")
    expect(await page.textContent("#before")).toBe("$73.00")
    expect(await page.textContent("#after")).toBe("$97.00")
    await page.focus("#confirm")
    await Promise.all([
      page.waitForResponse((r) => r.url() === link && r.request().method() === "GET"),
      page.keyboard.press("Enter")
    ])
    await page.waitForLoadState()
    expect(await sub.locator(".pending").textContent()).toContain("4 from")
    const next = (await call("GET", `/api/v1/subscription/${s.subscription_id}/upcoming_invoice`)).data.upcoming_invoice
    expect(next.amount).toBe("97.00")
    await page.close()
  })
})
