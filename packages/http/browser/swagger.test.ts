import { afterAll, beforeAll, expect, it } from "@effect/vitest"
import { type BillingClient, createBilling } from "@recur/embedded"
import { Mount } from "@recur/http"
import { createServer, type Server } from "node:http"
import { type Browser, chromium } from "playwright-core"

// Swagger UI as a merchant's developer uses it: under a host's /billing mount, Authorize with an
// API key, then "Try it out" on an operation — the call must reach the API and succeed.
let server: Server
let browser: Browser
let billing: BillingClient
let recur: Mount.NodeMount
let base = ""

beforeAll(async () => {
  server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  billing = await createBilling({ storage: "memory", publicUrl: `${base}/billing` })
  recur = await Mount.nodeHandler(billing, { prefix: "/billing" })
  server.on("request", (req, res) => recur.handle(req, res))
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
  })
})

afterAll(async () => {
  await browser?.close()
  server?.close()
  await recur?.close()
  await billing?.close()
})

it("Swagger UI: Authorize with the API key, Try it out, Execute: 200 from the mounted API", async () => {
  const { api_key } = await billing.merchants.create({ name: "Swagger shop", currency: "USD" })
  const page = await browser.newPage()
  const external: Array<string> = []
  page.on("request", (r) => {
    if (!r.url().startsWith(base) && !r.url().startsWith("data:")) external.push(r.url())
  })
  await page.goto(`${base}/billing/docs`)
  await page.locator(".btn.authorize").first().click()
  await page.locator(".auth-container input").first().fill(api_key)
  await page.locator(".auth-btn-wrapper .btn.modal-btn.auth.authorize").first().click()
  await page.locator(".auth-btn-wrapper .btn-done").first().click()
  const operation = page.locator(".opblock", { has: page.locator('[data-path="/api/v1/product-categories"]') }).first()
  await operation.locator(".opblock-summary").first().click()
  await operation.locator(".try-out__btn").click()
  await operation.locator('tr[data-param-name="Request-Id"] input').fill("swagger-1")
  await operation.locator(".execute").click()
  const status = operation.locator(".live-responses-table tr.response .response-col_status").first()
  await status.waitFor({ timeout: 30_000 })
  expect((await status.textContent())?.trim()).toBe("200")
  const url = await operation.locator(".request-url pre").first().textContent()
  expect(url).toBe(`${base}/billing/api/v1/product-categories`)
  const body = await operation
    .locator(".live-responses-table tr.response .response-col_description pre")
    .first()
    .textContent()
  expect(JSON.parse(body ?? "{}").code).toBe("success")
  await operation.screenshot({
    path: new URL("../../../docs/screenshots/swagger-try-it-out.png", import.meta.url).pathname
  })
  expect(external).toEqual([])
})
