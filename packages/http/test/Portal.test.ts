import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { TestClient } from "@recur/http"
import { backends, serve } from "./client.js"

const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; data?: { param?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

for (const [name, storage] of backends()) {
  describe(`customer portal (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage())
    beforeAll(() => api.ready(), 120_000)
    afterAll(() => api.dispose())

    const fresh = async () => (await api.merchant({ frozen: "2026-01-01T00:00:00Z" })).api_key
    /** A customer with a subscription paid by `number`: the customer and subscription ids. */
    const customerWith = async (k: string, payer: string, number = "4242424242424242") => {
      const { priceId } = await api.priceOf(k)
      const s = await api.call("POST", "/api/v1/session", k, { payer_id: payer, line_items: [{ price_id: priceId }] })
      const id = (s.body as any).data.session_id as string
      expect(
        (
          await api.call(
            "POST",
            `/checkout/${id}/pay`,
            null,
            { card_number: number, exp_month: "12", exp_year: "2030", cvc: "123" },
            { accept: "application/json" }
          )
        ).status
      ).toBe(200)
      const session = ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session
      return { customerId: session.customer_id as string, subscriptionId: session.subscription_id as string }
    }
    const portal = async (k: string, body: Record<string, unknown>) => {
      const r = await api.call("POST", "/api/v1/customer-portal/auth", k, body)
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      return (r.body as any).data.portal_session
    }
    const path = (url: string) => new URL(url).pathname
    const page = async (url: string) => {
      const r = await api.handler(new Request(`http://localhost${path(url)}`))
      return { status: r.status, html: await r.text(), headers: r.headers }
    }
    const post = (url: string, fields: Record<string, string> = {}) =>
      api.handler(
        new Request(`http://localhost${url}`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: form(fields)
        })
      )
    const statusOf = async (k: string, sub: string) =>
      ((await api.call("GET", `/api/v1/subscription/${sub}`, k)).body as any).data.subscription

    it("a portal link is for one customer of one merchant, checked at creation, and expires after an hour", async () => {
      const k = await fresh()
      const ada = await customerWith(k, "ada")
      const s = await portal(k, { customer_id: ada.customerId, return_url: "https://shop.example/account" })
      expect(s).toMatchObject({
        customer_id: ada.customerId,
        return_url: "https://shop.example/account",
        flow: null,
        created_at: "2026-01-01T00:00:00Z",
        expires_at: "2026-01-01T01:00:00Z"
      })
      expect(s.url).toMatch(/^http:\/\/localhost:4000\/portal\/bps_[0-9a-z]{26}\/[A-Za-z0-9_-]{43}$/)
      expect(refusal(await api.call("POST", "/api/v1/customer-portal/auth", k, {}))).toEqual([
        400,
        "InvalidParameter",
        "customer_id"
      ])
      for (const [body, param] of [
        [{ customer_id: ada.customerId, return_url: "javascript:alert(1)" }, "return_url"],
        [{ customer_id: ada.customerId, flow: "everything" }, "flow"]
      ] as const)
        expect(refusal(await api.call("POST", "/api/v1/customer-portal/auth", k, body))).toEqual([
          400,
          "InvalidParameter",
          param
        ])
      expect(
        (await api.call("POST", "/api/v1/customer-portal/auth", k, { customer_id: "cus_01jd0000000000000000000000" }))
          .status
      ).toBe(404)
      // another merchant cannot open a portal for this customer
      const other = await fresh()
      expect(
        (await api.call("POST", "/api/v1/customer-portal/auth", other, { customer_id: ada.customerId })).status
      ).toBe(404)
      const open = await page(s.url)
      expect(open.status).toBe(200)
      expect(open.headers.get("cache-control")).toBe("no-store")
      expect(open.html).toContain('<a href="https://shop.example/account" id="return">')
      // a wrong signature, another session's signature, and an expired link all say the same
      const [, , id, token] = path(s.url).split("/")
      const second = await portal(k, { customer_id: ada.customerId })
      const [, , , token2] = path(second.url).split("/")
      for (const bad of [
        `/portal/${id}/${token!.slice(0, -1)}${token!.endsWith("x") ? "y" : "x"}`,
        `/portal/${id}/${token2}`,
        `/portal/bps_x/${token}`
      ])
        expect([bad, (await page(`http://localhost${bad}`)).status]).toEqual([bad, 404])
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-01-01T01:00:00Z" })
      expect((await page(s.url)).status).toBe(404)
    })

    it("shows only its customer's subscriptions and invoices, and acts only on them", async () => {
      const k = await fresh()
      const ada = await customerWith(k, "ada")
      const bob = await customerWith(k, "bob")
      const s = await portal(k, { customer_id: ada.customerId })
      const { html } = await page(s.url)
      expect(html).toContain(`id="sub-${ada.subscriptionId}"`)
      expect(html).not.toContain(bob.subscriptionId)
      expect(html).toContain("INV-000001")
      expect(html).not.toContain("INV-000002")
      expect(html).toContain("Pro monthly")
      expect(html).toContain("next invoice on Feb 1, 2026: $30.00")
      // the card saved at checkout, with its expiry
      expect(html).toContain("Paid with visa •••• 4242, expires 12/2030")
      // acting on Bob's subscription through Ada's link: not found, nothing changes
      const base = path(s.url)
      const foreign = await post(`${base}/subscription/${bob.subscriptionId}/cancel`)
      expect(foreign.status).toBe(404)
      expect((await statusOf(k, bob.subscriptionId)).cancel_at_period_end).toBe(false)
      // cancel at period end, then keep it
      const cancel = await post(`${base}/subscription/${ada.subscriptionId}/cancel`)
      expect([cancel.status, cancel.headers.get("location")]).toEqual([303, `../../../${base.split("/")[3]}`])
      expect((await statusOf(k, ada.subscriptionId)).cancel_at_period_end).toBe(true)
      expect((await page(s.url)).html).toContain("Ends on Feb 1, 2026")
      expect((await post(`${base}/subscription/${ada.subscriptionId}/revoke`)).status).toBe(303)
      expect((await statusOf(k, ada.subscriptionId)).cancel_at_period_end).toBe(false)
      // the same events as the REST operations
      const events = (
        (await api.call("GET", `/api/v2/webhook/events?business_ids=${ada.subscriptionId}&limit=100`, k)).body as any
      ).data.list.map((e: any) => e.event_type)
      expect(events).toEqual(
        expect.arrayContaining(["v2.subscription.cancellation_requested", "v2.subscription.cancellation_revoked"])
      )
      const twice = await post(`${base}/subscription/${ada.subscriptionId}/revoke`)
      expect(twice.status).toBe(409)
      expect(await twice.text()).toContain('role="alert"')
    })

    it("a new card in the portal brings an unpaid subscription back", async () => {
      const k = await fresh()
      const late = await customerWith(k, "late", "4000000000000341")
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-02-20T00:00:00Z" })
      expect((await statusOf(k, late.subscriptionId)).status).toBe("unpaid")
      const s = await portal(k, { customer_id: late.customerId, flow: "payment_method_update" })
      const { html } = await page(s.url)
      expect(html).toContain("Unpaid — update your card to continue")
      expect(html).toContain("autofocus")
      const base = path(s.url)
      const declined = await post(`${base}/subscription/${late.subscriptionId}/payment_method`, {
        card_number: "4000000000000002",
        exp_month: "12",
        exp_year: "2030",
        cvc: "123"
      })
      expect(declined.status).toBe(400)
      expect(await declined.text()).toContain("declined")
      const saved = await post(`${base}/subscription/${late.subscriptionId}/payment_method`, {
        card_number: "4242424242424242",
        exp_month: "12",
        exp_year: "2030",
        cvc: "123"
      })
      expect(saved.status).toBe(303)
      expect((await statusOf(k, late.subscriptionId)).status).toBe("active")
      expect((await page(s.url)).html).toContain("visa •••• 4242, expires 12/2030")
    })

    it("every portal route: another customer's subscription is 404, a bad, foreign or expired link is 404; nothing changes", async () => {
      const k = await fresh()
      const { priceId, productId } = await api.priceOf(k, {}, { product: "Team", price: "Basic" })
      const pro = (
        (
          await api.call("POST", "/api/v1/prices", k, {
            name: "Pro",
            product_id: productId,
            currency: "USD",
            billing_type: "recurring",
            price_type: "flat_price",
            price_plan: { billing_cycle_unit: "month", base_price_val: "50.00" }
          })
        ).body as any
      ).data.price_id as string
      expect((await api.call("POST", "/api/v1/portal_settings", k, { switch_prices: [priceId, pro] })).status).toBe(200)
      const subscribeTo = async (payer: string) => {
        const s = await api.call("POST", "/api/v1/session", k, { payer_id: payer, line_items: [{ price_id: priceId }] })
        const id = (s.body as any).data.session_id as string
        await api.call(
          "POST",
          `/checkout/${id}/pay`,
          null,
          { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
          { accept: "application/json" }
        )
        const session = ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session
        return { customerId: session.customer_id as string, subscriptionId: session.subscription_id as string }
      }
      const ada = await subscribeTo("ada")
      const bob = await subscribeTo("bob")
      // another merchant's customer with a link of its own
      const other = await fresh()
      const eve = await customerWith(other, "eve")
      const adaLink = path((await portal(k, { customer_id: ada.customerId })).url)
      const eveLink = path((await portal(other, { customer_id: eve.customerId })).url)
      const card = { card_number: "5555555555554444", exp_month: "12", exp_year: "2031", cvc: "123" }
      const routes: ReadonlyArray<readonly [string, string, Record<string, string>]> = [
        ["POST", "payment_method", card],
        ["POST", "cancel", {}],
        ["POST", "revoke", {}],
        ["GET", `switch?price_id=${pro}`, {}],
        ["POST", "switch", { price_id: pro, quote_id: "quo_x" }]
      ]
      const send = (method: string, url: string, fields: Record<string, string>) =>
        method === "GET" ? api.handler(new Request(`http://localhost${url}`)) : post(url, fields)
      const [, , adaId, adaToken] = adaLink.split("/")
      const tampered = `/portal/${adaId}/${adaToken!.slice(0, -1)}${adaToken!.endsWith("A") ? "B" : "A"}`
      const swapped = `/portal/${adaId}/${eveLink.split("/")[3]}`
      for (const [method, action, fields] of routes) {
        // Ada's link on Bob's subscription (same merchant) and on Eve's (another merchant)
        for (const sub of [bob.subscriptionId, eve.subscriptionId])
          expect([
            action,
            sub,
            (await send(method, `${adaLink}/subscription/${sub}/${action}`, fields)).status
          ]).toEqual([action, sub, 404])
        // a tampered link, another session's signature, and Eve's link on Ada's subscription
        for (const base of [tampered, swapped, eveLink])
          expect([
            action,
            base,
            (await send(method, `${base}/subscription/${ada.subscriptionId}/${action}`, fields)).status
          ]).toEqual([action, base, 404])
      }
      for (const [who, sub, key] of [
        ["bob", bob.subscriptionId, k],
        ["ada", ada.subscriptionId, k],
        ["eve", eve.subscriptionId, other]
      ] as const) {
        const s = await statusOf(key, sub)
        expect([who, s.price_id === pro, s.cancel_at_period_end]).toEqual([who, false, false])
      }
      // and once the hour is over, every route of Ada's own link is 404 too
      await api.call("POST", "/api/v1/test_helpers/advance_clock", k, { frozen_time: "2026-01-01T01:00:01Z" })
      for (const [method, action, fields] of routes)
        expect([
          action,
          (await send(method, `${adaLink}/subscription/${ada.subscriptionId}/${action}`, fields)).status
        ]).toEqual([action, 404])
      expect((await page(`http://localhost${adaLink}`)).status).toBe(404)
    })

    it("a deleted customer's links and a revoked link stop working at once, on every portal route", async () => {
      const k = await fresh()
      const { priceId, productId } = await api.priceOf(k, {}, { product: "Team", price: "Basic" })
      const pro = (
        (
          await api.call("POST", "/api/v1/prices", k, {
            name: "Pro",
            product_id: productId,
            currency: "USD",
            billing_type: "recurring",
            price_type: "flat_price",
            price_plan: { billing_cycle_unit: "month", base_price_val: "50.00" }
          })
        ).body as any
      ).data.price_id as string
      expect((await api.call("POST", "/api/v1/portal_settings", k, { switch_prices: [priceId, pro] })).status).toBe(200)
      const subscribe = async (payer: string) => {
        const s = await api.call("POST", "/api/v1/session", k, { payer_id: payer, line_items: [{ price_id: priceId }] })
        const id = (s.body as any).data.session_id as string
        await api.call(
          "POST",
          `/checkout/${id}/pay`,
          null,
          { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" },
          { accept: "application/json" }
        )
        const session = ((await api.call("GET", `/api/v1/session/${id}`, k)).body as any).data.session
        return { customerId: session.customer_id as string, subscriptionId: session.subscription_id as string }
      }
      const ada = await subscribe("ada")
      const bob = await subscribe("bob")
      await api.call("POST", "/api/v1/front/customer/update", k, { customer_id: ada.customerId, name: "Ada Lovelace" })
      const card = { card_number: "5555555555554444", exp_month: "12", exp_year: "2031", cvc: "123" }
      const send = (method: string, url: string, fields: Record<string, string>) =>
        method === "GET" ? api.handler(new Request(`http://localhost${url}`)) : post(url, fields)
      /** Every portal route of a link: the page and each action on `sub`, with their statuses and pages. */
      const everyRoute = async (link: string, sub: string) => {
        const answers: Array<readonly [string, number, string]> = []
        const home = await api.handler(new Request(`http://localhost${link}`))
        answers.push(["page", home.status, await home.text()])
        for (const [method, action, fields] of [
          ["POST", "payment_method", card],
          ["POST", "cancel", {}],
          ["POST", "revoke", {}],
          ["GET", `switch?price_id=${pro}`, {}],
          ["POST", "switch", { price_id: pro, quote_id: "quo_x" }]
        ] as const) {
          const r = await send(method, `${link}/subscription/${sub}/${action}`, fields)
          answers.push([action, r.status, await r.text()])
        }
        return answers
      }
      const tampered = async (link: string) => {
        const [, , id, token] = link.split("/")
        return everyRoute(`/portal/${id}/${token!.slice(0, -1)}${token!.endsWith("A") ? "B" : "A"}`, "sub_x")
      }
      const adaLink = path((await portal(k, { customer_id: ada.customerId })).url)
      const adaPage = await page(`http://localhost${adaLink}`)
      expect([adaPage.status, adaPage.html.includes("Ada Lovelace")]).toEqual([200, true])
      const bobSession = await portal(k, { customer_id: bob.customerId })
      const bobLink = path(bobSession.url)
      expect(bobSession.revoked_at).toBeNull()

      // Ada's subscription is canceled and Ada deleted (a customer with a live subscription is not):
      // her link answers every route exactly as a tampered link does, and shows nothing of her
      expect((await api.call("POST", "/api/v1/front/customer/delete", k, { customer_id: ada.customerId })).status).toBe(
        409
      )
      expect(
        (await api.call("POST", `/api/v1/subscription/${ada.subscriptionId}/cancel`, k, { cancel_type: "immediate" }))
          .status
      ).toBe(200)
      expect((await api.call("POST", "/api/v1/front/customer/delete", k, { customer_id: ada.customerId })).status).toBe(
        200
      )
      const deleted = await everyRoute(adaLink, ada.subscriptionId)
      expect(deleted.map(([what, status, html]) => [what, status, html])).toEqual(
        (await tampered(adaLink)).map(([what, status, html]) => [what, status, html])
      )
      for (const [what, status, html] of deleted) {
        expect([what, status]).toEqual([what, 404])
        for (const shown of ["Ada Lovelace", "ada", ada.subscriptionId, "Cancel", "<form"])
          expect([what, shown, html.includes(shown)]).toEqual([what, shown, false])
      }
      expect((await statusOf(k, ada.subscriptionId)).cancel_at_period_end).toBe(false)
      // and no new link is made for her
      expect((await api.call("POST", "/api/v1/customer-portal/auth", k, { customer_id: ada.customerId })).status).toBe(
        404
      )

      // Bob's link works until the merchant revokes it; then every route is 404, as a tampered link
      expect((await page(`http://localhost${bobLink}`)).status).toBe(200)
      const revoked = await api.call(
        "POST",
        `/api/v1/customer-portal/session/${bobSession.portal_session_id}/revoke`,
        k
      )
      expect(revoked.status, JSON.stringify(revoked.body)).toBe(200)
      expect((revoked.body as any).data.portal_session).toMatchObject({
        portal_session_id: bobSession.portal_session_id,
        revoked_at: "2026-01-01T00:00:00Z"
      })
      const afterRevoke = await everyRoute(bobLink, bob.subscriptionId)
      expect(afterRevoke).toEqual(await tampered(bobLink))
      expect(afterRevoke.map(([what, status]) => [what, status])).toEqual(afterRevoke.map(([what]) => [what, 404]))
      expect((await statusOf(k, bob.subscriptionId)).cancel_at_period_end).toBe(false)
      // revoking again changes nothing; another merchant's revoke and an unknown id are 404
      const again = await api.call("POST", `/api/v1/customer-portal/session/${bobSession.portal_session_id}/revoke`, k)
      expect([again.status, (again.body as any).data.portal_session.revoked_at]).toEqual([200, "2026-01-01T00:00:00Z"])
      const other = await fresh()
      const foreign = await api.call(
        "POST",
        `/api/v1/customer-portal/session/${bobSession.portal_session_id}/revoke`,
        other
      )
      expect(refusal(foreign).slice(0, 1)).toEqual([404])
      expect(
        (await api.call("POST", "/api/v1/customer-portal/session/bps_01jd0000000000000000000000/revoke", k)).status
      ).toBe(404)
      // a new link for Bob works: revoking one link revokes that link only
      const fresh2 = path((await portal(k, { customer_id: bob.customerId })).url)
      expect((await page(`http://localhost${fresh2}`)).status).toBe(200)
    })

    it("card attempts in the portal share the checkout's card-testing limit; looking and canceling do not", async () => {
      const k = await fresh()
      const ada = await customerWith(k, "ada")
      const base = path((await portal(k, { customer_id: ada.customerId })).url)
      const declined = { card_number: "4000000000000002", exp_month: "12", exp_year: "2030", cvc: "123" }
      for (let i = 0; i < 10; i++)
        expect((await post(`${base}/subscription/${ada.subscriptionId}/payment_method`, declined)).status).toBe(400)
      const limited = await post(`${base}/subscription/${ada.subscriptionId}/payment_method`, declined)
      expect(limited.status).toBe(429)
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0)
      // the page and the cancel button still answer
      expect((await page(`http://localhost${base}`)).status).toBe(200)
      expect((await post(`${base}/subscription/${ada.subscriptionId}/cancel`)).status).toBe(303)
    })
  })
}
