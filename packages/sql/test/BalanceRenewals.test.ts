/**
 * Issue 34 (4): two subscriptions of one customer, each holding credit from a credit note to the
 * balance, renewed at once (two transactions racing on the customer's balance): neither entry is
 * lost — the loser's transaction rolls back with `ConcurrentUpdate` and is run again — and the
 * customer's ledger ends with both credits and both uses, its balance the sum of its entries.
 */
import { expect, layer } from "@effect/vitest"
import { Billing, CustomerBalances, Entities, InvoiceCredits, Renewals, Store } from "@recur/core"
import { Pg } from "@recur/sql"
import { ScenarioKit } from "@recur/testing"
import { Effect, type Layer } from "effect"
import { freshPostgres } from "./postgres.js"

const racing = <E>(name: string, storage: Layer.Layer<Store.Storage, E>) =>
  layer(ScenarioKit.engine(storage), { timeout: "300 seconds" })(name, (it) => {
    it.effect(
      "two subscriptions of one customer renew at once: both credit notes applied, no ledger entry lost",
      () =>
        Effect.gen(function* () {
          const { merchantId, priceId } = yield* ScenarioKit.shopAt("2026-01-01T00:00:00Z", "30.00")
          const first = yield* ScenarioKit.subscribeTo(merchantId, priceId)
          const second = yield* ScenarioKit.subscribeTo(merchantId, priceId, { customer_id: first.customerId })
          expect(second.customerId).toBe(first.customerId)
          const credits = yield* InvoiceCredits.InvoiceCredits
          for (const [sub, amount] of [
            [first.subscriptionId, "7.00"],
            [second.subscriptionId, "11.00"]
          ] as const) {
            const [initial] = yield* ScenarioKit.invoicesOf(merchantId, sub)
            yield* credits.create(merchantId, { invoice_id: initial!.invoice_id, amount, reason: "outage" })
          }
          const renewals = yield* Renewals.Renewals
          yield* Effect.forEach(
            [first.subscriptionId, second.subscriptionId],
            (sub) =>
              renewals.renew(merchantId, sub, { force: true }).pipe(
                Effect.retry({
                  while: (e) => e._tag === "ConcurrentUpdate",
                  times: 50
                })
              ),
            { concurrency: 2, discard: true }
          )
          for (const [sub, amount] of [
            [first.subscriptionId, "23.00"],
            [second.subscriptionId, "19.00"]
          ] as const) {
            const renewal = (yield* ScenarioKit.invoicesOf(merchantId, sub)).find((i) => i.invoice_type === "renewal")
            expect([renewal?.amount, renewal?.credit_applied]).toEqual([amount, amount === "23.00" ? "7.00" : "11.00"])
          }
          const page = yield* (yield* CustomerBalances.CustomerBalances).transactions(merchantId, first.customerId, {
            limit: 100
          })
          const entries = [...page.list].reverse()
          expect(entries.map((e) => e.source_type).sort()).toEqual([
            "applied_to_invoice",
            "applied_to_invoice",
            "credit_note",
            "credit_note"
          ])
          let sum = 0
          for (const e of entries) {
            sum += Math.round(Number(e.amount) * 100)
            expect(Math.round(Number(e.ending_balance) * 100)).toBe(sum)
          }
          expect(sum).toBe(0)
          const storage = yield* Store.Storage
          const row = yield* storage.repository(Entities.customerBalance).get(merchantId, `${first.customerId}:USD`)
          expect(row._tag === "Some" ? [row.value.value.balance, row.value.value.entries] : undefined).toEqual([0n, 4])
        }),
      300_000
    )

    it.effect(
      "two renewals at once both wanting a third subscription's credit: it is taken once, by one of them",
      () =>
        Effect.gen(function* () {
          const { merchantId, priceId } = yield* ScenarioKit.shopAt("2026-01-01T00:00:00Z", "30.00")
          const first = yield* ScenarioKit.subscribeTo(merchantId, priceId)
          const second = yield* ScenarioKit.subscribeTo(merchantId, priceId, { customer_id: first.customerId })
          // the holder renews later (Jan 10 + a month): its credit is free for the others' renewals
          yield* ScenarioKit.advance(merchantId, "2026-01-10T00:00:00Z")
          const holder = yield* ScenarioKit.subscribeTo(merchantId, priceId, { customer_id: first.customerId })
          const [initial] = yield* ScenarioKit.invoicesOf(merchantId, holder.subscriptionId)
          yield* (yield* InvoiceCredits.InvoiceCredits).create(merchantId, {
            invoice_id: initial!.invoice_id,
            amount: "20.00",
            reason: "outage"
          })
          const renewals = yield* Renewals.Renewals
          yield* Effect.forEach(
            [first.subscriptionId, second.subscriptionId],
            (sub) =>
              renewals.renew(merchantId, sub, { force: true }).pipe(
                Effect.retry({
                  while: (e) => e._tag === "ConcurrentUpdate",
                  times: 50
                })
              ),
            { concurrency: 2, discard: true }
          )
          const applied: Array<string | null | undefined> = []
          for (const sub of [first.subscriptionId, second.subscriptionId]) {
            const renewal = (yield* ScenarioKit.invoicesOf(merchantId, sub)).find((i) => i.invoice_type === "renewal")
            applied.push(renewal?.credit_applied)
          }
          // one took all 20.00 (each wanted 30.00), the other none: never 40.00
          expect(applied.slice().sort()).toEqual(["0.00", "20.00"])
          const billing = yield* Billing.Billing
          expect((yield* billing.getSubscription(merchantId, holder.subscriptionId)).credit_balance).toBe("0.00")
          const page = yield* (yield* CustomerBalances.CustomerBalances).transactions(merchantId, first.customerId, {
            limit: 100
          })
          expect([...page.list].reverse().map((e) => [e.source_type, e.amount, e.ending_balance])).toEqual([
            ["credit_note", "20.00", "20.00"],
            ["applied_to_invoice", "-20.00", "0.00"]
          ])
        }),
      300_000
    )
  })

racing("PGlite", Pg.layerPglite())
const url = process.env.RECUR_TEST_DATABASE_URL
if (url) racing("PostgreSQL", freshPostgres(url))
