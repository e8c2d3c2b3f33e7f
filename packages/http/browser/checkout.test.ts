import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Browser } from "playwright-core"
import { shot, stage } from "./harness.js"

// A real browser (Debian's Chromium) pays on the hosted checkout page served over real HTTP.
let browser: Browser
let base = ""
let key = ""
let close = async () => {}

beforeAll(async () => {
  const s = await stage({ routes: { "/thanks": "<h1>Thanks!</h1>" } })
  ;({ base, browser, close } = s)
  key = await s.merchantKey({ name: "Browser", currency: "USD" })
})

afterAll(() => close())

let n = 0
const api = async (path: string, body: unknown) =>
  (await (
    await fetch(`${base}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "request-id": `b-${++n}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
  ).json()) as { data: Record<string, string> }

const newSession = async (extra: Record<string, unknown> = {}, lineItem: Record<string, unknown> = {}) => {
  const product = await api("/api/v1/products", { product_name: "Pro" })
  const price = await api("/api/v1/prices", {
    name: "Pro",
    product_id: product.data.product_id,
    currency: "USD",
    billing_type: "recurring",
    price_type: "flat_price",
    price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
  })
  return (
    await api("/api/v1/session", {
      payer_id: `web-${n}`,
      line_items: [{ price_id: price.data.price_id, ...lineItem }],
      return_url: `${base}/thanks`,
      ...extra
    })
  ).data
}

describe("hosted checkout in Chromium", () => {
  it("pays with 4242 using only the keyboard and lands on return_url", async () => {
    const session = await newSession()
    const page = await browser.newPage()
    await page.goto(session.session_url!)
    expect(await page.textContent(".amount")).toContain("$30.00")
    await page.focus("#card_number")
    await page.keyboard.type("4242 4242 4242 4242")
    for (const value of ["12", "2030", "123", "Ada Lovelace"]) {
      await page.keyboard.press("Tab")
      await page.keyboard.type(value)
    }
    await Promise.all([page.waitForURL(`${base}/thanks`), page.keyboard.press("Enter")])
    expect(await page.textContent("h1")).toBe("Thanks!")
    await page.close()
  })

  it("shows a decline, then goes through the 3-D Secure challenge", async () => {
    const session = await newSession()
    const page = await browser.newPage()
    await page.goto(session.session_url!)
    const fill = async (card: string) => {
      await page.fill("#card_number", card)
      await page.fill("#exp_month", "12")
      await page.fill("#exp_year", "2030")
      await page.fill("#cvc", "123")
      await page.click("button[type=submit]")
    }
    await fill("4000000000000002")
    expect(await page.textContent("[role=alert]")).toContain("declined")
    await fill("4000000000003220")
    await page.waitForURL(/\/sandbox\/3ds\//)
    await Promise.all([page.waitForURL(`${base}/thanks`), page.click("text=Complete authentication")])
    await page.close()
  })

  it("a payer sees who sells what, steps the quantity with the keyboard, and is charged what the page showed", async () => {
    const session = await newSession(
      {
        cancel_url: `${base}/cancelled`,
        terms_of_service_url: "https://shop.example/terms",
        privacy_policy_url: "https://shop.example/privacy",
        allow_discount_codes: true
      },
      { quantity: "1", quantity_editable: true, quantity_min: "1", quantity_max: "3" }
    )
    await api("/api/v1/discounts", { name: "Welcome", code: "WELCOME10", discount_type: "percentage", percent_off: 10 })
    const page = await browser.newPage({ viewport: { width: 520, height: 900 } })
    await page.goto(session.session_url!)
    expect(await page.textContent("#merchant")).toBe("Browser")
    expect(await page.textContent("#product")).toBe("Pro")
    expect(await page.textContent("#then")).toBe("Billed every month")
    expect(await page.isDisabled("button[aria-label='Decrease quantity']")).toBe(true)
    // keyboard only: focus "+" and press Enter; the page comes back with 2 and its new amount
    await page.focus("button[aria-label='Increase quantity']")
    await Promise.all([page.waitForLoadState("load"), page.keyboard.press("Enter")])
    await page.waitForSelector("#quantity:text('2')")
    expect(await page.textContent("#due")).toBe("$60.00")
    expect(await page.textContent("#pay")).toBe("Pay $60.00")
    // a discount code, typed as a payer types it: the page comes back with the new total
    await page.fill("#discount_code", "welcome10")
    await Promise.all([page.waitForLoadState("load"), page.click("#apply")])
    await page.waitForSelector("#discount")
    expect(await page.textContent("#due")).toBe("$54.00")
    await page.screenshot({ path: shot("checkout-en.png"), fullPage: true })
    await page.fill("#card_number", "4242424242424242")
    await page.fill("#exp_month", "12")
    await page.fill("#exp_year", "2030")
    await page.fill("#cvc", "123")
    await Promise.all([page.waitForURL(`${base}/thanks`), page.click("#pay")])
    const paid = (await (
      await fetch(`${base}/api/v1/session/${session.session_id}`, {
        headers: { authorization: `Bearer ${key}`, "request-id": `b-${++n}` }
      })
    ).json()) as { data: { session: { subscription_id: string } } }
    const sub = (await (
      await fetch(`${base}/api/v1/subscription/${paid.data.session.subscription_id}`, {
        headers: { authorization: `Bearer ${key}`, "request-id": `b-${++n}` }
      })
    ).json()) as { data: { subscription: { quantity: string } } }
    expect(sub.data.subscription.quantity).toBe("2")
    await page.close()
  })

  it("a setup fee beside the plan: listed as one time, in what is due today and charged, not in what follows", async () => {
    const plan = await newSession()
    const product = await api("/api/v1/products", { product_name: "Setup" })
    const fee = await api("/api/v1/prices", {
      name: "Setup fee",
      product_id: product.data.product_id,
      currency: "USD",
      billing_type: "one_time",
      price_type: "flat_price",
      price_val: "199.00"
    })
    const opened = await fetch(`${base}/api/v1/session/${plan.session_id}`, {
      headers: { authorization: `Bearer ${key}`, "request-id": `b-${++n}` }
    })
    const priceId = ((await opened.json()) as any).data.session.line_items[0].price_id as string
    const session = (
      await api("/api/v1/session", {
        payer_id: `web-${n}`,
        line_items: [{ price_id: priceId }, { price_id: fee.data.price_id }],
        return_url: `${base}/thanks`
      })
    ).data
    const page = await browser.newPage()
    await page.goto(session.session_url!)
    expect(await page.textContent("#line-1 .line-once")).toBe("(one time)")
    expect(await page.textContent("#due")).toBe("$229.00")
    expect(await page.textContent("#then")).toBe("Then $30.00 every month")
    await page.fill("#card_number", "4242424242424242")
    await page.fill("#exp_month", "12")
    await page.fill("#exp_year", "2030")
    await page.fill("#cvc", "123")
    await Promise.all([page.waitForURL(`${base}/thanks`), page.click("#pay")])
    const paid = (await (
      await fetch(`${base}/api/v1/session/${session.session_id}`, {
        headers: { authorization: `Bearer ${key}`, "request-id": `b-${++n}` }
      })
    ).json()) as { data: { session: { trade_id: string } } }
    const trade = (await (
      await fetch(`${base}/api/v1/trade/${paid.data.session.trade_id}`, {
        headers: { authorization: `Bearer ${key}`, "request-id": `b-${++n}` }
      })
    ).json()) as { data: { trade: { amount: string } } }
    expect(trade.data.trade.amount).toBe("229.00")
    await page.close()
  })

  it("speaks German for a de-DE session, with the cancel and terms links", async () => {
    const session = await newSession(
      {
        locale: "de-DE",
        cancel_url: `${base}/cancelled`,
        terms_of_service_url: "https://shop.example/agb",
        privacy_policy_url: "https://shop.example/datenschutz"
      },
      { quantity: "2", quantity_editable: true, quantity_min: "1", quantity_max: "2" }
    )
    const page = await browser.newPage({ viewport: { width: 520, height: 900 } })
    await page.goto(session.session_url!)
    expect(await page.getAttribute("html", "lang")).toBe("de-DE")
    expect(await page.textContent("#pay")).toBe("Bezahlen 60,00\u00a0$")
    expect(await page.isDisabled("button[aria-label='Menge erhöhen']")).toBe(true)
    expect(await page.getAttribute("#cancel", "href")).toBe(`${base}/cancelled`)
    expect(await page.textContent(".legal")).toContain("Nutzungsbedingungen")
    await page.screenshot({ path: shot("checkout-de.png"), fullPage: true })
    await page.close()
  })
})
