/**
 * The meter event store on `@effect/sql` (PostgreSQL and PGlite): events in
 * `recur_meter_events` (migration `0017_meter_events`), aggregated in SQL with `numeric`
 * arithmetic — exact — over the customer index. docs/usage.md "Events and the store" shows
 * each aggregation's query.
 *
 * @since 0.1.0
 */
import * as SqlClient from "effect/sql/SqlClient"
import { type Aggregation, MeterValues, type Store } from "@recur/core"
import { Effect, Option } from "effect"

interface EventRow {
  readonly id: string
  readonly merchant_id: string
  readonly transaction_id: string
  readonly customer_id: string
  readonly subscription_id: string | null
  readonly code: string
  readonly timestamp: unknown
  readonly properties: unknown
  readonly created_at: unknown
  readonly voided_at: unknown
  readonly seq?: unknown
}

const num = (v: unknown): number => (typeof v === "number" ? v : Number(v))

const toEvent = (r: EventRow): Store.MeterEvent => ({
  id: r.id,
  merchant_id: r.merchant_id,
  transaction_id: r.transaction_id,
  customer_id: r.customer_id,
  subscription_id: r.subscription_id,
  code: r.code,
  timestamp: num(r.timestamp),
  properties: (typeof r.properties === "string" ? JSON.parse(r.properties) : r.properties) as Record<
    string,
    string | boolean
  >,
  created_at: num(r.created_at),
  voided_at: r.voided_at === null ? null : num(r.voided_at)
})

/** The numeric properties of an event, as normalized decimal text (what `aggregate` casts). */
const numbersOf = (properties: Readonly<Record<string, string | boolean>>) => {
  const numbers: Record<string, string> = {}
  for (const key in properties) {
    const micros = MeterValues.micros(properties[key])
    if (micros !== undefined) numbers[key] = MeterValues.formatMicros(micros)
  }
  return numbers
}

const columns = `id, merchant_id, transaction_id, customer_id, subscription_id, code, timestamp, properties, created_at, voided_at`

/**
 * The SQL text and parameters of one aggregation. Each group property is a column `g0…`; the
 * read property is `v` (its text) and, for numeric aggregations, `n` (its exact value, from
 * `numbers`: only numeric values are there).
 */
export const aggregateQuery = (
  q: Store.MeterAggregateQuery
): { readonly text: string; readonly params: Array<unknown> } => {
  const params: Array<unknown> = []
  const p = (v: unknown) => {
    params.push(v)
    return `$${params.length}`
  }
  const { spec } = q
  const g = spec.group_by.map((_, i) => `g${i}`)
  const groups = spec.group_by.map((name, i) => `, properties->>${p(name)} as ${g[i]}`).join("")
  const gs = g.map((c) => `${c}, `).join("")
  const groupBy = g.length === 0 ? "" : ` group by ${g.join(", ")}`
  const partition = g.length === 0 ? "" : `partition by ${g.join(", ")} `
  const numeric = spec.aggregation !== "count" && spec.aggregation !== "unique_count"
  const where = [
    `merchant_id = ${p(q.merchant_id)}`,
    `customer_id = ${p(q.customer_id)}`,
    `code = ${p(q.code)}`,
    `voided_at is null`,
    `timestamp < ${p(q.to)}`
  ]
  const from = p(q.from)
  if (q.subscription_id === null) where.push(`subscription_id is null`)
  else if (q.subscription_id !== undefined) where.push(`subscription_id = ${p(q.subscription_id)}`)
  for (const f of spec.filters)
    where.push(
      f.values.length === 0 ? "false" : `properties->>${p(f.property)} in (${f.values.map((v) => p(v)).join(", ")})`
    )
  const property = spec.property === null ? null : p(spec.property)
  if (property !== null) where.push(`${numeric ? "numbers" : "properties"} ? ${property}`)
  const value =
    property === null ? "" : numeric ? `, (numbers->>${property})::numeric as n` : `, properties->>${property} as v`
  /** The events read (each use its own scan: a shared CTE would be materialized). */
  const events = (time: string) =>
    `(select timestamp as ts, seq${value}${groups} from recur_meter_events where ${where.join(" and ")} and ${time}) e`
  const inPeriod = events(`timestamp >= ${from}`)
  const to = p(q.to)
  switch (spec.aggregation) {
    case "count":
      return { text: `select ${gs}count(*)::text as value, count(*) as events from ${inPeriod}${groupBy}`, params }
    case "unique_count":
      return {
        text: `select ${gs}count(distinct v)::text as value, count(*) as events from ${inPeriod}${groupBy}`,
        params
      }
    case "sum":
    case "max":
      return {
        text: `select ${gs}trim_scale(${spec.aggregation}(n))::text as value, count(*) as events from ${inPeriod}${groupBy}`,
        params
      }
    case "latest":
      return g.length === 0
        ? {
            text: `select (select n::text from ${inPeriod} order by ts desc, seq desc limit 1) as value,
              (select count(*) from ${inPeriod}) as events`,
            params
          }
        : {
            text: `select ${gs}n::text as value, events from (select ${gs}n, count(*) over (${partition}) as events,
              row_number() over (${partition}order by ts desc, seq desc) as rank from ${inPeriod}) r where rank = 1`,
            params
          }
    case "weighted_sum":
      // each reading's level holds until the next reading (or the period's end); the level at
      // the period's start is the last reading before it, held until the first reading
      return {
        text: `with t as (select ${gs}sum(held) as total, min(ts) as first, count(*) as events, null::numeric as start
            from (select ${gs}ts, n * (lead(ts, 1, ${to}::bigint) over (${partition}order by ts, seq) - ts) as held
              from ${inPeriod}) s${groupBy}),
          prior as (select ${g.length === 0 ? "" : `distinct on (${g.join(", ")}) `}${gs}null::numeric as total,
            null::bigint as first, 0::bigint as events, n as start
            from ${events(`timestamp < ${from}`)} order by ${gs}ts desc, seq desc${g.length === 0 ? " limit 1" : ""}),
          parts as (select * from t where events > 0 union all select * from prior),
          v as (select ${gs}(coalesce(sum(total), 0) + coalesce(max(start), 0) * (coalesce(min(first), ${to}::bigint) - ${from}::bigint)) * 1000000 as m,
            sum(events) as events from parts${groupBy}),
          u as (select ${gs}sign(m) as sign, div(abs(m), 3600000) as q, abs(m) - div(abs(m), 3600000) * 3600000 as rest, events from v)
          select ${gs}trim_scale(sign * (q + case when 2 * rest > 3600000 or (2 * rest = 3600000 and mod(q, 2) = 1)
            then 1 else 0 end) * 0.000001)::text as value, events from u`,
        params
      }
  }
}

