/**
 * The catalog: categories (one default per merchant), products and prices with immutable,
 * versioned price versions.
 *
 * @since 0.1.0
 */
import { Context, DateTime, Effect, Layer, Option, Result } from "effect"
import * as Money from "../money/Money.js"
import { Feature, type Metadata, QuantityTier, UsageTier } from "../kernel/Common.js"
import * as Entitlement from "../entitlements/Entitlement.js"
import * as Entities from "../kernel/Entities.js"
import { merchantNow } from "../kernel/ServiceSupport.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { maxItems, pageErrors } from "../kernel/Paging.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Price from "./Price.js"
import * as PriceRules from "./PriceRules.js"
import { Category, Product } from "./Product.js"
import type * as Store from "../kernel/Store.js"
import { Storage } from "../kernel/Store.js"
import { forPrice } from "../usage/BillableMetrics.js"

/**
 * A new product as given (the merchant API's body).
 *
 * @since 0.1.0
 */
export interface CreateProduct {
  readonly product_name?: string | undefined
  readonly description?: string | undefined
  readonly category_id?: string | undefined
  readonly image_url?: string | undefined
  readonly merchant_product_id?: string | undefined
  readonly quantity_unit?: string | undefined
  readonly features?: ReadonlyArray<Feature> | undefined
  readonly metadata?: Metadata | undefined
  readonly product_status?: "draft" | "active" | undefined
  /** What a subscription to the product grants (`seats: 10`, `sso: true`). */
  readonly entitlements?: Readonly<Record<string, boolean | number>> | undefined
}

/** The features as given, or `InvalidParameter` naming `entitlements`. */
const checkedFeatures = (features: Readonly<Record<string, boolean | number>> | undefined) => {
  const reason = features === undefined ? undefined : Entitlement.invalidFeatures(features)
  return reason === undefined
    ? Effect.succeed<Entitlement.Features>(features ?? {})
    : Effect.fail(new Errors.InvalidParameter({ param: "entitlements", reason }))
}

/**
 * Product list filters.
 *
 * @since 0.1.0
 */
export interface ListProducts {
  readonly price_ids?: ReadonlyArray<string>
  readonly status?: Lifecycle.ProductStatus
  readonly created?: Store.CreatedRange
  readonly limit?: number
  readonly starting_after?: string
  readonly ending_before?: string
}

/**
 * A category as the API returns it.
 *
 * @since 0.1.0
 */
export const toCategory = (c: Entities.CategoryRecord) =>
  new Category({
    category_id: c.id,
    category_name: c.name,
    description: c.description,
    category_status: c.status,
    chinese_name: c.chinese_name,
    chinese_description: c.chinese_description,
    is_default: c.is_default
  })

/**
 * A product as the API returns it.
 *
 * @since 0.1.0
 */
export const toProduct = (p: Entities.ProductRecord, categoryName: string) =>
  new Product({
    product_id: p.id,
    product_name: p.name,
    product_status: p.status,
    merchant_product_id: p.merchant_product_id,
    category_id: p.category_id,
    description: p.description,
    image_url: p.image_url,
    category_name: categoryName,
    created_by: p.created_by,
    created_at: DateTime.makeUnsafe(p.created_at),
    quantity_unit: p.quantity_unit,
    features: p.features,
    entitlements: p.entitlements,
    metadata: p.metadata
  })

const invalidTransition = (resource: string, id: string) => (e: Lifecycle.InvalidTransition) =>
  new Errors.StateConflict({ resource, id, state: e.from, reason: `cannot ${e.trigger}` })

/**
 * The catalog service.
 *
 * @since 0.1.0
 */
