/**
 * The rules of the customer portal, told through the engine's services on a frozen sandbox
 * clock: a link signed per session that works for one hour of the merchant's clock and stops at
 * a revocation or the customer's deletion; what it shows (its customer's subscriptions and issued
 * invoices, nothing of another customer's); what the merchant's settings let it change; and a
 * plan switch that charges exactly the amount it quoted, tax included. Every amount is exact, in
 * minor units. Run against any storage adapter.
 *
 * @since 0.1.0
 */
import { expect, layer } from "@effect/vitest"
import { Requests } from "@recur/contract"
import {
  Billing,
  Catalog,
  Customers,
  Ids,
  InvoicePayments,
  Merchants,
  Portal,
  type PortalSession,
  type Store,
  Subscriptions,
  TaxRates
} from "@recur/core"
import { DateTime, Effect, type Layer, Option } from "effect"
import { invoicesOf } from "./ScenarioKit.js"
import {
  address,
  advance,
  card,
  iso,
  merchantAt,
  minor,
  monthly,
  productOf,
  subscribeTo,
  taxedEngine
} from "./ScenarioKit.js"

const START = "2026-01-01T00:00:00Z"

/** A portal link asked for with the merchant API's body, decoded as the REST adapter decodes it. */
const createSession = (merchantId: string, body: Requests.PortalSessionRequest) =>
  Effect.flatMap(Requests.portalSessionCommand(body), (command) =>
    Requests.refusedAsParameter(Portal.Portal.use((p) => p.createSession(merchantId, command)))
  )

/** A change of the portal settings with the merchant API's body, decoded as the REST adapter decodes it. */
const setSettings = (merchantId: string, body: Requests.PortalSettingsRequest) =>
  Effect.flatMap(Requests.portalSettingsCommand(body), (command) =>
    Requests.refusedAsParameter(Portal.Portal.use((p) => p.setSettings(merchantId, command)))
  )

/** The id and signature a portal link ends with. */
const partsOf = (session: PortalSession.PortalSession) => {
  const [id, token] = session.url.split("/").slice(-2)
  return { id: id!, token: token! }
}

/** Whether the link of `session` opens the portal now. */
const opens = (session: PortalSession.PortalSession) =>
  Effect.map(
    Portal.Portal.use((p) => p.sessionOf(partsOf(session).id, partsOf(session).token)),
    Option.isSome
  )

/**
 * A merchant frozen on Jan 1, 2026 with Basic (30.00 a month), Pro (50.00 a month), Yearly (300.00
 * a year) of one product, and a one-time Setup price.
 */
const plans = Effect.gen(function* () {
  const merchantId = yield* merchantAt(START)
  const productId = yield* productOf(merchantId, "Team")
  const basic = yield* monthly(merchantId, productId, "30.00", {}, "Basic")
  const pro = yield* monthly(merchantId, productId, "50.00", {}, "Pro")
  const yearly = yield* monthly(
    merchantId,
    productId,
    "300.00",
    { price_plan: { billing_cycle_unit: "year", billing_cycle_count: 1, base_price_val: "300.00" } },
    "Yearly"
  )
  const once = yield* Effect.map(
    Catalog.Catalog.use((c) =>
      c.createPrice(merchantId, {
        name: "Setup",
        product_id: productId,
        currency: "USD",
        billing_type: "one_time",
        price_type: "flat_price",
        price_val: "99.00"
      })
    ),
    (pv) => pv.id
  )
  return { merchantId, basic, pro, yearly, once }
})

/**
 * Registers the suite.
 *
 * @since 0.1.0
 */
