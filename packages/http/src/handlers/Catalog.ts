/**
 * The handlers of the catalog group.
 *
 * @since 0.1.0
 */
import { CatalogRequests, Requests } from "@recur/contract"
import { Catalog, Lifecycle, PriceMigrations } from "@recur/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { ok, call, invalid, list, pageQuery, enumValues } from "./Shared.js"

/**
 * The handlers of the catalog group.
 *
 * @since 0.1.0
 */
export const catalogLive = HttpApiBuilder.group(BillingApi, "catalog", (handlers) =>
  Effect.gen(function* () {
    const catalog = yield* Catalog.Catalog
    const migrations = yield* PriceMigrations.PriceMigrations
    return handlers
      .handle("categories", () => call((m) => Effect.map(catalog.listCategories(m), ok)))
      .handle("createProduct", ({ payload }) =>
        call((m) => Effect.map(catalog.createProduct(m, payload), (p) => ok({ product_id: p.product_id })))
      )
      .handle("productStatus", ({ params: path, payload }) =>
        call((m) =>
          Effect.gen(function* () {
            const status = payload.product_status ?? payload.status
            if (status !== "active" && status !== "disabled" && status !== "draft")
              return yield* invalid("status", "must be active or disabled")
            const p = yield* catalog.setProductStatus(m, path.product_id, status)
            return ok({ product_id: p.id, product_status: p.status })
          })
        )
      )
      .handle("products", ({ query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const page = yield* pageQuery(q)
            if (q.status !== undefined && !["draft", "active", "disabled"].includes(q.status))
              return yield* invalid("status", "must be draft, active or disabled")
            return ok(
              yield* catalog.listProducts(m, {
                ...(list(q.price_ids) ? { price_ids: list(q.price_ids)! } : {}),
                ...(q.status ? { status: q.status as "draft" | "active" | "disabled" } : {}),
                created: page.created,
                limit: page.limit,
                ...(page.starting_after ? { starting_after: page.starting_after } : {}),
                ...(page.ending_before ? { ending_before: page.ending_before } : {})
              })
            )
          })
        )
      )
      .handle("createPrice", ({ payload }) =>
        call((m) =>
          Effect.map(Requests.refusedAsParameter(catalog.createPrice(m, payload)), (v) =>
            ok({ price_id: v.id, price_version_id: v.price_version_id, merchant_price_id: v.merchant_price_id })
          )
        )
      )
      .handle("priceStatus", ({ params: path, payload }) =>
        call((m) =>
          Effect.map(catalog.setVersionStatus(m, path.price_version_id, payload.status ?? ""), (v) =>
            ok({ price_version_id: v.price_version_id })
          )
        )
      )
      .handle("priceVersion", ({ params: path }) =>
        call((m) => Effect.map(catalog.getVersion(m, path.price_version_id), ok))
      )
      .handle("prices", ({ query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const page = yield* pageQuery(q)
            yield* enumValues("status", q.status ? [q.status] : undefined, Lifecycle.PriceVersionStatus.literals)
            return ok(
              yield* catalog.listPrices(m, {
                ...(q.product_id ? { product_id: q.product_id } : {}),
                ...(q.status ? { status: q.status } : {}),
                ...(q.customer_id ? { customer_id: q.customer_id } : {}),
                created: page.created,
                limit: page.limit,
                ...(page.starting_after ? { starting_after: page.starting_after } : {}),
                ...(page.ending_before ? { ending_before: page.ending_before } : {})
              })
            )
          })
        )
      )
      .handle("priceVersions", ({ params: path, query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const page = yield* pageQuery(q)
            return ok(
              yield* catalog.listVersions(m, path.price_id, {
                limit: page.limit,
                ...(page.starting_after ? { starting_after: page.starting_after } : {}),
                ...(page.ending_before ? { ending_before: page.ending_before } : {})
              })
            )
          })
        )
      )
      .handle("createPriceVersion", ({ params: path, payload }) =>
        call((m) => Effect.map(Requests.refusedAsParameter(catalog.createVersion(m, path.price_id, payload)), ok))
      )
      .handle("createMigration", ({ params: path, payload }) =>
        call((m) =>
          Effect.map(
            Effect.flatMap(CatalogRequests.migrationCommand(payload), (command) =>
              migrations.preview(m, path.price_id, command)
            ),
            ok
          )
        )
      )
      .handle("migration", ({ params: path }) =>
        call((m) => Effect.map(migrations.get(m, path.price_id, path.migration_id), ok))
      )
      .handle("migrationLines", ({ params: path, query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const page = yield* pageQuery(q)
            const outcome = yield* CatalogRequests.lineOutcome(q.outcome)
            return ok(
              yield* migrations.listLines(m, path.price_id, path.migration_id, {
                ...(outcome ? { outcome } : {}),
                limit: page.limit,
                ...(page.starting_after ? { starting_after: page.starting_after } : {}),
                ...(page.ending_before ? { ending_before: page.ending_before } : {})
              })
            )
          })
        )
      )
      .handle("runMigration", ({ params: path }) =>
        call((m) => Effect.map(migrations.run(m, path.price_id, path.migration_id), ok))
      )
      .handle("cancelMigration", ({ params: path }) =>
        call((m) => Effect.map(migrations.cancel(m, path.price_id, path.migration_id), ok))
      )
  })
)
