import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Merchants } from "@recur/core"
import { Effect } from "effect"
import { engineOn } from "@recur/embedded"
import { TestClient } from "@recur/http"
import { StripeGateway } from "@recur/payment-stripe"
import * as Fake from "../../payment-stripe/test/fake/StripeFake.js"
import { backends, serve } from "./client.js"

const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; data?: { param?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}

for (const [name, storage] of backends()) {
  describe(`payment settings (${name})`, { timeout: 120_000 }, () => {
    // each merchant's own Stripe account (the local fake, which knows the keys below), as the server runs
    const fake = Fake.start()
    const routed = fake.then((f) => {
      const test = f.account({
        secret_key: "sk_test_51AbCdEfGhIjKlMnOp",
        publishable_key: "pk_test_51AbCdEfGhIjKlMnOp"
      })
      // its publishable key rolled: another key of the same account
      f.account({ id: test.id, secret_key: "sk_test_51AbCdEfGhIjKlMnOp", publishable_key: "pk_test_51Zz9Yy8Xx7Ww6Vv" })
      f.account({ secret_key: "rk_live_51AbCdEfGhIjKlMnOp", publishable_key: "pk_live_51AbCdEfGhIjKlMnOp", live: true })
      return TestClient.make(
        engineOn(storage(), {
          publicUrl: "http://localhost:4000",
          payments: StripeGateway.perMerchant({ apiBase: f.base, timeoutMs: 5_000 })
        })
      )
    })
    let api: Awaited<typeof routed> & { merchant: (o?: { live?: boolean }) => Promise<{ api_key: string }> }
    beforeAll(async () => {
      const client = await routed
      await client.runtime.runPromise(Effect.void)
      api = Object.assign(client, {
        merchant: (o: { live?: boolean } = {}) =>
          client.runtime.runPromise(
            Merchants.Merchants.use((m) =>
              m.create({
                name: "Acme",
                currency: "USD",
                ...(o.live ? { mode: "live" as const } : { frozen_time: Date.parse("2026-01-01T00:00:00Z") })
              })
            )
          )
      })
    }, 120_000)
    afterAll(async () => {
      await api.dispose()
      await (await fake).close()
    })

    const stripe = {
      provider: "stripe",
      secret_key: "sk_test_51AbCdEfGhIjKlMnOp",
      publishable_key: "pk_test_51AbCdEfGhIjKlMnOp",
      webhook_secret: "whsec_abcdefghijklmnop"
    }

    it("sandbox by default; Stripe keys of the merchant's mode, stored encrypted and never shown", async () => {
      const k = (await api.merchant()).api_key
      const get = async (key = k) => (await api.call("GET", "/api/v1/payment_settings", key)).body.data
      expect(await get()).toEqual({
        provider: "sandbox",
        publishable_key: null,
        secret_key_last4: null,
        webhook_secret_set: false,
        webhook_url: null
      })
      const set = await api.call("POST", "/api/v1/payment_settings", k, stripe)
      expect(set.status, JSON.stringify(set.body)).toBe(200)
      expect(set.body.data).toMatchObject({
        provider: "stripe",
        publishable_key: stripe.publishable_key,
        secret_key_last4: "MnOp",
        webhook_secret_set: true
      })
      expect(set.body.data.webhook_url).toMatch(/^http:\/\/localhost:4000\/webhooks\/stripe\/mch_[0-9a-z]{26}$/)
      // no secret in any answer
      expect(JSON.stringify(await get())).not.toContain(stripe.secret_key)
      expect(JSON.stringify(await get())).not.toContain(stripe.webhook_secret)
      // a new publishable key alone keeps the stored secrets
      const rotated = await api.call("POST", "/api/v1/payment_settings", k, {
        publishable_key: "pk_test_51Zz9Yy8Xx7Ww6Vv"
      })
      expect(rotated.body.data).toMatchObject({ secret_key_last4: "MnOp", webhook_secret_set: true })
      for (const [body, param] of [
        [{ provider: "paypal" }, "provider"],
        [{ ...stripe, secret_key: "sk_live_51AbCdEfGhIjKlMnOp" }, "secret_key"],
        [{ ...stripe, secret_key: "nope" }, "secret_key"],
        [{ ...stripe, publishable_key: "pk_live_51AbCdEfGhIjKlMnOp" }, "publishable_key"],
        [{ ...stripe, webhook_secret: "secret" }, "webhook_secret"]
      ] as const)
        expect([param, ...refusal(await api.call("POST", "/api/v1/payment_settings", k, body))]).toEqual([
          param,
          400,
          "InvalidParameter",
          param
        ])
      // a key of the right prefix but too short says what is wrong with it, not only its prefix
      const short = await api.call("POST", "/api/v1/payment_settings", k, { ...stripe, secret_key: "sk_test_acme1" })
      expect(short.body.message).toBe(
        "secret_key: must be a Stripe test secret key: sk_test_ or rk_test_ followed by 8 to 247 letters and digits"
      )
      const shortPk = await api.call("POST", "/api/v1/payment_settings", k, { ...stripe, publishable_key: "pk_test_1" })
      expect(shortPk.body.message).toBe(
        "publishable_key: must be a Stripe test publishable key: pk_test_ followed by 8 to 247 letters and digits"
      )
      // a live merchant takes live keys only
      const live = (await api.merchant({ live: true })).api_key
      expect(refusal(await api.call("POST", "/api/v1/payment_settings", live, stripe))).toEqual([
        400,
        "InvalidParameter",
        "secret_key"
      ])
      const liveKeys = {
        provider: "stripe",
        secret_key: "rk_live_51AbCdEfGhIjKlMnOp",
        publishable_key: "pk_live_51AbCdEfGhIjKlMnOp"
      }
      expect((await api.call("POST", "/api/v1/payment_settings", live, liveKeys)).body.data).toMatchObject({
        provider: "stripe",
        webhook_secret_set: false
      })
      // a first Stripe setting needs its secret key
      const other = (await api.merchant()).api_key
      expect(
        refusal(
          await api.call("POST", "/api/v1/payment_settings", other, {
            provider: "stripe",
            publishable_key: stripe.publishable_key
          })
        )
      ).toEqual([400, "InvalidParameter", "secret_key"])
      // back to the sandbox
      expect((await api.call("POST", "/api/v1/payment_settings", k, { provider: "sandbox" })).body.data.provider).toBe(
        "sandbox"
      )
      expect((await api.call("GET", "/api/v1/payment_settings", null)).status).toBe(401)
    })
  })

  describe(`payment settings on a sandbox-only engine (${name})`, { timeout: 120_000 }, () => {
    const sandbox = serve(storage())
    beforeAll(() => sandbox.ready(), 120_000)
    afterAll(() => sandbox.dispose())

    it("Stripe keys are refused (nothing could verify or use them); the sandbox stays", async () => {
      const k = (await sandbox.merchant()).api_key
      expect(
        refusal(
          await sandbox.call("POST", "/api/v1/payment_settings", k, {
            provider: "stripe",
            secret_key: "sk_test_51AbCdEfGhIjKlMnOp",
            publishable_key: "pk_test_51AbCdEfGhIjKlMnOp"
          })
        )
      ).toEqual([400, "InvalidParameter", "provider"])
      expect((await sandbox.call("GET", "/api/v1/payment_settings", k)).body.data.provider).toBe("sandbox")
    })
  })
}
