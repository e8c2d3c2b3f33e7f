/**
 * Behaviour of the merchant, customer and catalog services, run against any storage
 * adapter: the same story must hold on memory, PGlite and PostgreSQL.
 *
 * @since 0.1.0
 */
import { expect, layer } from "@effect/vitest"
import { Catalog, Customers, Entities, Merchants, Secrets, Store } from "@recur/core"
import { Effect, Result, Layer, Option, Redacted } from "effect"
import { TestClock } from "effect/testing"

/**
 * A fixed master key for tests.
 *
 * @since 0.1.0
 */
export const testMasterKey = Redacted.make("8f".repeat(32))

/**
 * The services on a storage layer.
 *
 * @since 0.1.0
 */
export const services = <E>(storage: Layer.Layer<Store.Storage, E>) =>
  Layer.mergeAll(Merchants.Merchants.layer, Customers.Customers.layer, Catalog.Catalog.layer).pipe(
    Layer.provideMerge(Layer.merge(storage, Secrets.layer(testMasterKey)))
  )

const monthly = (product_id: string, extra: Record<string, unknown> = {}) => ({
  name: "Pro monthly",
  product_id,
  currency: "USD",
  billing_type: "recurring",
  price_type: "flat_price",
  price_plan: { billing_cycle_unit: "month", billing_cycle_count: 1, base_price_val: "30.00" },
  ...extra
})

/**
 * Registers the services suite for a storage layer.
 *
 * @since 0.1.0
 */
