/**
 * Private prices and catalog migrations, told through the engine's services on a frozen sandbox
 * clock: a price sold to one customer (hidden from the catalog's lists, refused to the others'
 * checkouts and changes, binding a checkout opened for nobody yet), and the move of a price
 * version's subscriptions to a newer version — previewed with each next invoice before and
 * after, run by the worker once per subscription, resumed after a storage failure midway. Run
 * against any storage adapter.
 *
 * @since 0.1.0
 */
import { expect, layer } from "@effect/vitest"
import {
  Catalog,
  Checkout,
  Customers,
  Entities,
  Merchants,
  PriceChanges,
  PriceMigrations,
  Portal,
  Renewals,
  SandboxClock,
  SessionPayments,
  Store,
  type Subscription,
  Worker
} from "@recur/core"
import { Requests } from "@recur/contract"
import { DateTime, Effect, Layer, Option } from "effect"
import {
  card,
  checkout,
  engine,
  eventsOf,
  invoicesOf,
  iso,
  merchantAt,
  monthly,
  openSession,
  productOf,
  subscribe,
  subscriptionOf
} from "./ScenarioKit.js"

const START = "2026-03-01T00:00:00Z"

/**
 * Storage failures on demand: once `failAfter` subscription writes have gone through, every
 * further one dies (the transaction around it rolls back), until `failAfter` is reset.
 */
const faults = { failAfter: Number.POSITIVE_INFINITY, writes: 0 }

const failing = <E>(storage: Layer.Layer<Store.Storage, E>) =>
  Layer.effect(
    Store.Storage,
    Effect.map(Effect.service(Store.Storage), (s) => ({
      ...s,
      repository: <A, I>(entity: Store.Entity<A, I>) => {
        const repo = s.repository(entity)
        if (entity.name !== Entities.subscription.name) return repo
        return {
          ...repo,
          update: (a: A, expected: number) =>
            Effect.suspend(() =>
              faults.writes++ >= faults.failAfter ? Effect.die("storage failed midway") : repo.update(a, expected)
            )
        }
      }
    }))
  ).pipe(Layer.provide(storage))

/** A customer of the merchant, by payer id. */
const customer = (merchantId: string, payer_id: string) =>
  Effect.map(
    Customers.Customers.use((c) => c.create(merchantId, { payer_id })),
    (c) => c.id
  )

/** Runs the merchant's due frozen-lane work at `now` (the worker as a sandbox merchant's clock runs it). */
const work = (merchantId: string, now: number) =>
  Worker.Worker.use((w) => w.runDue({ now, owner: "test-worker", lane: "frozen", merchantId }))

/** The merchant's frozen instant. */
const frozenNow = (merchantId: string) =>
  Effect.map(
    Merchants.Merchants.use((m) => m.get(merchantId)),
    (m) => DateTime.toEpochMillis(m.frozen_time!)
  )

/** A second version of `priceId` at `base`, active (the price's current version from now on). */
const nextVersion = (merchantId: string, priceId: string, base: string) =>
  Catalog.Catalog.use((c) =>
    c.createVersion(merchantId, priceId, {
      name: `Plan ${base}`,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", billing_cycle_count: 1, base_price_val: base }
    })
  )

/**
 * Registers the suite.
 *
 * @since 0.1.0
 */
