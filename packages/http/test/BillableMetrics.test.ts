/**
 * Billable metrics over REST (issue 35): create, list, get by id or code, update, archive; each
 * refusal with its code and parameter; a duplicate code; usage prices referencing a metric and
 * one of its groups, and their refusals — on PGlite, and on PostgreSQL when
 * RECUR_TEST_DATABASE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { TestClient } from "@recur/http"
import { backends, serve } from "./client.js"

const refusal = (r: TestClient.Answer) => {
  const body = r.body as { code?: string; data?: { param?: string } } | null
  return [r.status, body?.code, body?.data?.param]
}

const usage = {
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
  price_plan: { billing_cycle_unit: "month", base_price_val: "0" }
}

for (const [name, storage] of backends()) {
  describe(`billable metrics (${name})`, { timeout: 120_000 }, () => {
    const api = serve(storage())
    let key = ""
    let other = ""
    beforeAll(async () => {
      await api.ready()
      key = (await api.merchant()).api_key
      other = (await api.merchant()).api_key
    }, 120_000)
    afterAll(() => api.dispose())

    const create = (body: Record<string, unknown>, k = key) => api.call("POST", "/api/v1/billable_metrics", k, body)
    const metricOf = (r: TestClient.Answer) => (r.body as any).data.billable_metric

    it("creates, reads by id or code, lists by status and code, updates and archives", async () => {
      const made = await create({
        code: "api_calls",
        name: "API calls",
        aggregation: "count",
        filters: [{ property: "method", values: ["GET", "POST"] }],
        group_by: ["region"]
      })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      const m = metricOf(made)
      expect(m).toMatchObject({
        code: "api_calls",
        name: "API calls",
        description: null,
        aggregation: "count",
        property: null,
        filters: [{ property: "method", values: ["GET", "POST"] }],
        group_by: ["region"],
        late_window_days: 35,
        status: "active",
        created_at: "2026-01-01T00:00:00Z",
        updated_at: "2026-01-01T00:00:00Z"
      })
      expect(m.billable_metric_id).toMatch(/^bm_/)
      const storageMetric = metricOf(
        await create({ code: "storage", name: "Storage", aggregation: "weighted_sum", property: "gb" })
      )
      for (const ref of [m.billable_metric_id, "api_calls"]) {
        const got = await api.call("GET", `/api/v1/billable_metrics/${ref}`, key)
        expect([ref, got.status, metricOf(got).billable_metric_id]).toEqual([ref, 200, m.billable_metric_id])
      }
      expect(refusal(await api.call("GET", "/api/v1/billable_metrics/nope", key))).toEqual([
        404,
        "resource_not_found",
        undefined
      ])
      expect((await api.call("GET", "/api/v1/billable_metrics/api_calls", other)).status).toBe(404)

      const updated = await api.call("POST", "/api/v1/billable_metrics/api_calls", key, {
        name: "Calls",
        description: "every API call",
        late_window_days: 10
      })
      expect(updated.status, JSON.stringify(updated.body)).toBe(200)
      expect(metricOf(updated)).toMatchObject({
        name: "Calls",
        description: "every API call",
        late_window_days: 10,
        aggregation: "count",
        filters: [{ property: "method", values: ["GET", "POST"] }]
      })
      const archived = await api.call(
        "POST",
        `/api/v1/billable_metrics/${storageMetric.billable_metric_id}/archive`,
        key
      )
      expect([archived.status, metricOf(archived).status]).toEqual([200, "archived"])

      const list = async (q: string) =>
        ((await api.call("GET", `/api/v1/billable_metrics${q}`, key)).body as any).data.list.map((x: any) => x.code)
      expect(await list("")).toEqual(["storage", "api_calls"])
      expect(await list("?status=active")).toEqual(["api_calls"])
      expect(await list("?status=archived")).toEqual(["storage"])
      expect(await list("?code=storage")).toEqual(["storage"])
      expect(await list("?limit=1")).toEqual(["storage"])
      expect(refusal(await api.call("GET", "/api/v1/billable_metrics?status=gone", key))).toEqual([
        400,
        "InvalidParameter",
        "status"
      ])

      expect(
        refusal(await api.call("POST", `/api/v1/billable_metrics/${storageMetric.billable_metric_id}/archive`, key))
      ).toEqual([409, "state_conflict", undefined])
      expect(refusal(await api.call("POST", "/api/v1/billable_metrics/storage", key, { name: "X" }))).toEqual([
        409,
        "state_conflict",
        undefined
      ])
    })

    it("refuses bad input naming the field, fixed fields on update, and a code in use", async () => {
      const ok = { code: "bytes", name: "Bytes", aggregation: "sum", property: "bytes" }
      const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
        [{ code: "Bytes!" }, "code"],
        [{ name: "" }, "name"],
        [{ aggregation: "avg" }, "aggregation"],
        [{ property: null }, "property"],
        [{ aggregation: "count" }, "property"],
        [{ filters: [{ property: "r", values: [] }] }, "filters[0].values"],
        [{ filters: [{ values: ["eu"] }] }, "filters[0].property"],
        [{ group_by: ["a", "b", "c", "d"] }, "group_by"],
        [{ group_by: ["a", "a"] }, "group_by[1]"],
        [{ late_window_days: 400 }, "late_window_days"],
        [{ late_window_days: 1.5 }, "late_window_days"]
      ]
      for (const [patch, param] of cases)
        expect([patch, ...refusal(await create({ ...ok, ...patch }))]).toEqual([patch, 400, "InvalidParameter", param])
      expect((await create(ok)).status).toBe(200)
      expect(refusal(await create(ok))).toEqual([409, "duplicate_resource", "code"])
      expect((await create(ok, other)).status).toBe(200)
      for (const param of ["code", "aggregation", "property", "group_by"])
        expect(refusal(await api.call("POST", "/api/v1/billable_metrics/bytes", key, { [param]: "x" }))).toEqual([
          400,
          "InvalidParameter",
          param
        ])
      expect(
        refusal(
          await api.call("POST", "/api/v1/billable_metrics/bytes", key, { filters: [{ property: "r", values: [] }] })
        )
      ).toEqual([400, "InvalidParameter", "filters[0].values"])
    })

    it("usage prices reference a metric by id or code and its group; answered on the price; refused when they do not fit", async () => {
      const m = metricOf(
        await create({ code: "calls_region", name: "Calls", aggregation: "count", group_by: ["region"] })
      )
      const product = ((await api.call("POST", "/api/v1/products", key, { product_name: "API" })).body as any).data
        .product_id as string
      const price = (body: Record<string, unknown>) =>
        api.call("POST", "/api/v1/prices", key, { name: "Calls", product_id: product, ...usage, ...body })
      const eu = await price({ billable_metric_id: "calls_region", metric_group: { region: "eu" } })
      expect(eu.status, JSON.stringify(eu.body)).toBe(200)
      const us = await price({ billable_metric_id: m.billable_metric_id, metric_group: { region: "us" } })
      expect(us.status, JSON.stringify(us.body)).toBe(200)
      const version = async (r: TestClient.Answer) =>
        ((await api.call("GET", `/api/v1/prices/version/${(r.body as any).data.price_version_id}`, key)).body as any)
          .data
      expect(await version(eu)).toMatchObject({
        billable_metric_id: m.billable_metric_id,
        metric_group: { region: "eu" }
      })
      expect(await version(us)).toMatchObject({
        billable_metric_id: m.billable_metric_id,
        metric_group: { region: "us" }
      })
      // without a metric: the seed's usage price, both fields null
      const seed = await price({})
      expect(seed.status).toBe(200)
      expect(await version(seed)).toMatchObject({ billable_metric_id: null, metric_group: null })

      expect(refusal(await price({ billable_metric_id: "nope" }))).toEqual([
        404,
        "resource_not_found",
        "billable_metric_id"
      ])
      expect(refusal(await price({ billable_metric_id: "calls_region" }))).toEqual([
        400,
        "InvalidParameter",
        "metric_group"
      ])
      expect(
        refusal(await price({ billable_metric_id: "calls_region", metric_group: { region: "eu", tier: "x" } }))
      ).toEqual([400, "InvalidParameter", "metric_group"])
      expect(refusal(await price({ metric_group: { region: "eu" } }))).toEqual([
        400,
        "InvalidParameter",
        "metric_group"
      ])
      expect(
        refusal(
          await price({
            billable_metric_id: "calls_region",
            price_type: "flat_price",
            payment_timing: "prepaid",
            billing_dimension: "quantity",
            price_plan: { billing_cycle_unit: "month", base_price_val: "10.00" }
          })
        )
      ).toEqual([400, "InvalidParameter", "billable_metric_id"])
      // archived: the prices stay, no new price may reference it
      expect((await api.call("POST", "/api/v1/billable_metrics/calls_region/archive", key)).status).toBe(200)
      expect(refusal(await price({ billable_metric_id: "calls_region", metric_group: { region: "eu" } }))).toEqual([
        400,
        "InvalidParameter",
        "billable_metric_id"
      ])
      expect((await version(eu)).biz_status).toBe("active")
    })
  })
}