export const suite = <E>(name: string, storage: Layer.Layer<Store.Storage, E>) =>
  layer(services(storage), { timeout: "60 seconds" })(`Services: ${name}`, (it) => {
    const newMerchant = Merchants.Merchants.use((m) => m.create({ name: "Acme", currency: "USD" }))

    it.effect("creates a merchant with a default category and a key shown once, stored only hashed and encrypted", () =>
      Effect.gen(function* () {
        const merchants = yield* Merchants.Merchants
        const created = yield* newMerchant
        expect(created.api_key).toMatch(/^sk_test_[A-Za-z0-9]{20,}$/)
        expect(created.merchant.merchant_id).toMatch(/^mch_/)
        const { merchant } = yield* merchants.authenticate(created.api_key)
        expect(merchant.merchant_id).toBe(created.merchant.merchant_id)
        const stored = Option.getOrThrow(
          yield* (yield* Store.Storage).repository(Entities.apiKey).get(merchant.merchant_id, created.key_id)
        ).value
        expect(stored.lookup_hash).toBe(yield* Secrets.sha256Hex(created.api_key))
        expect(JSON.stringify(stored)).not.toContain(created.api_key.slice(8))
        expect(stored.last4).toBe(created.api_key.slice(-4))
        const categories = yield* (yield* Catalog.Catalog).listCategories(merchant.merchant_id)
        expect(categories.total).toBe(1)
        expect(categories.list[0]!.is_default).toBe(true)
        const bad = yield* Effect.flip(merchants.create({ name: "X", currency: "XYZ" }))
        expect(bad).toMatchObject({ _tag: "InvalidParameter", param: "currency" })
      })
    )

    it.effect("rotation keeps the old key for its grace period; revocation is immediate", () =>
      Effect.gen(function* () {
        const merchants = yield* Merchants.Merchants
        const created = yield* newMerchant
        const id = created.merchant.merchant_id
        const rotated = yield* merchants.rotateKey(id, { graceMs: 60_000 })
        expect((yield* merchants.authenticate(created.api_key)).merchant.merchant_id).toBe(id)
        expect((yield* merchants.authenticate(rotated.api_key)).merchant.merchant_id).toBe(id)
        const keys = yield* merchants.signingKeys(id)
        expect([Option.getOrThrow(keys.current), Option.getOrThrow(keys.previous)]).toEqual([
          rotated.api_key,
          created.api_key
        ])
        yield* TestClock.adjust("61 seconds")
        expect((yield* Effect.flip(merchants.authenticate(created.api_key)))._tag).toBe("Unauthorized")
        expect(Option.isNone((yield* merchants.signingKeys(id)).previous)).toBe(true)
        yield* merchants.revokeKey(id, rotated.key_id)
        expect((yield* Effect.flip(merchants.authenticate(rotated.api_key)))._tag).toBe("Unauthorized")
        for (const k of ["", "Bearer x", "sk_test_", `${rotated.api_key}x`, `sk_live_${"a".repeat(32)}`]) {
          expect((yield* Effect.flip(merchants.authenticate(k)))._tag).toBe("Unauthorized")
        }
        const third = yield* merchants.rotateKey(id)
        yield* TestClock.adjust("2 minutes")
        expect((yield* merchants.authenticate(third.api_key)).key_id).toBe(third.key_id)
      })
    )

    it.effect("customers: members and guests, payer_id unique, customer_id wins, soft delete", () =>
      Effect.gen(function* () {
        const customers = yield* Customers.Customers
        const m = (yield* newMerchant).merchant.merchant_id
        const guest = yield* customers.create(m, {
          email: "ada@example.com",
          address: { line1: "1 Main St", city: "Springfield", country: "US" }
        })
        expect(guest.type).toBe("guest")
        expect(Customers.toCustomer(guest).address).toBe("1 Main St, Springfield, US")
        const member = yield* customers.create(m, { payer_id: "u-1", name: "Grace" })
        expect(member.type).toBe("customer")
        expect(yield* Effect.flip(customers.create(m, { payer_id: "u-1" }))).toMatchObject({
          _tag: "DuplicateResource",
          param: "payer_id"
        })
        expect((yield* Effect.flip(customers.create(m, { email: "a@b.co", payer_id: "u-2" })))._tag).toBe(
          "InvalidRequest"
        )
        expect(yield* Effect.flip(customers.create(m, {}))).toMatchObject({ _tag: "InvalidParameter" })
        expect(yield* Effect.flip(customers.create(m, { email: "not-an-email" }))).toMatchObject({
          _tag: "InvalidParameter",
          param: "email"
        })
        // customer_id wins over payer_id
        const updated = yield* customers.update(m, { customer_id: guest.id, payer_id: "u-1", name: "Ada L." })
        expect(updated.id).toBe(guest.id)
        expect((yield* customers.get(m, member.id)).name).toBe("Grace")
        yield* customers.update(m, { payer_id: "u-1", phone: "+1 555" })
        expect((yield* customers.get(m, member.id)).phone).toBe("+1 555")
        expect((yield* Effect.flip(customers.update(m, { customer_id: "cus_nope" })))._tag).toBe("NotFound")
        // filters
        const ids = (p: { list: ReadonlyArray<{ id: string }> }) => p.list.map((c) => c.id)
        expect(ids(yield* customers.list(m, { emails: ["ada@example.com"] }))).toEqual([guest.id])
        expect(ids(yield* customers.list(m, { payer_ids: ["u-1"] }))).toEqual([member.id])
        expect(ids(yield* customers.list(m, { type: "guest" }))).toEqual([guest.id])
        expect(ids(yield* customers.list(m, { customer_ids: [member.id, guest.id] })).sort()).toEqual(
          [member.id, guest.id].sort()
        )
        expect(
          yield* Effect.flip(customers.list(m, { emails: Array.from({ length: 11 }, (_, i) => `${i}@x.io`) }))
        ).toMatchObject({ param: "emails" })
        expect((yield* Effect.flip(customers.list(m, { limit: 0 })))._tag).toBe("InvalidParameter")
        expect((yield* Effect.flip(customers.list(m, { starting_after: "cus_x", ending_before: "cus_y" })))._tag).toBe(
          "InvalidRequest"
        )
        // soft delete by payer_id frees the payer_id
        yield* customers.delete(m, { payer_id: "u-1" })
        expect((yield* Effect.flip(customers.get(m, member.id)))._tag).toBe("NotFound")
        expect(ids(yield* customers.list(m, {}))).toEqual([guest.id])
        yield* customers.create(m, { payer_id: "u-1" })
        // another merchant sees nothing
        const other = (yield* newMerchant).merchant.merchant_id
        expect((yield* Effect.flip(customers.get(other, guest.id)))._tag).toBe("NotFound")
        expect((yield* customers.list(other, {})).list).toEqual([])
      })
    )

    it.effect("catalog: products, prices validated by every rule, versions and their status moves", () =>
      Effect.gen(function* () {
        const catalog = yield* Catalog.Catalog
        const m = (yield* newMerchant).merchant.merchant_id
        const product = yield* catalog.createProduct(m, { product_name: "Pro" })
        expect(product.category_name).toBe("Default")
        expect(yield* Effect.flip(catalog.createProduct(m, {}))).toMatchObject({ param: "product_name" })
        const v1 = yield* catalog.createPrice(m, monthly(product.product_id, { merchant_price_id: " pro:monthly " }))
        expect(v1.biz_status).toBe("active")
        expect(v1.merchant_price_id).toBe("pro:monthly")
        expect((yield* catalog.getVersion(m, v1.price_version_id)).price_plan?.base_price_val).toBe("30.00")
        expect(
          yield* Effect.flip(catalog.createPrice(m, monthly(product.product_id, { merchant_price_id: "pro:monthly" })))
        ).toMatchObject({ _tag: "DuplicateResource", param: "merchant_price_id" })
        const invalid = yield* Effect.flip(
          catalog.createPrice(
            m,
            monthly(product.product_id, { billing_dimension: "mixed", merchant_price_id: "bad id" })
          )
        )
        expect(invalid._tag).toBe("PriceRuleViolation")
        expect(invalid._tag === "PriceRuleViolation" && invalid.issues.map((i) => i.field)).toEqual([
          "billing_dimension",
          "merchant_price_id"
        ])
        expect(yield* Effect.flip(catalog.createPrice(m, monthly("prd_missing")))).toMatchObject({
          param: "product_id"
        })
        // product list filters by price id and status
        const listed = yield* catalog.listProducts(m, { price_ids: [v1.id] })
        expect(listed.list.map((p) => p.product_id)).toEqual([product.product_id])
        expect((yield* catalog.listProducts(m, { status: "disabled" })).list).toEqual([])
        // status moves: active ⇄ disabled; never back to draft
        yield* catalog.setProductStatus(m, product.product_id, "disabled")
        yield* catalog.setProductStatus(m, product.product_id, "active")
        expect((yield* Effect.flip(catalog.setProductStatus(m, product.product_id, "draft")))._tag).toBe(
          "StateConflict"
        )
        // versions: draft → active ⇄ frozen; only active sells
        const v2 = yield* catalog.createVersion(m, v1.id, {
          ...monthly(product.product_id),
          price_plan: { billing_cycle_unit: "month", base_price_val: "35.00" },
          status: "draft"
        })
        expect(v2.biz_status).toBe("draft")
        expect((yield* catalog.sellableVersion(m, v1.id)).price_version_id).toBe(v1.price_version_id)
        yield* catalog.setVersionStatus(m, v2.price_version_id, "active")
        expect((yield* catalog.sellableVersion(m, v1.id)).price_version_id).toBe(v2.price_version_id)
        yield* catalog.setVersionStatus(m, v2.price_version_id, "frozen")
        expect((yield* Effect.flip(catalog.sellableVersion(m, v1.id)))._tag).toBe("StateConflict")
        expect((yield* Effect.flip(catalog.setVersionStatus(m, v2.price_version_id, "draft")))._tag).toBe(
          "StateConflict"
        )
        expect((yield* Effect.flip(catalog.setVersionStatus(m, v2.price_version_id, "gone")))._tag).toBe(
          "InvalidParameter"
        )
        yield* catalog.setVersionStatus(m, v2.price_version_id, "active")
        const versions = yield* catalog.listVersions(m, v1.id)
        expect(versions.list.map((v) => v.price_version_id)).toEqual([v2.price_version_id, v1.price_version_id])
        expect(
          (yield* catalog.listPrices(m, { product_id: product.product_id })).list.map((v) => v.price_version_id)
        ).toEqual([v2.price_version_id])
        // another merchant sees none of it
        const other = (yield* newMerchant).merchant.merchant_id
        expect((yield* Effect.flip(catalog.getVersion(other, v1.price_version_id)))._tag).toBe("NotFound")
        expect((yield* catalog.listProducts(other, { price_ids: [v1.id] })).list).toEqual([])
      })
    )

    it.effect("a change interrupted between its writes leaves no partial row", () =>
      Effect.gen(function* () {
        const storage = yield* Store.Storage
        const m = (yield* newMerchant).merchant.merchant_id
        const product = yield* (yield* Catalog.Catalog).createProduct(m, { product_name: "Crashy" })
        // the same catalog, on a storage whose price-version insert dies after the price row is written
        const faulty = Store.Storage.of({
          ...storage,
          repository: (entity) => {
            const repo = storage.repository(entity)
            return entity.name === "price_version"
              ? { ...repo, insert: () => Effect.die("injected crash after the first write") }
              : repo
          }
        })
        const crashed = yield* Effect.exit(
          Catalog.Catalog.use((c) =>
            c.createPrice(m, monthly(product.product_id, { merchant_price_id: "crashy" }))
          ).pipe(Effect.provide(Catalog.Catalog.layer, { local: true }), Effect.provideService(Store.Storage, faulty))
        )
        expect(crashed._tag).toBe("Failure")
        expect((yield* storage.repository(Entities.price).list(m, { limit: 10 })).list).toEqual([])
        expect(
          Option.getOrThrow(yield* storage.repository(Entities.product).get(m, product.product_id)).value.price_ids
        ).toEqual([])
        // and the merchant_price_id is still free
        const ok = yield* (yield* Catalog.Catalog).createPrice(
          m,
          monthly(product.product_id, { merchant_price_id: "crashy" })
        )
        expect(Result.isSuccess(Result.succeed(ok))).toBe(true)
      })
    )
  })