export const suite = <E>(name: string, storage: Layer.Layer<Store.Storage, E>) =>
  layer(engine(failing(storage)), { timeout: "180 seconds" })(
    `Private prices and catalog migrations: ${name}`,
    (it) => {
      it.effect(
        "a private price: listed only for its customer, read by id with customer_id, sold only to its customer, binding a session opened for nobody",
        () =>
          Effect.gen(function* () {
            const catalog = yield* Catalog.Catalog
            const checkout = yield* Checkout.Checkout
            const merchantId = yield* merchantAt(START)
            const productId = yield* productOf(merchantId)
            const publicPrice = yield* monthly(merchantId, productId, "30.00")
            const alice = yield* customer(merchantId, "alice")
            const bob = yield* customer(merchantId, "bob")
            const deal = yield* catalog.createPrice(merchantId, {
              name: "Alice's deal",
              product_id: productId,
              currency: "USD",
              billing_type: "recurring",
              price_type: "flat_price",
              price_plan: { billing_cycle_unit: "month", base_price_val: "25.00" },
              customer_id: alice
            })
            expect(deal.customer_id).toBe(alice)
            expect((yield* catalog.getVersion(merchantId, deal.price_version_id)).customer_id).toBe(alice)
            const ids = (l: { readonly list: ReadonlyArray<{ readonly id: string }> }) => l.list.map((p) => p.id).sort()
            expect(ids(yield* catalog.listPrices(merchantId, {}))).toEqual([publicPrice])
            expect(ids(yield* catalog.listPrices(merchantId, { customer_id: alice }))).toEqual(
              [publicPrice, deal.id].sort()
            )
            expect(ids(yield* catalog.listPrices(merchantId, { customer_id: bob }))).toEqual([publicPrice])
            // a new version keeps the customer; it cannot be moved to another
            const v2 = yield* catalog.createVersion(merchantId, deal.id, {
              name: "Alice's deal",
              currency: "USD",
              billing_type: "recurring",
              price_type: "flat_price",
              price_plan: { billing_cycle_unit: "month", base_price_val: "24.00" }
            })
            expect(v2.customer_id).toBe(alice)
            const moved = yield* Effect.flip(
              catalog.createVersion(merchantId, deal.id, {
                name: "x",
                currency: "USD",
                billing_type: "recurring",
                price_type: "flat_price",
                price_plan: { billing_cycle_unit: "month", base_price_val: "1.00" },
                customer_id: bob
              })
            )
            expect(moved).toMatchObject({ _tag: "InvalidParameter", param: "customer_id" })
            const unknown = yield* Effect.flip(
              catalog.createPrice(merchantId, {
                name: "x",
                product_id: productId,
                currency: "USD",
                billing_type: "one_time",
                price_type: "flat_price",
                price_val: "1.00",
                customer_id: "cus_nobody"
              })
            )
            expect(unknown).toMatchObject({ _tag: "NotFound", param: "customer_id" })

            // bob's checkout finds no such price; alice's sells it; a session for nobody is bound to alice
            const refused = yield* Effect.flip(
              openSession(merchantId, {
                customer_id: bob,
                line_items: [{ price_id: deal.id }],
                return_url: "https://shop.example/done"
              })
            )
            expect(refused).toMatchObject({ _tag: "SessionRefused", reason: "price", missing: true })
            const hers = yield* openSession(merchantId, {
              customer_id: alice,
              line_items: [{ price_id: deal.id }],
              return_url: "https://shop.example/done"
            })
            expect([hers.customer_id, hers.amount]).toEqual([alice, "24.00"])
            // only an email: no customer yet
            const anyone = yield* openSession(merchantId, {
              email: "alice@example.com",
              line_items: [{ price_id: deal.id }],
              return_url: "https://shop.example/done"
            })
            expect(anyone.customer_id).toBe(alice)
            expect((yield* checkout.getSession(merchantId, anyone.session_id)).customer_id).toBe(alice)
            const paid = yield* SessionPayments.SessionPayments.use((p) =>
              p.paySession(merchantId, anyone.session_id, card("4242424242424242"))
            )
            expect(subscriptionOf(paid)).toMatchObject({ customer_id: alice, price_id: deal.id })

            // bob's subscription cannot change to alice's price: no such price for it
            const bobs = subscriptionOf(
              (yield* subscribe(merchantId, publicPrice, "4242424242424242", { payer_id: "bob" })).result
            )
            expect(bobs.customer_id).toBe(bob)
            const change = yield* Effect.flip(
              PriceChanges.PriceChanges.use((p) =>
                p.previewChange(merchantId, PriceChanges.change(bobs.id, { priceId: deal.id }))
              )
            )
            expect(change).toMatchObject({ _tag: "PriceChangeRefused", reason: "not_found" })
            // alice's can
            const alices = subscriptionOf(
              (yield* subscribe(merchantId, publicPrice, "4242424242424242", { payer_id: "alice" })).result
            )
            const quote = yield* PriceChanges.PriceChanges.use((p) =>
              p.previewChange(merchantId, PriceChanges.change(alices.id, { priceId: deal.id, proration: "none" }))
            )
            expect(quote.outcome).toBe("none")

            // the portal offers the private price as a switch to its customer only
            const portal = yield* Portal.Portal
            yield* Effect.flatMap(
              Requests.portalSettingsCommand({ switch_prices: [publicPrice, deal.id] }),
              (command) => Requests.refusedAsParameter(portal.setSettings(merchantId, command))
            )
            const optionsOf = (customerId: string) =>
              Effect.gen(function* () {
                const command = yield* Requests.portalSessionCommand({ customer_id: customerId })
                const link = yield* Requests.refusedAsParameter(portal.createSession(merchantId, command))
                const [id, token] = link.url.split("/").slice(-2)
                const session = Option.getOrThrow(yield* portal.sessionOf(id!, token!))
                return (yield* portal.view(session)).subscriptions.flatMap((v) =>
                  v.switch_options.map((o) => o.price_id)
                )
              })
            expect(yield* optionsOf(bob)).toEqual([])
            // alice's subscription on the public price may switch to the deal, the one on the deal back
            expect([...(yield* optionsOf(alice))].sort()).toEqual([publicPrice, deal.id].sort())
          })
      )

      it.effect(
        "a migration: previewed with each next invoice before and after, refused mistakes, run once by the worker, billed at the new version, one event per subscription",
        () =>
          Effect.gen(function* () {
            const migrations = yield* PriceMigrations.PriceMigrations
            const merchantId = yield* merchantAt(START)
            const productId = yield* productOf(merchantId)
            const priceId = yield* monthly(merchantId, productId, "30.00")
            const other = yield* monthly(merchantId, productId, "50.00")
            const v1 = (yield* Catalog.Catalog.use((c) => c.sellableVersion(merchantId, priceId))).price_version_id
            const subs: Array<Subscription.Subscription> = []
            for (let i = 0; i < 3; i++) subs.push(subscriptionOf((yield* subscribe(merchantId, priceId)).result))
            // one has its own change scheduled: the migration leaves it alone
            yield* PriceChanges.PriceChanges.use((p) =>
              p.changePrice(
                merchantId,
                PriceChanges.change(subs[2]!.id, { priceId: other, effective: "end_of_period" })
              )
            )
            const v2 = yield* nextVersion(merchantId, priceId, "40.00")
            // sold after the new version: already on it, not in the migration
            const later = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
            expect(later.price_version_id).toBe(v2.price_version_id)

            const wrong = (command: PriceMigrations.MigrationCommand, pid = priceId) =>
              Effect.flip(migrations.preview(merchantId, pid, command))
            expect(
              yield* wrong({ from_version_id: v1, to_version_id: v2.price_version_id, effective: "immediate" })
            ).toMatchObject({ _tag: "InvalidParameter", param: "effective" })
            expect(yield* wrong({ from_version_id: v1, to_version_id: v1 })).toMatchObject({
              _tag: "InvalidParameter",
              param: "to_version_id"
            })
            const otherVersion = (yield* Catalog.Catalog.use((c) => c.sellableVersion(merchantId, other)))
              .price_version_id
            expect(yield* wrong({ from_version_id: v1, to_version_id: otherVersion })).toMatchObject({
              _tag: "NotFound",
              param: "to_version_id"
            })
            expect(yield* wrong({ from_version_id: "prv_nothing", to_version_id: v2.price_version_id })).toMatchObject({
              _tag: "NotFound",
              param: "from_version_id"
            })
            expect(
              yield* wrong({ from_version_id: v1, to_version_id: v2.price_version_id }, "pri_nothing")
            ).toMatchObject({ _tag: "PriceNotFound" })

            const preview = yield* migrations.preview(merchantId, priceId, {
              from_version_id: v1,
              to_version_id: v2.price_version_id
            })
            expect([preview.status, preview.total, preview.pending, preview.skipped, preview.migrated]).toEqual([
              "previewed",
              3,
              2,
              1,
              0
            ])
            const lines = yield* migrations.listLines(merchantId, priceId, preview.migration_id, { limit: 100 })
            const bySub = new Map(lines.list.map((l) => [l.subscription_id, l]))
            for (const s of subs.slice(0, 2))
              expect(bySub.get(s.id)).toMatchObject({
                outcome: "pending",
                reason: null,
                currency: "USD",
                before_subtotal: "30.00",
                before_amount: "30.00",
                after_subtotal: "40.00",
                after_amount: "40.00"
              })
            expect(bySub.get(subs[2]!.id)).toMatchObject({ outcome: "skipped", reason: "scheduled_change" })
            expect(bySub.has(later.id)).toBe(false)
            // paged
            const first = yield* migrations.listLines(merchantId, priceId, preview.migration_id, { limit: 2 })
            const rest = yield* migrations.listLines(merchantId, priceId, preview.migration_id, {
              limit: 2,
              starting_after: first.list[1]!.line_id
            })
            expect([first.has_more, rest.has_more, rest.list.length]).toEqual([true, false, 1])
            // the upcoming invoice before the run is the old version's
            const renewals = yield* Renewals.Renewals
            expect(Option.getOrThrow(yield* renewals.upcoming(merchantId, subs[0]!.id)).amount).toBe("30.00")
            // another price's migration id is no such migration
            expect(yield* Effect.flip(migrations.get(merchantId, other, preview.migration_id))).toMatchObject({
              _tag: "NotFound"
            })

            const running = yield* migrations.run(merchantId, priceId, preview.migration_id)
            expect(running.status).toBe("running")
            expect(yield* Effect.flip(migrations.run(merchantId, priceId, preview.migration_id))).toMatchObject({
              _tag: "StateConflict"
            })
            expect(yield* Effect.flip(migrations.cancel(merchantId, priceId, preview.migration_id))).toMatchObject({
              _tag: "StateConflict"
            })
            yield* work(merchantId, yield* frozenNow(merchantId))
            const done = yield* migrations.get(merchantId, priceId, preview.migration_id)
            expect([done.status, done.total, done.pending, done.migrated, done.skipped]).toEqual([
              "completed",
              3,
              0,
              2,
              1
            ])
            expect(done.completed_at).not.toBeNull()
            for (const s of subs.slice(0, 2)) {
              expect((yield* eventsOf(merchantId, s.id)).filter((t) => t === "v2.subscription.migrated")).toHaveLength(
                1
              )
              expect(Option.getOrThrow(yield* renewals.upcoming(merchantId, s.id)).amount).toBe("40.00")
            }
            expect(yield* eventsOf(merchantId, subs[2]!.id)).not.toContain("v2.subscription.migrated")
            // running the worker again moves nothing twice
            yield* migrations.process(merchantId, preview.migration_id)
            for (const s of subs.slice(0, 2))
              expect((yield* eventsOf(merchantId, s.id)).filter((t) => t === "v2.subscription.migrated")).toHaveLength(
                1
              )

            // the next renewal bills the new version, exactly as the preview said
            yield* SandboxClock.SandboxClock.use((c) => c.advanceClock(merchantId, iso("2026-04-01T00:00:01Z")))
            for (const s of subs.slice(0, 2)) {
              const invoices = yield* invoicesOf(merchantId, s.id)
              expect(invoices.map((i) => i.amount)).toEqual(["30.00", "40.00"])
              expect(invoices[1]!.price_version_id).toBe(v2.price_version_id)
            }
          })
      )

      it.effect(
        "a migration of a price held as an add-on item: previewed with every line of the next invoice, the item moved once (its event, the base item untouched), billed at the new version by the renewal",
        () =>
          Effect.gen(function* () {
            const migrations = yield* PriceMigrations.PriceMigrations
            const renewals = yield* Renewals.Renewals
            const storage = yield* Store.Storage
            const merchantId = yield* merchantAt(START)
            const productId = yield* productOf(merchantId)
            const team = yield* monthly(merchantId, productId, "49.00")
            const sso = yield* monthly(merchantId, yield* productOf(merchantId, "SSO"), "99.00")
            const v1 = (yield* Catalog.Catalog.use((c) => c.sellableVersion(merchantId, sso))).price_version_id
            // two subscriptions hold SSO as their second item, one holds it alone (its base item)
            const withAddon: Array<string> = []
            for (let i = 0; i < 2; i++)
              withAddon.push(
                (yield* checkout(merchantId, { line_items: [{ price_id: team }, { price_id: sso }] })).subscriptionId
              )
            const alone = subscriptionOf((yield* subscribe(merchantId, sso)).result).id
            const teamOnly = subscriptionOf((yield* subscribe(merchantId, team)).result).id
            const v2 = yield* nextVersion(merchantId, sso, "120.00")

            const preview = yield* migrations.preview(merchantId, sso, {
              from_version_id: v1,
              to_version_id: v2.price_version_id
            })
            expect([preview.total, preview.pending, preview.skipped]).toEqual([3, 3, 0])
            const lines = yield* migrations.listLines(merchantId, sso, preview.migration_id, { limit: 100 })
            const bySub = new Map(lines.list.map((l) => [l.subscription_id, l]))
            expect(bySub.has(teamOnly)).toBe(false)
            const records = storage.repository(Entities.subscription)
            for (const id of withAddon) {
              const rec = Option.getOrThrow(yield* records.get(merchantId, id)).value
              // the next invoice before and after holds both lines: 49.00 + 99.00, then 49.00 + 120.00
              expect(bySub.get(id)).toMatchObject({
                item_id: rec.extra_items[0]!.id,
                outcome: "pending",
                before_amount: "148.00",
                after_amount: "169.00"
              })
            }
            expect(bySub.get(alone)).toMatchObject({ before_amount: "99.00", after_amount: "120.00" })
            expect(bySub.get(alone)!.item_id).toMatch(/^si_/)

            yield* migrations.run(merchantId, sso, preview.migration_id)
            yield* work(merchantId, yield* frozenNow(merchantId))
            yield* migrations.process(merchantId, preview.migration_id)
            const done = yield* migrations.get(merchantId, sso, preview.migration_id)
            expect([done.status, done.migrated, done.skipped]).toEqual(["completed", 3, 0])
            for (const id of [...withAddon, alone]) {
              expect((yield* eventsOf(merchantId, id)).filter((t) => t === "v2.subscription.migrated")).toHaveLength(1)
              expect(Option.getOrThrow(yield* renewals.upcoming(merchantId, id)).amount).toBe(
                id === alone ? "120.00" : "169.00"
              )
            }
            const moved = Option.getOrThrow(yield* records.get(merchantId, withAddon[0]!)).value
            // the base item keeps its price; the add-on bills v1 until the renewal, v2 scheduled
            expect(moved.scheduled_price_version_id).toBeNull()
            expect([
              moved.extra_items[0]!.price_version_id,
              moved.extra_items[0]!.scheduled_version?.price_version_id
            ]).toEqual([v1, v2.price_version_id])
            // a second preview skips them: the move is scheduled
            const again = yield* migrations.preview(merchantId, sso, {
              from_version_id: v1,
              to_version_id: v2.price_version_id
            })
            expect([again.total, again.pending, again.skipped]).toEqual([3, 0, 3])

            yield* SandboxClock.SandboxClock.use((c) => c.advanceClock(merchantId, iso("2026-04-01T00:00:01Z")))
            for (const id of withAddon) {
              const invoices = yield* invoicesOf(merchantId, id)
              expect(invoices.map((i) => i.amount)).toEqual(["148.00", "169.00"])
              expect(invoices[1]!.lines.map((l) => l.amount)).toEqual(["49.00", "120.00"])
              const rec = Option.getOrThrow(yield* records.get(merchantId, id)).value
              expect([rec.extra_items[0]!.price_version_id, rec.extra_items[0]!.scheduled_version ?? null]).toEqual([
                v2.price_version_id,
                null
              ])
              expect(rec.extra_items[0]!.version.price_plan?.base_price_val).toBe("120.00")
              expect(yield* eventsOf(merchantId, id)).toContain("v2.subscription.price_changed")
            }
          })
      )

      it.effect(
        "a migration: canceled before it runs; a subscription written since the preview is skipped and reported",
        () =>
          Effect.gen(function* () {
            const migrations = yield* PriceMigrations.PriceMigrations
            const storage = yield* Store.Storage
            const merchantId = yield* merchantAt(START)
            const priceId = yield* monthly(merchantId, yield* productOf(merchantId), "30.00")
            const v1 = (yield* Catalog.Catalog.use((c) => c.sellableVersion(merchantId, priceId))).price_version_id
            const a = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
            const b = subscriptionOf((yield* subscribe(merchantId, priceId)).result)
            const v2 = yield* nextVersion(merchantId, priceId, "35.00")
            const command = { from_version_id: v1, to_version_id: v2.price_version_id }

            const dropped = yield* migrations.preview(merchantId, priceId, command)
            const canceled = yield* migrations.cancel(merchantId, priceId, dropped.migration_id)
            expect(canceled.status).toBe("canceled")
            expect(canceled.canceled_at).not.toBeNull()
            expect(yield* Effect.flip(migrations.run(merchantId, priceId, dropped.migration_id))).toMatchObject({
              _tag: "StateConflict"
            })

            const preview = yield* migrations.preview(merchantId, priceId, command)
            // b is written after the preview (any write: its preview no longer holds)
            const subs = storage.repository(Entities.subscription)
            const bv = Option.getOrThrow(yield* subs.get(merchantId, b.id))
            yield* Effect.orDie(subs.update(bv.value, bv.version))
            yield* migrations.run(merchantId, priceId, preview.migration_id)
            yield* work(merchantId, yield* frozenNow(merchantId))
            const done = yield* migrations.get(merchantId, priceId, preview.migration_id)
            expect([done.status, done.migrated, done.skipped]).toEqual(["completed", 1, 1])
            const skipped = yield* migrations.listLines(merchantId, priceId, preview.migration_id, {
              outcome: "skipped"
            })
            expect(skipped.list.map((l) => [l.subscription_id, l.reason])).toEqual([[b.id, "changed_since_preview"]])
            expect(yield* eventsOf(merchantId, a.id)).toContain("v2.subscription.migrated")
            expect(yield* eventsOf(merchantId, b.id)).not.toContain("v2.subscription.migrated")
          })
      )

      it.effect(
        "a migration's run fails midway (storage fails on a subscription write) and resumes: each subscription moved once, one event each, completed with its counts",
        () =>
          Effect.gen(function* () {
            const migrations = yield* PriceMigrations.PriceMigrations
            const merchantId = yield* merchantAt(START)
            const priceId = yield* monthly(merchantId, yield* productOf(merchantId), "30.00")
            const v1 = (yield* Catalog.Catalog.use((c) => c.sellableVersion(merchantId, priceId))).price_version_id
            const subs: Array<Subscription.Subscription> = []
            for (let i = 0; i < 6; i++) subs.push(subscriptionOf((yield* subscribe(merchantId, priceId)).result))
            const v2 = yield* nextVersion(merchantId, priceId, "45.00")
            const preview = yield* migrations.preview(merchantId, priceId, {
              from_version_id: v1,
              to_version_id: v2.price_version_id
            })
            yield* migrations.run(merchantId, priceId, preview.migration_id)
            const now = yield* frozenNow(merchantId)
            // the third subscription write fails: two lines committed, the third rolled back
            faults.writes = 0
            faults.failAfter = 2
            yield* work(merchantId, now).pipe(Effect.ensuring(Effect.sync(() => (faults.failAfter = Infinity))))
            const stopped = yield* migrations.get(merchantId, priceId, preview.migration_id)
            expect([stopped.status, stopped.migrated, stopped.pending]).toEqual(["running", 2, 4])
            const migratedEvents = () =>
              Effect.forEach(subs, (s) =>
                Effect.map(
                  eventsOf(merchantId, s.id),
                  (types) => types.filter((t) => t === "v2.subscription.migrated").length
                )
              )
            expect((yield* migratedEvents()).reduce((a, n) => a + n, 0)).toBe(2)
            // the work item stays, claimable again after its back-off: the rerun resumes
            yield* work(merchantId, now + 120_000)
            const done = yield* migrations.get(merchantId, priceId, preview.migration_id)
            expect([done.status, done.total, done.pending, done.migrated, done.skipped]).toEqual([
              "completed",
              6,
              0,
              6,
              0
            ])
            expect(yield* migratedEvents()).toEqual([1, 1, 1, 1, 1, 1])
            const records = yield* (yield* Store.Storage).repository(Entities.subscription).getMany(
              merchantId,
              subs.map((s) => s.id)
            )
            for (const s of subs) expect(records.get(s.id)!.value.scheduled_price_version_id).toBe(v2.price_version_id)
          })
      )
    }
  )