/**
 * Builds the meter event store on the ambient `SqlClient`.
 *
 * @since 0.1.0
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const meter: Store.MeterEvents = {
    insertMany: (events) =>
      Effect.gen(function* () {
        if (events.length === 0) return []
        const rows = JSON.stringify(events.map((e) => ({ ...e, numbers: numbersOf(e.properties) })))
        const inserted = yield* sql<{ id: string }>`insert into recur_meter_events (${sql.literal(columns)}, numbers)
          select ${sql.literal(columns)}, numbers from rows from (jsonb_to_recordset(${rows}::jsonb) as (
            id text, merchant_id text, transaction_id text, customer_id text, subscription_id text, code text,
            timestamp bigint, properties jsonb, created_at bigint, voided_at bigint, numbers jsonb)) with ordinality
            as x(${sql.literal(columns)}, numbers, ord)
          order by ord
          on conflict do nothing returning id`.pipe(Effect.orDie)
        const ids = new Set(inserted.map((r) => r.id))
        return events.filter((e) => ids.delete(e.id))
      }),
    aggregate: (q) =>
      Effect.gen(function* () {
        const { params, text } = aggregateQuery(q)
        const rows = yield* sql.unsafe<Record<string, unknown>>(text, params).pipe(Effect.orDie)
        const out: Array<Aggregation.AggregatedValue> = []
        for (const r of rows) {
          const events = num(r.events)
          if (q.spec.aggregation !== "weighted_sum" && events === 0) continue
          out.push({
            group: q.spec.group_by.map((_, i) => (r[`g${i}`] ?? null) as string | null),
            value: String(r.value ?? "0"),
            events
          })
        }
        return out.length === 0 && q.spec.group_by.length === 0 ? [{ group: [], value: "0", events: 0 }] : out
      }),
    get: (merchantId, transactionId) =>
      sql<EventRow>`select ${sql.literal(columns)} from recur_meter_events
        where merchant_id = ${merchantId} and transaction_id = ${transactionId}`.pipe(
        Effect.orDie,
        Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toEvent))
      ),
    list: (merchantId, query) =>
      Effect.gen(function* () {
        const cursor =
          query.starting_after === undefined
            ? sql`true`
            : sql`seq < (select seq from recur_meter_events where merchant_id = ${merchantId} and id = ${query.starting_after})`
        const rows = yield* sql<EventRow>`select ${sql.literal(columns)} from recur_meter_events
          where merchant_id = ${merchantId}
            and ${query.customer_id === undefined ? sql`true` : sql`customer_id = ${query.customer_id}`}
            and ${query.code === undefined ? sql`true` : sql`code = ${query.code}`}
            and ${cursor}
          order by seq desc limit ${query.limit + 1}`.pipe(Effect.orDie)
        return { list: rows.slice(0, query.limit).map(toEvent), has_more: rows.length > query.limit }
      }),
    void: (merchantId, transactionId, at) =>
      sql<{ id: string }>`update recur_meter_events set voided_at = ${at}
        where merchant_id = ${merchantId} and transaction_id = ${transactionId} and voided_at is null returning id`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows.length > 0)
      )
  }
  return meter
})
