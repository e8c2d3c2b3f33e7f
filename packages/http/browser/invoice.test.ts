import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser } from "playwright-core"
import { caller, shot, stage } from "./harness.js"

// The hosted invoice page in a real browser (Debian's Chromium) over real HTTP, and its PDF
// rendered by poppler (pdftoppm, pdftotext) as a reader's viewer would.
let browser: Browser
let base = ""
let key = ""
let close = async () => {}
const dir = mkdtempSync(join(tmpdir(), "recur-invoice-"))

beforeAll(async () => {
  const s = await stage({})
  ;({ base, browser, close } = s)
  key = await s.merchantKey({
    name: "Browser GmbH",
    currency: "EUR",
    invoice_prefix: "BRW",
    frozen_time: Date.parse("2026-01-01T00:00:00Z")
  })
})

afterAll(async () => {
  await close()
  rmSync(dir, { recursive: true, force: true })
})

const call = caller("inv", () => ({ base, key }))
let payers = 0

/** A German customer on a 119.00 EUR plan with 19 % VAT inside, subscribed with `card`. */
const subscribed = async (card: string) => {
  const product = await call("POST", "/api/v1/products", { product_name: "Team" })
  const price = await call("POST", "/api/v1/prices", {
    name: "Team monthly",
    product_id: product.data.product_id,
    currency: "EUR",
    billing_type: "recurring",
    price_type: "flat_price",
    price_plan: { billing_cycle_unit: "month", base_price_val: "119.00" }
  })
  const session = await call("POST", "/api/v1/session", {
    payer_id: `web-${++payers}`,
    line_items: [{ price_id: price.data.price_id }],
    billing_address: { name: "Grete Müller", address_line1: "Hauptstraße 5", city: "Berlin", country_code: "DE" }
  })
  const paid = await fetch(`${base}/checkout/${session.data.session_id}/pay`, {
    method: "POST",
    headers: { accept: "application/json", "content-type": "application/json" },
    body: JSON.stringify({ card_number: card, exp_month: "12", exp_year: "2030", cvc: "123" })
  })
  expect(paid.status).toBe(200)
}

describe("the hosted invoice page in Chromium", () => {
  beforeAll(async () => {
    await call("POST", "/api/v1/tax_rates", { name: "MwSt", percentage: "19", country: "DE", inclusive: true })
  })

  it("shows the invoice, and its Pay button pays a failed renewal with a new card, using only the keyboard", async () => {
    await subscribed("4000000000000341")
    await call("POST", "/api/v1/test_helpers/advance_clock", { frozen_time: "2026-02-01T12:00:00Z" })
    const invoices = (await call("GET", "/api/v1/invoices?limit=100")).data.list as Array<any>
    const renewal = invoices.find((i) => i.cycle_index === 1 && i.biz_status === "retrying")
    expect(renewal).toBeDefined()
    const page = await browser.newPage({ locale: "de-DE", extraHTTPHeaders: { "accept-language": "de-DE" } })
    await page.goto(renewal.hosted_invoice_url)
    expect(await page.textContent("#title")).toContain(`Rechnung ${renewal.number}`)
    expect(await page.textContent("#merchant")).toBe("Browser GmbH")
    expect(await page.textContent("#customer")).toContain("Hauptstraße 5, Berlin, DE")
    expect(await page.textContent("#lines")).toContain("01.02.2026 – 01.03.2026")
    expect((await page.textContent("#totals"))?.replace(/\s/g, " ")).toContain("MwSt 19 % (enthalten)19,00 €")
    await page.screenshot({ path: shot("invoice-page.png"), fullPage: true })
    await page.focus("#card_number")
    await page.keyboard.type("4242 4242 4242 4242")
    for (const value of ["12", "2030", "123", "Grete Müller"]) {
      await page.keyboard.press("Tab")
      await page.keyboard.type(value)
    }
    // the form posts to …/pay, which answers 303 back to the page: wait for that page's GET
    await Promise.all([
      page.waitForResponse((r) => r.url() === renewal.hosted_invoice_url && r.request().method() === "GET"),
      page.keyboard.press("Enter")
    ])
    await page.waitForLoadState()
    expect(await page.textContent("#facts")).toContain("Bezahlt")
    expect(await page.$("#pay-form")).toBeNull()
    const after = (await call("GET", `/api/v1/invoice/${renewal.invoice_id}`)).data.invoice
    expect(after.biz_status).toBe("success")
    await page.close()
  })

  it("the PDF renders to a page image, and its text holds the number, the lines, the tax and the total", async () => {
    const invoices = (await call("GET", "/api/v1/invoices?limit=100")).data.list as Array<any>
    const first = invoices.find((i) => i.cycle_index === 0)
    const response = await fetch(first.invoice_pdf, { headers: { "accept-language": "de-DE" } })
    expect(response.headers.get("content-type")).toBe("application/pdf")
    const file = join(dir, "invoice.pdf")
    writeFileSync(file, Buffer.from(await response.arrayBuffer()))
    const info = execFileSync("pdfinfo", [file], { encoding: "utf8" })
    expect(info).toMatch(/Pages:\s+1/)
    expect(info).toMatch(new RegExp(`Title:\\s+Rechnung ${first.number}\\n`))
    execFileSync("pdftoppm", ["-png", "-r", "60", "-singlefile", file, join(dir, "page")])
    const png = readFileSync(join(dir, "page.png"))
    writeFileSync(shot("invoice-pdf.png"), png)
    // a PNG of an A4 page at 60 dpi, with something drawn on it
    expect(png.subarray(1, 4).toString()).toBe("PNG")
    expect(Math.abs(png.readUInt32BE(16) - 496)).toBeLessThanOrEqual(1) // 210 mm at 60 dpi
    expect(statSync(join(dir, "page.png")).size).toBeGreaterThan(8000)
    const text = execFileSync("pdftotext", ["-layout", file, "-"], { encoding: "utf8" })
    for (const expected of [
      `Rechnung ${first.number}`,
      "Von: Browser GmbH",
      "Grete Müller",
      "Hauptstraße 5, Berlin, DE",
      "Team monthly × 1",
      "01.01.2026 - 01.02.2026",
      "MwSt 19 % (enthalten)",
      "19,00 €",
      "Gesamt",
      "119,00 €"
    ])
      expect([expected, text.includes(expected)]).toEqual([expected, true])
  })
})
