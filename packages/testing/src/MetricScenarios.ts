/**
 * Billable metrics told through the engine's services (issue 35): created with their defaults,
 * found by id or code, listed by status, their code unique per merchant (archived ones too),
 * updated only in the fields that may change, archived once; usage prices referencing a metric
 * and one of its groups, refused when the metric is missing, archived or the group does not fit;
 * a usage price without a metric as before. Each change writes its webhook event. Run against
 * any storage adapter.
 *
 * @since 0.1.0
 */
import { expect, layer } from "@effect/vitest"
import { BillableMetrics, Catalog, type PriceRules, type Store } from "@recur/core"
import { Effect, type Layer } from "effect"
import { engine, eventsOf, merchantAt, productOf } from "./ScenarioKit.js"

const START = "2026-01-01T00:00:00Z"

/** The failure of an effect, as its tag and the fields that name what was refused. */
const refusal = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (e) => {
    const f = e as unknown as Record<string, unknown>
    return {
      _tag: e._tag,
      ...(f.param !== undefined ? { param: f.param } : {}),
      ...(f.entry !== undefined ? { entry: f.entry } : {})
    }
  })

/** A usage price (postpaid, per unit at 0.01) of `productId`, with `extra` fields. */
const usagePrice = (merchantId: string, productId: string, extra: Partial<PriceRules.PriceInput> = {}) =>
  Catalog.Catalog.use((c) =>
    c.createPrice(merchantId, {
      name: "API calls",
      product_id: productId,
      currency: "USD",
      billing_type: "recurring",
      price_type: "based_on_usage",
      model_type: "per_unit",
      usage_unit_price: "0.01",
      billing_threshold: "1",
      usage_amount: "1",
      usage_unit: "calls",
      payment_timing: "postpaid",
      billing_dimension: "usage",
      price_plan: { billing_cycle_unit: "month", base_price_val: "0" },
      ...extra
    })
  )

/**
 * Registers the suite.
 *
 * @since 0.1.0
 */
