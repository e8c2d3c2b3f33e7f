import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { StripeGateway } from "@recur/payment-stripe"
import type { Browser } from "playwright-core"
import * as Fake from "../../payment-stripe/test/fake/StripeFake.js"
import { caller, shot, stage } from "./harness.js"

// The hosted checkout and the portal's card form for a merchant on Stripe, in Chromium: the page
// mounts the Payment Element (Stripe.js served by the local Stripe fake, since the real one cannot
// be loaded here) and posts only the payment method Stripe made — then the charge, 3-D Secure and
// the card update go through the Stripe adapter to the fake.
let browser: Browser
let base = ""
let key = ""
let fake: Fake.StripeFake
let close = async () => {}

beforeAll(async () => {
  fake = await Fake.start()
  fake.account({ secret_key: "sk_test_browserMerchant1", publishable_key: "pk_test_browserMerchant1" })
  const s = await stage({
    engine: {
      payments: StripeGateway.perMerchant({ apiBase: fake.base, timeoutMs: 10_000 }),
      stripeJsUrl: `${fake.base}/v3/`
    },
    routes: { "/thanks": "<h1>Thanks</h1>" }
  })
  ;({ base, browser, close } = s)
  key = await s.merchantKey({ name: "Stripe Shop", currency: "USD", frozen_time: Date.parse("2026-01-01T00:00:00Z") })
})

afterAll(async () => {
  await close()
  await fake.close()
})

const call = caller("stripe", () => ({ base, key }))