export const suite = <E>(name: string, storage: Layer.Layer<Store.Storage, E>) =>
  layer(taxedEngine(storage), { timeout: "120 seconds" })(`Portal scenarios: ${name}`, (it) => {
    it.effect(
      "a link works for one hour of the merchant's clock: at 00:59:59 it opens, at 01:00:00 it does not; a wrong or borrowed signature never",
      () =>
        Effect.gen(function* () {
          const portal = yield* Portal.Portal
          const { merchantId, basic } = yield* plans
          const { customerId } = yield* subscribeTo(merchantId, basic)
          const other = yield* subscribeTo(merchantId, basic)
          const session = yield* createSession(merchantId, {
            customer_id: customerId,
            return_url: "https://shop.example/account"
          })
          const { id, token } = partsOf(session)
          expect(session.url).toBe(`http://localhost:4000/portal/${id}/${token}`)
          expect(id).toMatch(/^bps_[0-9a-z]{26}$/)
          expect([DateTime.toEpochMillis(session.created_at), DateTime.toEpochMillis(session.expires_at)]).toEqual([
            iso(START),
            iso("2026-01-01T01:00:00Z")
          ])
          const otherSession = yield* createSession(merchantId, { customer_id: other.customerId })
          for (const [sid, bad] of [
            [id, `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`],
            [id, partsOf(otherSession).token],
            [partsOf(otherSession).id, token],
            [id, "x".repeat(5000)]
          ] as const)
            expect(Option.isNone(yield* portal.sessionOf(sid, bad))).toBe(true)
          yield* advance(merchantId, "2026-01-01T00:59:59Z")
          expect(yield* opens(session)).toBe(true)
          yield* advance(merchantId, "2026-01-01T01:00:00Z")
          expect(yield* opens(session)).toBe(false)
          // a fresh link works again, from the merchant's clock of now
          const fresh = yield* createSession(merchantId, { customer_id: customerId })
          expect(DateTime.toEpochMillis(fresh.expires_at)).toBe(iso("2026-01-01T02:00:00Z"))
          expect(yield* opens(fresh)).toBe(true)
        })
    )

    it.effect(
      "a revoked link or a deleted customer's closes at once; revoking twice changes nothing; another merchant's link is not found",
      () =>
        Effect.gen(function* () {
          const portal = yield* Portal.Portal
          const { merchantId, basic } = yield* plans
          const a = yield* subscribeTo(merchantId, basic)
          const b = yield* subscribeTo(merchantId, basic)
          const revoked = yield* createSession(merchantId, { customer_id: a.customerId })
          const kept = yield* createSession(merchantId, { customer_id: a.customerId })
          const stranger = yield* merchantAt(START)
          expect((yield* Effect.flip(portal.revokeSession(stranger, revoked.portal_session_id)))._tag).toBe("NotFound")
          const first = yield* portal.revokeSession(merchantId, revoked.portal_session_id)
          expect(first.revoked_at).not.toBeNull()
          expect(yield* portal.revokeSession(merchantId, revoked.portal_session_id)).toEqual(first)
          expect([yield* opens(revoked), yield* opens(kept)]).toEqual([false, true])
          const bLink = yield* createSession(merchantId, { customer_id: b.customerId })
          // a customer whose subscription is not canceled is not deleted: it would go on being billed
          expect(
            yield* Effect.flip(Customers.Customers.use((c) => c.delete(merchantId, { customer_id: b.customerId })))
          ).toMatchObject({ _tag: "StateConflict", state: "subscribed" })
          expect(yield* opens(bLink)).toBe(true)
          yield* Subscriptions.Subscriptions.use((s) => s.cancel(merchantId, Subscriptions.cancelOf(b.subscriptionId)))
          yield* Customers.Customers.use((c) => c.delete(merchantId, { customer_id: b.customerId }))
          expect(yield* opens(bLink)).toBe(false)
          expect(yield* Effect.flip(createSession(merchantId, { customer_id: b.customerId }))).toMatchObject({
            _tag: "NotFound"
          })
          // no link for a customer of another merchant, nor to a return URL that is not http(s)
          expect(yield* Effect.flip(createSession(stranger, { customer_id: a.customerId }))).toMatchObject({
            _tag: "NotFound"
          })
          expect(
            yield* Effect.flip(
              createSession(merchantId, { customer_id: a.customerId, return_url: "javascript:alert(1)" })
            )
          ).toMatchObject({ _tag: "InvalidParameter", param: "return_url" })
        })
    )

    it.effect(
      "it shows its own customer's subscriptions and issued invoices only; another customer's subscription is not found through it",
      () =>
        Effect.gen(function* () {
          const portal = yield* Portal.Portal
          const { merchantId, basic } = yield* plans
          const ada = yield* subscribeTo(merchantId, basic)
          const bob = yield* subscribeTo(merchantId, basic)
          // a declined checkout of Ada's leaves an unnumbered draft: not a document the portal shows
          const declined = yield* subscribeTo(merchantId, basic, { customer_id: ada.customerId }, "4000000000000002")
          yield* advance(merchantId, "2026-02-01T00:00:00Z")
          const link = yield* createSession(merchantId, { customer_id: ada.customerId })
          const session = Option.getOrThrow(yield* portal.sessionOf(partsOf(link).id, partsOf(link).token))
          const view = yield* portal.view(session)
          const shown = new Map(view.subscriptions.map((s) => [s.subscription.id, s]))
          // the declined checkout's subscription ended with its session (its draft voided): shown as canceled
          expect(
            [...shown.values()].map((s) => [s.subscription.id, s.subscription.status, s.price_name]).sort()
          ).toEqual(
            [
              [ada.subscriptionId, "active", "Basic"],
              [declined.subscriptionId, "canceled", "Basic"]
            ].sort()
          )
          expect(shown.has(bob.subscriptionId)).toBe(false)
          expect(shown.get(ada.subscriptionId)!.upcoming).toMatchObject({ amount: "30.00", cycle_index: 2 })
          // Ada's first invoice and her renewal: issued, numbered, 30.00 each
          const adaInvoices = yield* invoicesOf(merchantId, ada.subscriptionId)
          expect(view.invoices.map((i) => [i.invoice_id, minor(i.amount), i.number !== null]).sort()).toEqual(
            adaInvoices.map((i) => [i.invoice_id, 3000n, true]).sort()
          )
          expect(view.invoices).toHaveLength(2)
          expect(view.invoices.every((i) => i.customer_id === ada.customerId)).toBe(true)
          expect((yield* portal.ownSubscription(session, ada.subscriptionId)).id).toBe(ada.subscriptionId)
          expect((yield* Effect.flip(portal.ownSubscription(session, bob.subscriptionId)))._tag).toBe("NotFound")
          // the merchant hides the invoice history: none shown
          yield* setSettings(merchantId, { invoice_history: false })
          expect((yield* portal.view(session)).invoices).toEqual([])
        })
    )

    it.effect(
      "its invoices to pay: a past-due renewal and an unpaid subscription's failed one, each payable on its page; not another customer's, not once paid; no balance yet",
      () =>
        Effect.gen(function* () {
          const portal = yield* Portal.Portal
          const { merchantId, basic } = yield* plans
          // Ada's renewal declines softly (retried: past due), Eve's hard (a stolen card: unpaid at once)
          const ada = yield* subscribeTo(merchantId, basic, {}, "4000000000000341")
          const eve = yield* subscribeTo(merchantId, basic, { customer_id: ada.customerId }, "4000000000000358")
          const bob = yield* subscribeTo(merchantId, basic, {}, "4000000000000341")
          yield* advance(merchantId, "2026-02-01T00:00:10Z")
          const renewalOf = (subscriptionId: string) =>
            Effect.map(
              invoicesOf(merchantId, subscriptionId),
              (list) => list.find((i) => i.invoice_type === "renewal")!
            )
          const [retrying, failed, bobs] = yield* Effect.all([
            renewalOf(ada.subscriptionId),
            renewalOf(eve.subscriptionId),
            renewalOf(bob.subscriptionId)
          ])
          expect([retrying.biz_status, failed.biz_status, bobs.biz_status]).toEqual(["retrying", "failed", "retrying"])
          const link = yield* createSession(merchantId, { customer_id: ada.customerId })
          const session = Option.getOrThrow(yield* portal.sessionOf(partsOf(link).id, partsOf(link).token))
          const account = (yield* portal.view(session)).account
          expect(account.to_pay.map((i) => i.invoice_id).sort()).toEqual(
            [retrying.invoice_id, failed.invoice_id].sort()
          )
          expect(account.to_pay.every((i) => i.number !== null && i.hosted_invoice_url !== null)).toBe(true)
          expect(account.balance).toBeNull()
          // paid on its page with a new card: the unpaid subscription recovers, the invoice leaves the list
          const paid = yield* InvoicePayments.InvoicePayments.use((p) =>
            p.payInvoice(merchantId, failed.invoice_id, card("4242424242424242"))
          )
          expect(paid.status).toBe("succeeded")
          const after = (yield* portal.view(session)).account.to_pay
          expect(after.map((i) => i.invoice_id)).toEqual([retrying.invoice_id])
          // the history keeps it, paid
          expect(
            (yield* portal.view(session)).invoices.find((i) => i.invoice_id === failed.invoice_id)?.biz_status
          ).toBe("success")
        })
    )

    it.effect(
      "what it may change is the merchant's to say: every action by default but switching; turned off, each is refused — and switching only between listed recurring prices",
      () =>
        Effect.gen(function* () {
          const portal = yield* Portal.Portal
          const { merchantId, basic, pro, once } = yield* plans
          const { customerId } = yield* subscribeTo(merchantId, basic)
          const session = yield* createSession(merchantId, { customer_id: customerId })
          const allowed = (f: Portal.Feature) => portal.allows(session, f)
          const features = ["payment_method_update", "cancel", "invoice_history", "switch_price"] as const
          expect(yield* Effect.forEach(features, allowed)).toEqual([true, true, true, false])
          expect(
            yield* setSettings(merchantId, {
              cancel: false,
              payment_method_update: false,
              switch_prices: [basic, pro]
            })
          ).toMatchObject({
            payment_method_update: false,
            cancel: false,
            invoice_history: true,
            switch_prices: [basic, pro]
          })
          expect(yield* Effect.forEach(features, allowed)).toEqual([false, false, true, true])
          expect(
            yield* Effect.flip(createSession(merchantId, { customer_id: customerId, flow: "payment_method_update" }))
          ).toMatchObject({ _tag: "InvalidParameter", param: "flow" })
          const other = yield* plans
          for (const [prices, param] of [
            [[basic, once], "switch_prices[1]"],
            [[basic, basic], "switch_prices[1]"]
          ] as const)
            expect(yield* Effect.flip(setSettings(merchantId, { switch_prices: [...prices] }))).toMatchObject({
              _tag: "InvalidParameter",
              param
            })
          // another merchant's price is no price of this one: a missing reference, named (issue 32 (3))
          expect(yield* Effect.flip(setSettings(merchantId, { switch_prices: [other.pro] }))).toMatchObject({
            _tag: "NotFound",
            param: "switch_prices[0]"
          })
          // the engine names the entry by its index in the command and the price it names
          expect(
            yield* Effect.flip(
              portal.setSettings(merchantId, {
                reset: false,
                paymentMethodUpdate: Option.none(),
                cancel: Option.none(),
                invoiceHistory: Option.none(),
                switchPrices: Option.some([basic, once].map((id) => Ids.PriceId.make(id)))
              })
            )
          ).toMatchObject({ _tag: "CommandRefused", part: "switchPrice", index: 1, id: once })
          // a refusal changed nothing; a reset returns to the default
          expect((yield* portal.settingsOf(merchantId)).switch_prices).toEqual([basic, pro])
          expect(yield* setSettings(merchantId, { reset: true })).toMatchObject({
            payment_method_update: true,
            cancel: true,
            invoice_history: true,
            switch_prices: []
          })
          // the settings are the merchant's own: another merchant's stay the default
          expect((yield* Merchants.Merchants.use((m) => m.get(other.merchantId))).portal_settings).toBeNull()
        })
    )

    it.effect(
      "switching plan charges exactly what it quoted, tax included: Basic → Pro on Jan 16 at noon is 10.00 + 1.00 of 10 % tax; the quote commits once; Yearly is offered, one-time prices are not",
      () =>
        Effect.gen(function* () {
          const portal = yield* Portal.Portal
          const billing = yield* Billing.Billing
          const { merchantId, basic, pro, yearly, once } = yield* plans
          yield* TaxRates.TaxRates.use((t) =>
            t.create(merchantId, { name: "Sales tax", percentage: "10", country: "US" })
          )
          const ada = yield* subscribeTo(merchantId, basic, { billing_address: address("US") })
          const bob = yield* subscribeTo(merchantId, basic)
          yield* setSettings(merchantId, { switch_prices: [basic, pro, yearly] })
          yield* advance(merchantId, "2026-01-16T12:00:00Z")
          const link = yield* createSession(merchantId, { customer_id: ada.customerId })
          const session = Option.getOrThrow(yield* portal.sessionOf(partsOf(link).id, partsOf(link).token))
          const [mine] = (yield* portal.view(session)).subscriptions
          // Pro is offered, and Yearly: another interval, a switch the engine takes now
          expect(mine!.switch_options).toEqual([
            { price_id: pro, name: "Pro", amount: "50.00", currency: "USD", interval: { unit: "month", count: 1 } },
            {
              price_id: yearly,
              name: "Yearly",
              amount: "300.00",
              currency: "USD",
              interval: { unit: "year", count: 1 }
            }
          ])
          expect([minor(mine!.upcoming!.amount), minor(mine!.upcoming!.tax_amount)]).toEqual([3300n, 300n])
          const preview = yield* portal.previewSwitch(session, ada.subscriptionId, pro)
          // 15.5 of January's 31 days left: 50.00 − 30.00 over half the month = 10.00, 10 % tax on it
          expect(preview.from).toBe("Basic")
          expect([
            minor(preview.quote.credit),
            minor(preview.quote.charge),
            minor(preview.quote.net),
            minor(preview.quote.tax),
            minor(preview.quote.total)
          ]).toEqual([1500n, 2500n, 1000n, 100n, 1100n])
          const committed = yield* portal.switchPrice(session, ada.subscriptionId, pro, preview.quote.quote_id)
          expect(committed).toEqual(preview.quote)
          const upgrade = (yield* invoicesOf(merchantId, ada.subscriptionId)).find((i) => i.invoice_type === "upgrade")!
          expect([minor(upgrade.amount), minor(upgrade.tax_amount), upgrade.biz_status]).toEqual([
            1100n,
            100n,
            "success"
          ])
          expect((yield* billing.getSubscription(merchantId, ada.subscriptionId)).price_id).toBe(pro)
          // the same quote again: the subscription moved, nothing more is charged
          expect(
            (yield* Effect.flip(portal.switchPrice(session, ada.subscriptionId, pro, preview.quote.quote_id)))._tag
          ).toBe("InvalidParameter")
          expect(
            (yield* invoicesOf(merchantId, ada.subscriptionId)).filter((i) => i.invoice_type === "upgrade")
          ).toHaveLength(1)
          // Bob's subscription through Ada's link; a price not offered; a one-time price
          expect((yield* Effect.flip(portal.previewSwitch(session, bob.subscriptionId, pro)))._tag).toBe("NotFound")
          for (const price of [once])
            expect(yield* Effect.flip(portal.previewSwitch(session, ada.subscriptionId, price))).toMatchObject({
              _tag: "InvalidParameter",
              param: "price_id"
            })
          expect((yield* billing.getSubscription(merchantId, bob.subscriptionId)).price_id).toBe(basic)
        })
    )
  })