export const suite = <E>(name: string, storage: Layer.Layer<Store.Storage, E>) =>
  layer(engine(storage), { timeout: "120 seconds" })(`Billable metric scenarios: ${name}`, (it) => {
    it.effect("a metric is created with its defaults, read by id or code, listed by status", () =>
      Effect.gen(function* () {
        const metrics = yield* BillableMetrics.BillableMetrics
        const merchantId = yield* merchantAt(START)
        const calls = yield* metrics.create(merchantId, {
          code: "api_calls",
          name: " API calls ",
          aggregation: "count",
          group_by: ["region"]
        })
        expect(calls).toMatchObject({
          code: "api_calls",
          name: "API calls",
          description: null,
          aggregation: "count",
          property: null,
          filters: [],
          group_by: ["region"],
          late_window_days: 35,
          status: "active"
        })
        expect(calls.billable_metric_id).toMatch(/^bm_/)
        const storage = yield* metrics.create(merchantId, {
          code: "storage_gb",
          name: "Storage",
          description: "GB-hours",
          aggregation: "weighted_sum",
          property: "gb",
          filters: [{ property: "tier", values: ["hot", "hot", "warm"] }],
          late_window_days: 0
        })
        expect([
          storage.property,
          storage.filters.map((f) => [f.property, f.values]),
          storage.late_window_days
        ]).toEqual(["gb", [["tier", ["hot", "warm"]]], 0])
        expect((yield* metrics.get(merchantId, calls.billable_metric_id)).code).toBe("api_calls")
        expect((yield* metrics.get(merchantId, "storage_gb")).billable_metric_id).toBe(storage.billable_metric_id)
        expect(yield* refusal(metrics.get(merchantId, "nope"))).toEqual({ _tag: "NotFound" })
        // another merchant sees none of them
        const other = yield* merchantAt(START)
        expect(yield* refusal(metrics.get(other, "api_calls"))).toEqual({ _tag: "NotFound" })

        yield* metrics.archive(merchantId, "storage_gb")
        const active = yield* metrics.list(merchantId, { status: ["active"] })
        const archived = yield* metrics.list(merchantId, { status: ["archived"] })
        const all = yield* metrics.list(merchantId, {})
        expect([active.list.map((m) => m.code), archived.list.map((m) => m.code), all.list.map((m) => m.code)]).toEqual(
          [["api_calls"], ["storage_gb"], ["storage_gb", "api_calls"]]
        )
        expect((yield* metrics.list(merchantId, { codes: ["api_calls"] })).list.map((m) => m.code)).toEqual([
          "api_calls"
        ])
        expect(yield* eventsOf(merchantId, storage.billable_metric_id)).toEqual([
          "v2.billable_metric.created",
          "v2.billable_metric.archived"
        ])
      })
    )

    it.effect("each broken rule names its field; a code in use — archived or not — is a duplicate", () =>
      Effect.gen(function* () {
        const metrics = yield* BillableMetrics.BillableMetrics
        const merchantId = yield* merchantAt(START)
        const ok = { code: "m", name: "M", aggregation: "sum", property: "n" } as const
        const cases: ReadonlyArray<readonly [Record<string, unknown>, unknown]> = [
          [{ code: "Bad-Code" }, { param: "code" }],
          [{ code: "x".repeat(65) }, { param: "code" }],
          [{ code: undefined }, { param: "code" }],
          [{ name: " " }, { param: "name" }],
          [{ aggregation: "median" }, { param: "aggregation" }],
          [{ property: undefined }, { param: "property" }],
          [{ aggregation: "count", property: "n" }, { param: "property" }],
          [
            { filters: Array.from({ length: 11 }, (_, i) => ({ property: `p${i}`, values: ["a"] })) },
            { param: "filters" }
          ],
          [{ filters: [{ property: "r", values: [] }] }, { param: "filters", entry: { index: 0, field: "values" } }],
          [
            { filters: [{ property: "r", values: Array.from({ length: 51 }, (_, i) => `v${i}`) }] },
            { param: "filters", entry: { index: 0, field: "values" } }
          ],
          [{ filters: [{ values: ["a"] }] }, { param: "filters", entry: { index: 0, field: "property" } }],
          [
            {
              filters: [
                { property: "r", values: ["a"] },
                { property: "r", values: ["b"] }
              ]
            },
            { param: "filters", entry: { index: 1, field: "property" } }
          ],
          [{ group_by: ["a", "b", "c", "d"] }, { param: "group_by" }],
          [{ group_by: ["a", "a"] }, { param: "group_by", entry: { index: 1, field: "" } }],
          [{ late_window_days: 366 }, { param: "late_window_days" }],
          [{ late_window_days: -1 }, { param: "late_window_days" }],
          [{ late_window_days: 1.5 }, { param: "late_window_days" }]
        ]
        for (const [patch, expected] of cases)
          expect([patch, yield* refusal(metrics.create(merchantId, { ...ok, ...patch }))]).toEqual([
            patch,
            { _tag: "InvalidParameter", ...(expected as object) }
          ])
        yield* metrics.create(merchantId, ok)
        expect(yield* refusal(metrics.create(merchantId, ok))).toEqual({ _tag: "DuplicateResource", param: "code" })
        yield* metrics.archive(merchantId, "m")
        expect(yield* refusal(metrics.create(merchantId, { ...ok, aggregation: "max" }))).toEqual({
          _tag: "DuplicateResource",
          param: "code"
        })
        // the same code at another merchant is another metric
        const other = yield* merchantAt(START)
        expect((yield* metrics.create(other, ok)).code).toBe("m")
      })
    )

    it.effect(
      "an update changes name, description, filters and late window; an archived metric neither changes nor archives again",
      () =>
        Effect.gen(function* () {
          const metrics = yield* BillableMetrics.BillableMetrics
          const merchantId = yield* merchantAt(START)
          const m = yield* metrics.create(merchantId, {
            code: "seats",
            name: "Seats",
            description: "active seats",
            aggregation: "unique_count",
            property: "user_id"
          })
          const updated = yield* metrics.update(merchantId, "seats", {
            name: "Active users",
            description: null,
            filters: [{ property: "plan", values: ["pro"] }],
            late_window_days: 7
          })
          expect(updated).toMatchObject({
            billable_metric_id: m.billable_metric_id,
            code: "seats",
            name: "Active users",
            description: null,
            aggregation: "unique_count",
            property: "user_id",
            late_window_days: 7
          })
          expect(updated.filters.map((f) => [f.property, f.values])).toEqual([["plan", ["pro"]]])
          // a field not given keeps its value
          expect((yield* metrics.update(merchantId, m.billable_metric_id, { late_window_days: 9 })).name).toBe(
            "Active users"
          )
          expect(yield* refusal(metrics.update(merchantId, "seats", { name: "" }))).toEqual({
            _tag: "InvalidParameter",
            param: "name"
          })
          yield* metrics.archive(merchantId, "seats")
          expect(yield* refusal(metrics.update(merchantId, "seats", { name: "Again" }))).toEqual({
            _tag: "StateConflict"
          })
          expect(yield* refusal(metrics.archive(merchantId, "seats"))).toEqual({ _tag: "StateConflict" })
          expect(yield* eventsOf(merchantId, m.billable_metric_id)).toEqual([
            "v2.billable_metric.created",
            "v2.billable_metric.updated",
            "v2.billable_metric.updated",
            "v2.billable_metric.archived"
          ])
        })
    )

    it.effect(
      "usage prices rate a metric's group (API calls per region); refused for a missing or archived metric or a group that does not fit",
      () =>
        Effect.gen(function* () {
          const metrics = yield* BillableMetrics.BillableMetrics
          const merchantId = yield* merchantAt(START)
          const productId = yield* productOf(merchantId)
          const calls = yield* metrics.create(merchantId, {
            code: "api_calls",
            name: "API calls",
            aggregation: "count",
            group_by: ["region"]
          })
          const eu = yield* usagePrice(merchantId, productId, {
            billable_metric_id: "api_calls",
            metric_group: { region: "eu" }
          })
          const us = yield* usagePrice(merchantId, productId, {
            usage_unit_price: "0.02",
            billable_metric_id: calls.billable_metric_id,
            metric_group: { region: "us" }
          })
          expect([eu.billable_metric_id, eu.metric_group, us.billable_metric_id, us.metric_group]).toEqual([
            calls.billable_metric_id,
            { region: "eu" },
            calls.billable_metric_id,
            { region: "us" }
          ])
          // read back as stored
          const stored = yield* Catalog.Catalog.use((c) => c.getVersion(merchantId, eu.price_version_id))
          expect([stored.billable_metric_id, stored.metric_group]).toEqual([calls.billable_metric_id, { region: "eu" }])
          // a metric without grouping takes no group
          const gb = yield* metrics.create(merchantId, {
            code: "gb",
            name: "GB",
            aggregation: "weighted_sum",
            property: "gb"
          })
          const plain = yield* usagePrice(merchantId, productId, { billable_metric_id: "gb" })
          expect([plain.billable_metric_id, plain.metric_group]).toEqual([gb.billable_metric_id, null])
          // a usage price without a metric is the seed's usage price
          const seed = yield* usagePrice(merchantId, productId)
          expect([seed.billable_metric_id, seed.metric_group]).toEqual([null, null])

          const refused: ReadonlyArray<readonly [Partial<PriceRules.PriceInput>, unknown]> = [
            [{ billable_metric_id: "nope" }, { _tag: "NotFound", param: "billable_metric_id" }],
            [{ billable_metric_id: "api_calls" }, { _tag: "InvalidParameter", param: "metric_group" }],
            [
              { billable_metric_id: "api_calls", metric_group: { region: "eu", plan: "pro" } },
              { _tag: "InvalidParameter", param: "metric_group" }
            ],
            [
              { billable_metric_id: "api_calls", metric_group: { region: "" } },
              { _tag: "InvalidParameter", param: "metric_group" }
            ],
            [
              { billable_metric_id: "api_calls", metric_group: { region: "x".repeat(256) } },
              { _tag: "InvalidParameter", param: "metric_group" }
            ],
            [
              { billable_metric_id: "gb", metric_group: { region: "eu" } },
              { _tag: "InvalidParameter", param: "metric_group" }
            ]
          ]
          for (const [extra, expected] of refused)
            expect([extra, yield* refusal(usagePrice(merchantId, productId, extra))]).toEqual([extra, expected])
          // a metric's group without a metric, and a metric on a quantity price: the price's rules refuse them
          const rule = (input: Partial<PriceRules.PriceInput>) =>
            Effect.map(Effect.flip(usagePrice(merchantId, productId, input)), (e) =>
              e._tag === "PriceRuleViolation" ? e.issues.map((i) => i.field) : e._tag
            )
          expect(yield* rule({ metric_group: { region: "eu" } })).toEqual(["metric_group"])
          expect(
            yield* rule({
              billable_metric_id: "gb",
              price_type: "flat_price",
              payment_timing: "prepaid",
              billing_dimension: "quantity",
              price_plan: { billing_cycle_unit: "month", base_price_val: "10.00" }
            })
          ).toEqual(["billable_metric_id"])

          // archived: prices that reference it stay; no new price may
          yield* metrics.archive(merchantId, "api_calls")
          expect(
            yield* refusal(
              usagePrice(merchantId, productId, { billable_metric_id: "api_calls", metric_group: { region: "eu" } })
            )
          ).toEqual({
            _tag: "InvalidParameter",
            param: "billable_metric_id"
          })
          const kept = yield* Catalog.Catalog.use((c) => c.getVersion(merchantId, us.price_version_id))
          expect([kept.biz_status, kept.billable_metric_id]).toEqual(["active", calls.billable_metric_id])
        })
    )
  })
