import { describe, expect, it } from "@effect/vitest"
import { Pg } from "@recur/sql"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Fake from "../../payment-stripe/test/fake/StripeFake.js"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))
const node = ["--conditions=source", "--import", "tsx", main]

/** The stores the server runs on here: PGlite always, PostgreSQL (a fresh schema) when configured. */
const stores = (): ReadonlyArray<readonly [string, () => Record<string, string>]> => {
  const url = process.env.RECUR_TEST_DATABASE_URL
  return [
    ["PGlite", () => ({ RECUR_DATA_DIR: mkdtempSync(join(tmpdir(), "recur-logs-")) })],
    ...(url
      ? [
          [
            "PostgreSQL",
            () => ({
              RECUR_DATA_DIR: mkdtempSync(join(tmpdir(), "recur-logs-pg-")),
              DATABASE_URL: url,
              RECUR_DATABASE_SCHEMA: `recur_logs_${randomBytes(6).toString("hex")}`,
              RECUR_MASTER_KEY: randomBytes(32).toString("hex")
            })
          ] as const
        ]
      : [])
  ]
}

const merchant = (env: Record<string, string>, name: string) => {
  const r = spawnSync(
    process.execPath,
    [...node, "merchant", "create", "--name", name, "--currency", "USD", "--json"],
    {
      cwd: root,
      env: { ...process.env, ...env },
      encoding: "utf8",
      timeout: 90_000
    }
  )
  expect(r.status, r.stderr).toBe(0)
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { merchant_id: string; api_key: string }
}