export class Catalog extends Context.Service<Catalog>()("@recur/core/Catalog", {
  make: Effect.gen(function* () {
    const storage = yield* Storage
    const categories = storage.repository(Entities.category)
    const products = storage.repository(Entities.product)
    const prices = storage.repository(Entities.price)
    const versions = storage.repository(Entities.priceVersion)
    const customers = storage.repository(Entities.customer)
    const now = merchantNow(storage)

    const listCategories = Effect.fn("Catalog.listCategories")(function* (merchantId: string) {
      const page = yield* Effect.orDie(categories.list(merchantId, { limit: 100 }))
      return { total: page.list.length, list: page.list.map(toCategory) }
    })

    const defaultCategory = (merchantId: string) =>
      Effect.flatMap(categories.findBy(merchantId, "default_key", "default"), (o) =>
        Option.match(o, {
          onNone: () => Effect.die(`merchant ${merchantId} has no default category`),
          onSome: (v) => Effect.succeed(v.value)
        })
      )

    const categoryName = (merchantId: string, categoryId: string) =>
      Effect.map(categories.get(merchantId, categoryId), (o) =>
        Option.match(o, { onNone: () => "", onSome: (v) => v.value.name })
      )

    const getProductRecord = (merchantId: string, productId: string) =>
      Effect.flatMap(products.get(merchantId, productId), (o) =>
        Option.match(o, {
          onNone: () => Effect.fail(new Errors.NotFound({ resource: "product", id: productId })),
          onSome: Effect.succeed
        })
      )

    const createProduct = Effect.fn("Catalog.createProduct")(function* (merchantId: string, input: CreateProduct) {
      const name = input.product_name?.trim() ?? ""
      if (name === "" || name.length > 255)
        return yield* new Errors.InvalidParameter({
          param: "product_name",
          reason: "is required (1 to 255 characters)"
        })
      const category =
        input.category_id !== undefined
          ? Option.getOrUndefined(Option.map(yield* categories.get(merchantId, input.category_id), (v) => v.value))
          : yield* defaultCategory(merchantId)
      if (!category)
        return yield* input.category_id !== undefined
          ? new Errors.NotFound({ resource: "category", id: input.category_id, param: "category_id" })
          : new Errors.InvalidParameter({ param: "category_id", reason: "no such category" })
      const entitlements = yield* checkedFeatures(input.entitlements)
      const at = yield* now(merchantId)
      const record: Entities.ProductRecord = {
        id: yield* Ids.make(Ids.prefixes.product),
        merchant_id: merchantId,
        name,
        status: Result.getOrThrow(Lifecycle.bornAs(Lifecycle.product, input.product_status ?? "active")),
        merchant_product_id: input.merchant_product_id ?? null,
        category_id: category.id,
        description: input.description ?? null,
        image_url: input.image_url ?? null,
        created_by: null,
        quantity_unit: input.quantity_unit ?? null,
        features: (input.features ?? []).map((f) => new Feature(f)),
        entitlements,
        metadata: input.metadata ?? {},
        price_ids: [],
        created_at: at,
        updated_at: at
      }
      yield* Effect.orDie(products.insert(record))
      return toProduct(record, category.name)
    })

    const setProductStatus = Effect.fn("Catalog.setProductStatus")(function* (
      merchantId: string,
      productId: string,
      status: Lifecycle.ProductStatus
    ) {
      const current = yield* getProductRecord(merchantId, productId)
      if (current.value.status === status) return current.value
      const trigger = status === "active" ? "activate" : status === "disabled" ? "disable" : undefined
      if (trigger === undefined)
        return yield* new Errors.StateConflict({
          resource: "product",
          id: productId,
          state: current.value.status,
          reason: "cannot return to draft"
        })
      const moved = Lifecycle.transition(Lifecycle.product, current.value.status, trigger)
      if (Result.isFailure(moved)) return yield* invalidTransition("product", productId)(moved.failure)
      const next = { ...current.value, status: moved.success.to, updated_at: yield* now(merchantId) }
      yield* Effect.orDie(products.update(next, current.version))
      return next
    })

    const getProduct = Effect.fn("Catalog.getProduct")(function* (merchantId: string, productId: string) {
      const p = (yield* getProductRecord(merchantId, productId)).value
      return toProduct(p, yield* categoryName(merchantId, p.category_id))
    })

    const listProducts = Effect.fn("Catalog.listProducts")(function* (merchantId: string, q: ListProducts) {
      yield* maxItems("price_ids", q.price_ids, 100)
      const filters: Array<Store.Filter> = []
      if (q.price_ids?.length) filters.push({ column: "price_ids", op: "overlaps", values: q.price_ids })
      if (q.status) filters.push({ column: "status", op: "in", values: [q.status] })
      const page = yield* pageErrors(
        products.list(merchantId, {
          filters,
          limit: q.limit ?? 10,
          starting_after: q.starting_after,
          ending_before: q.ending_before,
          ...(q.created ? { created: q.created } : {})
        })
      )
      const names = new Map<string, string>()
      for (const p of page.list)
        if (!names.has(p.category_id)) names.set(p.category_id, yield* categoryName(merchantId, p.category_id))
      return { has_more: page.has_more, list: page.list.map((p) => toProduct(p, names.get(p.category_id) ?? "")) }
    })

    const buildVersion = (
      merchantId: string,
      priceId: string,
      valid: PriceRules.ValidPrice,
      at: number,
      customerId: string | null
    ) =>
      Effect.gen(function* () {
        const plan = valid.price_plan
        // amounts are answered with the currency's minor-unit digits ("12.5" USD → "12.50")
        const norm = <S extends string | undefined>(v: S): S =>
          v === undefined || v === ""
            ? v
            : Result.match(Money.parse(v, valid.currency), {
                onFailure: () => v,
                onSuccess: (m) => Money.format(m) as S
              })
        // a usage price may rate a billable metric's group instead of the seed's usage_count
        const metric =
          valid.billable_metric_id != null
            ? yield* forPrice(storage, merchantId, valid.billable_metric_id.trim(), valid.metric_group ?? null)
            : { billable_metric_id: null, metric_group: null }
        return new Price.PriceVersion({
          id: priceId,
          price_name: valid.name,
          price_alias: null,
          product_id: valid.product_id,
          merchant_id: merchantId,
          currency: valid.currency,
          billing_type: valid.billing_type,
          price_val: norm(valid.price_val) ?? null,
          description: valid.description ?? null,
          biz_status: Result.getOrThrow(Lifecycle.bornAs(Lifecycle.priceVersion, valid.status)),
          created_at: DateTime.makeUnsafe(at),
          price_type: valid.price_type,
          usage_amount: valid.usage_amount ?? null,
          usage_unit: valid.usage_unit ?? null,
          model_type: (valid.model_type as Price.PriceVersion["model_type"]) ?? null,
          billing_threshold: valid.billing_threshold ?? null,
          trial_amount: norm(valid.trial_amount) ?? null,
          price_version_id: yield* Ids.make(Ids.prefixes.priceVersion),
          product_version_id: valid.product_version_id ?? null,
          payment_timing: valid.payment_timing,
          billing_dimension: valid.billing_dimension,
          quantity_tier_type:
            (valid.quantity_tier_type as Price.PriceVersion["quantity_tier_type"]) ??
            (valid.quantity_tiers?.length ? "graduated" : null),
          price_tier_type:
            (valid.price_tier_type as Price.PriceVersion["price_tier_type"]) ??
            (valid.usage_tiers?.length ? "graduated" : null),
          usage_threshold: valid.usage_threshold ?? null,
          usage_unit_price: valid.usage_unit_price ?? null,
          quantity_unit: valid.quantity_unit ?? null,
          merchant_price_id: valid.merchant_price_id ?? null,
          has_trial: valid.has_trial,
          trial_type: valid.has_trial ? ((valid.trial_type ?? 0) as 0 | 1) : null,
          metadata: valid.metadata ?? {},
          trial_period:
            valid.has_trial && valid.trial_period
              ? new Price.TrialPeriod({
                  trial_period_unit: valid.trial_period.trial_period_unit as Price.TrialPeriod["trial_period_unit"],
                  trial_period_count: valid.trial_period.trial_period_count
                })
              : null,
          price_plan: plan
            ? new Price.PricePlan({
                price_plan_id: yield* Ids.make(Ids.prefixes.pricePlan),
                plan_name: plan.plan_name ?? valid.name,
                billing_cycle_unit: plan.billing_cycle_unit as Price.PricePlan["billing_cycle_unit"],
                billing_cycle_count: plan.billing_cycle_count ?? 1,
                is_infinite: plan.is_infinite ?? true,
                base_price_val: norm(plan.base_price_val ?? valid.price_val ?? "0"),
                plan_description: plan.plan_description ?? "",
                price_plan_tiers: (plan.price_plan_tiers ?? []).map(
                  (t) =>
                    new Price.PricePlanTier({
                      period_count: t.period_count,
                      period_unit: t.period_unit ?? (plan.billing_cycle_unit as string),
                      original_price: norm(t.original_price ?? plan.base_price_val ?? ""),
                      due_price: norm(t.due_price ?? ""),
                      discount_type: t.discount_type ?? "",
                      discount_value: t.discount_value ?? ""
                    })
                )
              })
            : null,
          quantity_tiers: (valid.quantity_tiers ?? []).map((t) => new QuantityTier(t)),
          usage_tiers: (valid.usage_tiers ?? []).map((t) => new UsageTier(t)),
          features: (valid.features ?? []).map((f) => new Feature(f)),
          entitlements: yield* checkedFeatures(valid.entitlements),
          customer_id: customerId,
          ...metric
        })
      })

    // a broken rule is the domain's `PriceRuleViolation` (fields, tier indexes); the contract
    // answers it as the request's parameter
    const validate = (input: PriceRules.PriceInput) =>
      Result.match(PriceRules.validate(input), { onFailure: Effect.fail, onSuccess: Effect.succeed })

    const createPrice = Effect.fn("Catalog.createPrice")(function* (merchantId: string, input: PriceRules.PriceInput) {
      const valid = yield* validate(input)
      const product = yield* Effect.catchTag(getProductRecord(merchantId, valid.product_id), "NotFound", () =>
        Effect.fail(new Errors.NotFound({ resource: "product", id: valid.product_id, param: "product_id" }))
      )
      if (valid.status === "frozen")
        return yield* new Errors.InvalidParameter({
          param: "status",
          reason: "a new price starts as draft or active"
        })
      // a private price is sold to one existing customer of this merchant
      const customerId = valid.customer_id ?? null
      if (customerId !== null) {
        const found = yield* customers.get(merchantId, customerId)
        if (Option.isNone(found) || found.value.value.deleted_at !== null)
          return yield* new Errors.NotFound({ resource: "customer", id: customerId, param: "customer_id" })
      }
      const at = yield* now(merchantId)
      const priceId = yield* Ids.make(Ids.prefixes.price)
      const version = yield* buildVersion(merchantId, priceId, valid, at, customerId)
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          yield* prices
            .insert({
              id: priceId,
              merchant_id: merchantId,
              product_id: valid.product_id,
              name: valid.name,
              merchant_price_id: valid.merchant_price_id ?? null,
              current_version_id: version.price_version_id,
              status: version.biz_status,
              versions: 1,
              created_at: at,
              customer_id: customerId
            })
            .pipe(
              Effect.catchTag("UniqueViolation", () =>
                Effect.fail(new Errors.DuplicateResource({ resource: "price", param: "merchant_price_id" }))
              )
            )
          yield* Effect.orDie(versions.insert(version))
          yield* Effect.orDie(
            products.update(
              { ...product.value, price_ids: [...product.value.price_ids, priceId], updated_at: at },
              product.version
            )
          )
          return version
        })
      )
    })

    const getPriceRecord = (merchantId: string, priceId: string) =>
      Effect.flatMap(prices.get(merchantId, priceId), (o) =>
        Option.match(o, {
          onNone: () => Effect.fail(new Errors.PriceNotFound({ priceId })),
          onSome: Effect.succeed
        })
      )

    const createVersion = Effect.fn("Catalog.createVersion")(function* (
      merchantId: string,
      priceId: string,
      input: PriceRules.PriceInput
    ) {
      const price = yield* getPriceRecord(merchantId, priceId)
      const valid = yield* validate({ ...input, product_id: price.value.product_id })
      if (valid.merchant_price_id !== undefined && valid.merchant_price_id !== price.value.merchant_price_id) {
        return yield* new Errors.InvalidParameter({ param: "merchant_price_id", reason: "is set at creation only" })
      }
      if (valid.customer_id !== undefined && valid.customer_id !== price.value.customer_id) {
        return yield* new Errors.InvalidParameter({ param: "customer_id", reason: "is set at creation only" })
      }
      const at = yield* now(merchantId)
      const version = yield* buildVersion(
        merchantId,
        priceId,
        { ...valid, status: valid.status === "frozen" ? "draft" : valid.status },
        at,
        price.value.customer_id
      )
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          yield* Effect.orDie(versions.insert(version))
          const next =
            version.biz_status === "active"
              ? {
                  ...price.value,
                  current_version_id: version.price_version_id,
                  status: version.biz_status,
                  versions: price.value.versions + 1
                }
              : { ...price.value, versions: price.value.versions + 1 }
          // a version created at the same time by another request: this one lost, nothing written
          yield* prices.update(next, price.version).pipe(
            Effect.catchTag("VersionConflict", () =>
              Effect.fail(new Errors.ConcurrentUpdate({ resource: "price", id: priceId }))
            ),
            Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
          )
          return version
        })
      )
    })

    const getVersion = Effect.fn("Catalog.getVersion")(function* (merchantId: string, versionId: string) {
      return yield* Effect.flatMap(versions.get(merchantId, versionId), (o) =>
        Option.match(o, {
          onNone: () => Effect.fail(new Errors.NotFound({ resource: "price_version", id: versionId })),
          onSome: (v) => Effect.succeed(v.value)
        })
      )
    })

    /** Moves a version draft → active ⇄ frozen. Activating a version makes it the price's current one. */
    const setVersionStatus = Effect.fn("Catalog.setVersionStatus")(function* (
      merchantId: string,
      versionId: string,
      status: string
    ) {
      if (!Lifecycle.PriceVersionStatus.literals.includes(status as Lifecycle.PriceVersionStatus)) {
        return yield* new Errors.InvalidParameter({ param: "status", reason: "must be draft, active or frozen" })
      }
      const found = yield* versions.get(merchantId, versionId)
      if (Option.isNone(found)) return yield* new Errors.NotFound({ resource: "price_version", id: versionId })
      const current = found.value.value
      if (current.biz_status === status) return current
      if (status === "draft")
        return yield* new Errors.StateConflict({
          resource: "price_version",
          id: versionId,
          state: current.biz_status,
          reason: "cannot return to draft"
        })
      const moved = Lifecycle.transition(
        Lifecycle.priceVersion,
        current.biz_status,
        status === "active" ? "activate" : "freeze"
      )
      if (Result.isFailure(moved)) return yield* invalidTransition("price_version", versionId)(moved.failure)
      const next = new Price.PriceVersion({ ...current, biz_status: moved.success.to })
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          yield* Effect.orDie(versions.update(next, found.value.version))
          const price = yield* getPriceRecord(merchantId, current.id)
          const isCurrent = price.value.current_version_id === versionId
          if (next.biz_status === "active" || isCurrent) {
            yield* Effect.orDie(
              prices.update({ ...price.value, current_version_id: versionId, status: next.biz_status }, price.version)
            )
          }
          return next
        })
      )
    })

    const listPrices = Effect.fn("Catalog.listPrices")(function* (
      merchantId: string,
      q: {
        readonly product_id?: string
        readonly status?: string
        /** The catalog as this customer sees it: the public prices and this customer's private ones. */
        readonly customer_id?: string
        readonly created?: Store.CreatedRange
        readonly limit?: number
        readonly starting_after?: string
        readonly ending_before?: string
      }
    ) {
      // private prices are listed only for their customer
      const filters: Array<Store.Filter> = [
        {
          column: "audience",
          op: "in",
          values: q.customer_id ? [Entities.PUBLIC_AUDIENCE, q.customer_id] : [Entities.PUBLIC_AUDIENCE]
        }
      ]
      if (q.product_id) filters.push({ column: "product_id", op: "in", values: [q.product_id] })
      if (q.status) filters.push({ column: "status", op: "in", values: [q.status] })
      const page = yield* pageErrors(
        prices.list(merchantId, {
          filters,
          limit: q.limit ?? 10,
          starting_after: q.starting_after,
          ending_before: q.ending_before,
          ...(q.created ? { created: q.created } : {})
        })
      )
      const list = yield* Effect.forEach(page.list, (p) => Effect.orDie(getVersion(merchantId, p.current_version_id)))
      return { has_more: page.has_more, list }
    })

    const listVersions = Effect.fn("Catalog.listVersions")(function* (
      merchantId: string,
      priceId: string,
      q: { readonly limit?: number; readonly starting_after?: string; readonly ending_before?: string } = {}
    ) {
      yield* getPriceRecord(merchantId, priceId)
      return yield* pageErrors(
        versions.list(merchantId, {
          filters: [{ column: "price_id", op: "in", values: [priceId] }],
          limit: q.limit ?? 10,
          starting_after: q.starting_after,
          ending_before: q.ending_before
        })
      )
    })

    /**
     * The version a checkout or change may sell: the price's current version, which must be
     * active. With a buyer (`customerId`: a customer id, or `null` for a buyer not known yet), a
     * private price of another customer is no such price (`PriceNotFound`); without one
     * (`undefined`, the merchant's own view) every price of the merchant is found.
     */
    const sellableVersion = Effect.fn("Catalog.sellableVersion")(function* (
      merchantId: string,
      priceId: string,
      customerId?: string | null
    ) {
      const price = yield* getPriceRecord(merchantId, priceId)
      if (!Price.visibleTo(price.value, customerId)) return yield* new Errors.PriceNotFound({ priceId })
      const version = yield* Effect.orDie(getVersion(merchantId, price.value.current_version_id))
      if (version.biz_status !== "active")
        return yield* new Errors.StateConflict({
          resource: "price",
          id: priceId,
          state: version.biz_status,
          reason: "only active prices can be sold"
        })
      return version
    })

    return {
      listCategories,
      createProduct,
      setProductStatus,
      getProduct,
      listProducts,
      createPrice,
      createVersion,
      getVersion,
      setVersionStatus,
      listPrices,
      listVersions,
      sellableVersion
    } as const
  })
}) {
  /** The live implementation: needs `Storage` and the ports it uses. */
  static readonly layer = Layer.effect(this, this.make)
}
