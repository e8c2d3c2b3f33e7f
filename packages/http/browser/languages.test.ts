import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Browser, Page } from "playwright-core"
import { caller, stage } from "./harness.js"

// The hosted pages in a few of their sixteen languages in a real browser (Debian's Chromium):
// Arabic laid out right to left, Japanese and German from the session or the browser.
let browser: Browser
let base = ""
let key = ""
let close = async () => {}

beforeAll(async () => {
  const s = await stage({})
  ;({ base, browser, close } = s)
  key = await s.merchantKey({ name: "Lingua", currency: "EUR", frozen_time: Date.parse("2026-01-01T00:00:00Z") })
})

afterAll(() => close())

const call = caller("lang", () => ({ base, key }))
let payers = 0

/** A checkout session for 1,234.50 EUR every 3 months, in `locale` when given. */
const session = async (locale?: string) => {
  const product = await call("POST", "/api/v1/products", { product_name: "Team" })
  const price = await call("POST", "/api/v1/prices", {
    name: "Team quarterly",
    product_id: product.data.product_id,
    currency: "EUR",
    billing_type: "recurring",
    price_type: "flat_price",
    price_plan: { billing_cycle_unit: "month", billing_cycle_count: 3, base_price_val: "1234.50" }
  })
  return (
    await call("POST", "/api/v1/session", {
      payer_id: `lang-${++payers}`,
      line_items: [{ price_id: price.data.price_id }],
      ...(locale ? { locale } : {})
    })
  ).data as { session_id: string; session_url: string }
}

/** The page's direction as the browser lays it out, and where two elements' boxes are. */
const layout = (page: Page) =>
  page.evaluate(() => {
    // the page's DOM (not typed in this Node project)
    const doc = (globalThis as any).document
    const box = (selector: string) => doc.querySelector(selector)!.getBoundingClientRect()
    const main = box("main")
    // the label's text itself (the label is a block as wide as the column)
    const range = doc.createRange()
    range.selectNodeContents(doc.querySelector("label[for=card_number]")!)
    const label = range.getBoundingClientRect()
    return {
      lang: doc.documentElement.lang,
      dir: doc.documentElement.dir,
      direction: (globalThis as any).getComputedStyle(doc.body).direction,
      // a label's text starts at the main column's start edge: the right in rtl, the left in ltr
      labelAtRight: Math.abs(main.right - label.right) < 2,
      labelAtLeft: Math.abs(main.left - label.left) < 2
    }
  })

describe("the hosted pages' languages in Chromium", () => {
  it("Arabic from the session: lang ar-SA, laid out right to left, amounts in Arabic digits", async () => {
    const s = await session("ar-SA")
    const page = await browser.newPage({ locale: "en-US", extraHTTPHeaders: { "accept-language": "en-US" } })
    await page.goto(s.session_url)
    const l = await layout(page)
    expect(l).toMatchObject({ lang: "ar-SA", dir: "rtl", direction: "rtl" })
    expect(l.labelAtRight).toBe(true)
    expect(l.labelAtLeft).toBe(false)
    expect(await page.textContent("label[for=card_number]")).toBe("رقم البطاقة")
    expect(await page.textContent("#due")).toContain("١٬٢٣٤٫٥٠")
    expect(await page.textContent("#then")).toContain("كل ٣ أشهر")
    await page.close()
  })

  it("Japanese from the browser's Accept-Language: lang ja-JP, left to right, yen-style grouping of euros", async () => {
    const s = await session()
    const page = await browser.newPage({ locale: "ja-JP", extraHTTPHeaders: { "accept-language": "ja,en;q=0.5" } })
    await page.goto(s.session_url)
    const l = await layout(page)
    expect(l).toMatchObject({ lang: "ja-JP", dir: "ltr", direction: "ltr" })
    expect(l.labelAtLeft).toBe(true)
    expect(await page.textContent("#pay")).toContain("支払う")
    expect(await page.textContent("#due")).toContain("€1,234.50")
    expect(await page.textContent("#then")).toContain("3か月ごと")
    await page.close()
  })

  it("German from the session, whatever the browser says", async () => {
    const s = await session("de-DE")
    const page = await browser.newPage({ locale: "fr-FR", extraHTTPHeaders: { "accept-language": "fr-FR" } })
    await page.goto(s.session_url)
    expect(await layout(page)).toMatchObject({ lang: "de-DE", dir: "ltr", direction: "ltr" })
    expect((await page.textContent("#due"))?.replace(/\s/g, " ")).toContain("1.234,50 €")
    expect(await page.textContent("#then")).toContain("alle 3 Monate")
    await page.close()
  })

  it("the Arabic portal and invoice pages are right to left too: the totals sit at the left", async () => {
    const s = await session()
    const paid = await fetch(`${base}/checkout/${s.session_id}/pay`, {
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify({ card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" })
    })
    expect(paid.status).toBe(200)
    const invoice = ((await call("GET", "/api/v1/invoices?limit=1")).data.list as Array<any>)[0]
    const page = await browser.newPage({ extraHTTPHeaders: { "accept-language": "ar-SA,ar;q=0.9" } })
    await page.goto(invoice.hosted_invoice_url)
    const where = await page.evaluate(() => {
      // the page's DOM (not typed in this Node project)
      const doc = (globalThis as any).document
      const main = doc.querySelector("main")!.getBoundingClientRect()
      const totals = doc.querySelector("#totals")!.getBoundingClientRect()
      return {
        dir: doc.documentElement.dir,
        totalsAtLeft: Math.abs(totals.left - main.left) < 2,
        totalsNarrower: totals.width < main.width
      }
    })
    expect(where).toEqual({ dir: "rtl", totalsAtLeft: true, totalsNarrower: true })
    expect(await page.textContent("#totals")).toContain("الإجمالي")
    await page.close()
  })
})