for (const [name, store] of stores()) {
  describe(`the server's logs (${name})`, () => {
    it("a whole journey logs no link signature, client secret, API key, processor key, webhook secret or master key", async () => {
      const env = store()
      const hooks: Array<string> = []
      const receiver = createServer((req, res) => {
        req.on("data", () => {})
        req.on("end", () => {
          hooks.push(req.url ?? "")
          res.writeHead(200).end("ok")
        })
      })
      await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
      const shop = merchant(env, "Logs shop")
      const stripeShop = merchant(env, "Stripe shop")
      // Stripe: the local fake, which verifies the Stripe shop's keys when they are saved
      const fake = await Fake.start()
      const stripeKey = `sk_test_Logs${randomBytes(12).toString("hex")}`
      fake.account({ secret_key: stripeKey, publishable_key: "pk_test_LogsPublishable" })
      const server = spawn(process.execPath, [...node, "serve"], {
        cwd: root,
        env: { ...process.env, ...env, PORT: "0", RECUR_ACCESS_LOG: "true", RECUR_STRIPE_API_BASE: fake.base }
      })
      let log = ""
      server.stdout.on("data", (d) => (log += String(d)))
      server.stderr.on("data", (d) => (log += String(d)))
      try {
        for (let i = 0; i < 900 && !/Recur listening on port \d+/.test(log); i++)
          await new Promise((r) => setTimeout(r, 100))
        const port = /Recur listening on port (\d+)/.exec(log)?.[1]
        expect(port, log).toBeDefined()
        // no RECUR_SMTP_URL: the banner says once that customer emails are not sent
        expect(log.match(/Customer emails are not sent: RECUR_SMTP_URL is not set/g), log).toHaveLength(1)
        const base = `http://127.0.0.1:${port}`
        let n = 0
        const call = async (method: string, path: string, key: string | null, body?: unknown, headers = {}) => {
          const r = await fetch(`${base}${path}`, {
            method,
            redirect: "manual",
            headers: {
              "request-id": `logs-${++n}`,
              ...(key ? { authorization: `Bearer ${key}` } : {}),
              ...(body !== undefined ? { "content-type": "application/json" } : {}),
              ...headers
            },
            ...(body !== undefined ? { body: JSON.stringify(body) } : {})
          })
          const text = await r.text()
          return { status: r.status, text, json: () => JSON.parse(text) }
        }
        const k = shop.api_key
        const product = (await call("POST", "/api/v1/products", k, { product_name: "Pro" })).json().data.product_id
        const price = await call("POST", "/api/v1/prices", k, {
          name: "Pro monthly",
          product_id: product,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", base_price_val: "30.00" }
        })
        expect(price.status, price.text).toBe(200)
        const endpoint = await call("POST", "/api/v2/webhook/endpoints", k, {
          url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks?token=receiver-token-1234`,
          all_events: true
        })
        expect(endpoint.status, endpoint.text).toBe(200)
        const endpointSecret = endpoint.json().data.secret as string
        // checkout: the page, the payment, a processor's return with its client secret
        const session = (
          await call("POST", "/api/v1/session", k, {
            payer_id: "ada",
            line_items: [{ price_id: price.json().data.price_id }]
          })
        ).json().data
        expect((await call("GET", new URL(session.session_url).pathname, null)).status).toBe(200)
        const paid = await call(
          "POST",
          `/checkout/${session.session_id}/pay`,
          null,
          { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
          { accept: "application/json" }
        )
        expect(paid.status, paid.text).toBe(200)
        const clientSecret = "pi_3LogsTest_secret_LogsClientSecret42"
        await call(
          "GET",
          `/checkout/${session.session_id}/complete?payment_intent=pi_3LogsTest&payment_intent_client_secret=${clientSecret}`,
          null
        )
        // the invoice's page, its PDF, and the page with a processor's return
        const invoice = (await call("GET", "/api/v1/invoices", k)).json().data.list[0]
        const invoicePath = new URL(invoice.hosted_invoice_url).pathname
        const invoiceSignature = invoicePath.split("/")[3]!
        expect((await call("GET", invoicePath, null)).status).toBe(200)
        expect((await call("GET", `${invoicePath}/pdf`, null)).status).toBe(200)
        await call(
          "GET",
          `${invoicePath}?payment_intent=pi_3LogsTest&payment_intent_client_secret=${clientSecret}`,
          null
        )
        // the portal: its page, an action, and a tampered link
        const customer = (await call("GET", `/api/v1/session/${session.session_id}`, k)).json().data.session
        const portal = (
          await call("POST", "/api/v1/customer-portal/auth", k, { customer_id: customer.customer_id })
        ).json().data.portal_session
        const portalPath = new URL(portal.url).pathname
        const portalSignature = portalPath.split("/")[3]!
        expect((await call("GET", portalPath, null)).status).toBe(200)
        const cancel = await fetch(`${base}${portalPath}/subscription/${customer.subscription_id}/cancel`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: ""
        })
        expect(cancel.status).toBe(303)
        expect((await call("GET", `${portalPath.slice(0, -3)}xyz`, null)).status).toBe(404)
        // a merchant's Stripe keys, a processor webhook, a wrong key
        const stripeWebhookSecret = `whsec_Logs${randomBytes(12).toString("hex")}`
        const settings = await call("POST", "/api/v1/payment_settings", stripeShop.api_key, {
          provider: "stripe",
          secret_key: stripeKey,
          publishable_key: "pk_test_LogsPublishable",
          webhook_secret: stripeWebhookSecret
        })
        expect(settings.status, settings.text).toBe(200)
        await call(
          "POST",
          `/webhooks/stripe/${stripeShop.merchant_id}`,
          null,
          { id: "evt_x" },
          { "stripe-signature": "t=1,v1=00" }
        )
        expect((await call("GET", "/api/v1/invoices", `${k.slice(0, -4)}XXXX`)).status).toBe(401)
        // the webhooks go out (the worker's and dispatcher's lines are in the log too)
        for (let i = 0; i < 300 && hooks.length === 0; i++) await new Promise((r) => setTimeout(r, 100))
        expect(hooks.length).toBeGreaterThan(0)
        const exited = new Promise<number | null>((resolve) => server.on("exit", (code) => resolve(code)))
        server.kill("SIGTERM")
        expect(await exited).toBe(0)

        // the access log was on: each hosted route is there, its signature redacted
        expect(log).toContain(`/invoice/${invoice.invoice_id}/[redacted]/pdf`)
        expect(log).toContain(
          `/portal/${portal.portal_session_id}/[redacted]/subscription/${customer.subscription_id}/cancel`
        )
        expect(log).toContain(`/checkout/${session.session_id}/complete`)
        const masterKey = env.RECUR_MASTER_KEY ?? readFileSync(join(env.RECUR_DATA_DIR!, "master.key"), "utf8").trim()
        const secrets: Record<string, string> = {
          "invoice link signature": invoiceSignature,
          "portal link signature": portalSignature,
          "client secret": clientSecret,
          "client secret's secret part": "LogsClientSecret42",
          "API key": k,
          "API key's random part": k.slice("sk_test_".length),
          "other merchant's API key": stripeShop.api_key,
          "wrong API key": `${k.slice(0, -4)}XXXX`,
          "webhook endpoint secret": endpointSecret,
          "webhook endpoint secret's key": endpointSecret.slice("whsec_".length),
          "receiver token": "receiver-token-1234",
          "Stripe secret key": stripeKey,
          "Stripe webhook secret": stripeWebhookSecret,
          "master key": masterKey
        }
        for (const [what, secret] of Object.entries(secrets))
          expect([what, log.includes(secret)], `${what} in the log:\n${log}`).toEqual([what, false])
      } finally {
        if (server.exitCode === null) server.kill("SIGKILL")
        await new Promise<void>((resolve) => receiver.close(() => resolve()))
        await fake.close()
        if (existsSync(env.RECUR_DATA_DIR!)) rmSync(env.RECUR_DATA_DIR!, { recursive: true, force: true })
        // a shared database keeps nothing of this test
        const schema = env.RECUR_DATABASE_SCHEMA
        if (schema !== undefined)
          await Effect.runPromise(
            SqlClient.SqlClient.use((sql) => sql`drop schema if exists ${sql(schema)} cascade`).pipe(
              Effect.provide(Pg.clientPg({ url: env.DATABASE_URL! })),
              Effect.ignore
            )
          )
      }
    }, 240_000)
  })
}