describe("Stripe mode in Chromium", () => {
  it("checkout mounts the Payment Element, pays with the keyboard, and goes through 3-D Secure; the portal saves a new card, one through Stripe's 3-D Secure challenge", async () => {
    const settings = await call("POST", "/api/v1/payment_settings", {
      provider: "stripe",
      secret_key: "sk_test_browserMerchant1",
      publishable_key: "pk_test_browserMerchant1"
    })
    expect(settings.data.provider).toBe("stripe")
    const product = await call("POST", "/api/v1/products", { product_name: "Studio" })
    const price = await call("POST", "/api/v1/prices", {
      name: "Studio monthly",
      product_id: product.data.product_id,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
    })
    const checkout = async (payer: string, card: string) => {
      const session = await call("POST", "/api/v1/session", {
        payer_id: payer,
        line_items: [{ price_id: price.data.price_id }],
        return_url: `${base}/thanks`
      })
      const page = await browser.newPage()
      await page.goto(session.data.session_url)
      await page.waitForSelector("#payment-element .stripe-fake-card")
      // the element got the merchant's publishable key and what the page charges
      expect(await page.evaluate(() => (globalThis as any).__stripeFake)).toMatchObject({
        pk: "pk_test_browserMerchant1",
        type: "payment",
        mounted: "#payment-element",
        elements: { mode: "payment", amount: 3000, currency: "usd", paymentMethodCreation: "manual" }
      })
      // no card field of ours: the number is typed into Stripe's
      expect(await page.$("#card_number")).toBeNull()
      await page.focus("#payment-element .stripe-fake-card")
      await page.keyboard.type(card)
      return { page, session: session.data }
    }

    const { page, session } = await checkout("stripe-1", "4242 4242 4242 4242")
    await page.screenshot({ path: shot("checkout-stripe.png"), fullPage: true })
    await page.focus("#pay")
    await Promise.all([page.waitForURL(`${base}/thanks`), page.keyboard.press("Enter")])
    const paid = (await call("GET", `/api/v1/session/${session.session_id}`)).data.session
    expect(paid.status).toBe("complete")
    const intent = [...fake.intents.values()].at(-1) as any
    expect([intent.amount, intent.status, intent.setup_future_usage]).toEqual([3000, "succeeded", "off_session"])
    // the browser posted a payment method id, never the card
    expect(fake.requests.some((r) => JSON.stringify(r.params).includes("4242424242424242"))).toBe(false)
    await page.close()

    // 3-D Secure: Stripe's challenge, then back to the checkout, which asks Stripe and completes
    const challenged = await checkout("stripe-2", "4000 0027 6000 3184")
    await challenged.page.focus("#pay")
    await Promise.all([challenged.page.waitForURL(`${base}/thanks`), challenged.page.keyboard.press("Enter")])
    expect((await call("GET", `/api/v1/session/${challenged.session.session_id}`)).data.session.status).toBe("complete")
    await challenged.page.close()

    // a card the element cannot make: the page says so and nothing is posted
    const bad = await checkout("stripe-3", "1234 5678 9012 3456")
    await bad.page.focus("#pay")
    await bad.page.keyboard.press("Enter")
    await bad.page.waitForSelector("#payment-error:not([hidden])")
    expect(await bad.page.textContent("#payment-error")).toBe("Your card number is invalid.")
    expect((await call("GET", `/api/v1/session/${bad.session.session_id}`)).data.session.status).toBe("open")
    await bad.page.close()

    // the portal's card form: a Payment Element in setup mode; the new card is saved through Stripe
    const link = (await call("POST", "/api/v1/customer-portal/auth", { customer_id: paid.customer_id })).data
      .portal_session.url as string
    const portal = await browser.newPage()
    await portal.goto(link)
    expect(await portal.textContent(".sub")).toContain("visa •••• 4242, expires 12/2034")
    await portal.click("summary:has-text('Update payment method')")
    await portal.waitForSelector("#payment-element-0 .stripe-fake-card")
    expect(await portal.evaluate(() => (globalThis as any).__stripeFake.elements)).toMatchObject({
      mode: "setup",
      currency: "usd"
    })
    await portal.focus("#payment-element-0 .stripe-fake-card")
    await portal.keyboard.type("5555 5555 5555 4444")
    await portal.screenshot({ path: shot("portal-stripe.png"), fullPage: true })
    await Promise.all([
      portal.waitForResponse((r) => r.url() === link && r.request().method() === "GET"),
      portal.click("#card-form-0 button[type=submit]")
    ])
    expect(await portal.textContent(".sub")).toContain("mastercard •••• 4444")
    // a card whose issuer asks for 3-D Secure when it is saved: Stripe's challenge (the fake's page
    // authenticates at once), back to the portal, the card saved
    await portal.click("summary:has-text('Update payment method')")
    await portal.waitForSelector("#payment-element-0 .stripe-fake-card")
    await portal.focus("#payment-element-0 .stripe-fake-card")
    await portal.keyboard.type("4000 0025 0000 3155")
    const setupChallenges: Array<string> = []
    portal.on("request", (r) => {
      if (r.url().includes("/3ds/seti_")) setupChallenges.push(r.url())
    })
    await Promise.all([
      portal.waitForResponse((r) => r.url() === link && r.request().method() === "GET"),
      portal.click("#card-form-0 button[type=submit]")
    ])
    expect(setupChallenges.length).toBe(1)
    expect(await portal.textContent(".sub")).toContain("visa •••• 3155")
    await portal.close()

    // the saved card stops working: the failed renewal's hosted page takes a card through Stripe too
    fake.declineOffSession(50)
    await call("POST", "/api/v1/test_helpers/advance_clock", { frozen_time: "2026-02-01T12:00:00Z" })
    const invoices = (await call("GET", `/api/v1/invoices?subscription_id=${paid.subscription_id}`)).data
      .list as Array<any>
    const failed = invoices.find((i) => i.invoice_type === "renewal")
    expect(failed.biz_status).toBe("retrying")
    fake.declineOffSession(0)
    const invoicePage = await browser.newPage()
    await invoicePage.goto(failed.hosted_invoice_url)
    await invoicePage.waitForSelector("#payment-element .stripe-fake-card")
    expect(await invoicePage.evaluate(() => (globalThis as any).__stripeFake.elements)).toMatchObject({
      mode: "payment",
      amount: 3000,
      currency: "usd"
    })
    await invoicePage.focus("#payment-element .stripe-fake-card")
    await invoicePage.keyboard.type("4242 4242 4242 4242")
    await invoicePage.focus("#pay")
    await Promise.all([
      invoicePage.waitForResponse((r) => r.url() === failed.hosted_invoice_url && r.request().method() === "GET"),
      invoicePage.keyboard.press("Enter")
    ])
    const after = (await call("GET", `/api/v1/invoice/${failed.invoice_id}`)).data.invoice
    expect(after.biz_status).toBe("success")
    expect((await call("GET", `/api/v1/subscription/${paid.subscription_id}`)).data.subscription.status).toBe("active")
    await invoicePage.close()
    expect(fake.violations).toEqual([])
  })
})
