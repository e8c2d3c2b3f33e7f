/**
 * {@link Store.Storage} on `@effect/sql`: the same code serves PostgreSQL (`@effect/sql-pg`)
 * and embedded PGlite. Records live as `jsonb` beside their indexed columns; lists, filters and
 * cursors are evaluated in SQL; claims use `FOR UPDATE SKIP LOCKED`; SQL errors are defects,
 * except unique violations, which are typed.
 *
 * @since 0.1.0
 */
import * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import { Store } from "@recur/core"
import { Effect, Layer, Option, Schema } from "effect"
import * as SqlMeter from "./SqlMeter.js"

const toParam = (v: Store.ColumnValue): unknown =>
  typeof v === "bigint" ? v.toString() : Array.isArray(v) ? JSON.stringify(v) : v

const num = (v: unknown): number => (typeof v === "number" ? v : Number(v))

/** A column value inside a JSON batch (`jsonb_populate_recordset` casts it to the column's type). */
const toJson = (v: Store.ColumnValue): unknown => (typeof v === "bigint" ? v.toString() : v)

/**
 * Builds the storage on the ambient `SqlClient`.
 *
 * @since 0.1.0
 */
export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const repository = <A, I>(entity: Store.Entity<A, I>): Store.Repository<A> => {
    const table = sql(entity.table)
    // Schema compiles both once per entity
    const encode = Schema.encodeSync(entity.schema)
    const decode = Schema.decodeUnknownSync(entity.schema)
    const columnNames = Object.keys(entity.columns)
    const hasUnique = entity.unique.length > 0

    const row = (a: A) =>
      Effect.sync(() => {
        const encoded = encode(a)
        const r: Record<string, unknown> = {
          id: entity.id(a),
          merchant_id: entity.merchantId(a),
          created_at: new Date(entity.createdAt(a)),
          data: JSON.stringify(encoded)
        }
        for (const c of columnNames) r[c] = toParam(entity.columns[c]!(a))
        return r
      })

    /** Batch statements pass their rows as one JSON array, typed by the table's own row type. */
    const jsonRow = (a: A, version?: number) => {
      const r: Record<string, unknown> = {
        id: entity.id(a),
        merchant_id: entity.merchantId(a),
        created_at: new Date(entity.createdAt(a)).toISOString(),
        data: encode(a)
      }
      if (version !== undefined) r.version = version
      for (const c of columnNames) r[c] = toJson(entity.columns[c]!(a))
      return r
    }
    const quoted = (names: ReadonlyArray<string>) => sql.literal(names.map((n) => `"${n}"`).join(", "))
    const insertColumns = quoted(["id", "merchant_id", "created_at", "data", ...columnNames])
    const updateSet = sql.literal(
      ["data = v.data", "version = t.version + 1", ...columnNames.map((c) => `"${c}" = v."${c}"`)].join(", ")
    )

    const versioned = (r: { data: unknown; version: unknown }) => ({
      value: decode(typeof r.data === "string" ? JSON.parse(r.data) : r.data),
      version: num(r.version)
    })

    /** Which unique constraint a conflicting record hits (after ON CONFLICT DO NOTHING). */
    const whichConstraint = (a: A, r: Record<string, unknown>) =>
      Effect.gen(function* () {
        const pk = yield* sql`select 1 from ${table} where id = ${r.id as string}`
        if (pk.length > 0) return "primary_key"
        for (const u of entity.unique) {
          const values = u.columns.map((c) => r[c])
          if (values.some((v) => v === null || v === undefined)) continue
          const clauses = u.columns.map((c, i) => sql`${sql(c)} = ${values[i] as string}`)
          const hit =
            yield* sql`select 1 from ${table} where merchant_id = ${entity.merchantId(a)} and ${sql.and(clauses)} and id <> ${r.id as string}`
          if (hit.length > 0) return u.name
        }
        return "unknown"
      })

    const uniqueFromError = (e: unknown): string | undefined => {
      const reason = (e as { reason?: { _tag?: string; constraint?: string } }).reason
      return reason?._tag === "UniqueViolation" ? (reason.constraint ?? "unknown") : undefined
    }

    /** A deadlock's victim or a serialization failure: the transaction lost a race and is aborted. */
    const lostRace = (e: unknown): boolean => {
      const tag = (e as { reason?: { _tag?: string } }).reason?._tag
      return tag === "DeadlockError" || tag === "SerializationError"
    }

    const filterClause = (f: Store.Filter): Statement.Fragment => {
      const col = sql(f.column)
      switch (f.op) {
        case "in":
          return f.values.length === 0
            ? sql.literal("false")
            : sql`${col} in ${sql.in(f.values.map((v) => v as string))}`
        case "overlaps":
          return f.values.length === 0
            ? sql.literal("false")
            : sql`exists (select 1 from jsonb_array_elements_text(${col}) x(v) where x.v in ${sql.in([...f.values])})`
        case "is_null":
          return sql`${col} is null`
        case "not_null":
          return sql`${col} is not null`
      }
    }

    return {
      insert: (a) =>
        Effect.gen(function* () {
          const r = yield* row(a)
          const inserted = yield* sql`insert into ${table} ${sql.insert(r)} on conflict do nothing returning id`.pipe(
            Effect.orDie
          )
          if (inserted.length === 0) {
            const constraint = yield* Effect.orDie(whichConstraint(a, r))
            return yield* Effect.fail(new Store.UniqueViolation({ entity: entity.name, constraint }))
          }
        }),
      update: (a, expectedVersion) =>
        Effect.gen(function* () {
          const r = yield* row(a)
          const { created_at: _c, id, merchant_id, ...rest } = r
          const statement = sql`update ${table} set ${sql.update({ ...rest, version: expectedVersion + 1 })}
            where id = ${id as string} and merchant_id = ${merchant_id as string} and version = ${expectedVersion} returning version`
          // A unique violation aborts a Postgres transaction: run updates of constrained
          // entities in a savepoint so the caller can handle the typed error.
          const updated = yield* (hasUnique ? sql.withTransaction(statement) : statement).pipe(
            Effect.catch((e): Effect.Effect<never, Store.UniqueViolation | Store.VersionConflict> => {
              const constraint = uniqueFromError(e)
              if (constraint) return Effect.fail(new Store.UniqueViolation({ entity: entity.name, constraint }))
              // PostgreSQL chose this transaction as a deadlock's (or a serialization's) victim: it
              // is aborted, as after a lost version race — the caller's ConcurrentUpdate rolls back and retries
              if (lostRace(e)) return Effect.fail(new Store.VersionConflict({ entity: entity.name, id: id as string }))
              return Effect.die(e)
            })
          )
          if (updated.length === 0)
            return yield* Effect.fail(new Store.VersionConflict({ entity: entity.name, id: id as string }))
          return num(updated[0]!.version)
        }),
      get: (merchantId, id) =>
        Effect.gen(function* () {
          if (id.includes("\u0000")) return Option.none() // PostgreSQL text cannot hold NUL: no such row
          const rows = yield* sql<{
            data: unknown
            version: unknown
          }>`select data, version from ${table} where merchant_id = ${merchantId} and id = ${id}`.pipe(Effect.orDie)
          return rows[0] ? Option.some(versioned(rows[0])) : Option.none()
        }),
      getMany: (merchantId, ids) =>
        Effect.gen(function* () {
          const wanted = [...new Set(ids)].filter((id) => !id.includes("\u0000"))
          const found = new Map<string, Store.Versioned<A>>()
          if (wanted.length === 0) return found
          const rows = yield* sql<{
            id: string
            data: unknown
            version: unknown
          }>`select id, data, version from ${table} where merchant_id = ${merchantId} and id in ${sql.in(wanted)}`.pipe(
            Effect.orDie
          )
          for (const r of rows) found.set(r.id, versioned(r))
          return found
        }),
      insertMany: (as) =>
        Effect.gen(function* () {
          if (as.length === 0) return []
          const rows = yield* Effect.sync(() => as.map((a) => jsonRow(a)))
          const inserted = yield* sql<{ id: string }>`insert into ${table} (${insertColumns})
            select ${insertColumns} from jsonb_populate_recordset(null::${table}, ${JSON.stringify(rows)}::jsonb)
            on conflict do nothing returning id`.pipe(Effect.orDie)
          const ids = new Set(inserted.map((r) => r.id))
          // a primary key repeated within the batch was inserted once: keep its first record
          return as.filter((a) => ids.delete(entity.id(a)))
        }),
      updateMany: (items) =>
        Effect.gen(function* () {
          if (items.length === 0) return []
          const rows = yield* Effect.sync(() => items.map((i) => jsonRow(i.value, i.expectedVersion)))
          const statement = Effect.gen(function* () {
            const updated = yield* sql<{ id: string; version: unknown }>`update ${table} t set ${updateSet}
              from jsonb_populate_recordset(null::${table}, ${JSON.stringify(rows)}::jsonb) v
              where t.id = v.id and t.merchant_id = v.merchant_id and t.version = v.version
              returning t.id, t.version`
            const versions = new Map(updated.map((r) => [r.id, num(r.version)]))
            const stale = items.find((i) => !versions.has(entity.id(i.value)))
            // all or none: a stale record rolls the savepoint back
            if (stale !== undefined || updated.length !== items.length) {
              return yield* Effect.fail(
                new Store.VersionConflict({ entity: entity.name, id: entity.id((stale ?? items[0]!).value) })
              )
            }
            return items.map((i) => versions.get(entity.id(i.value))!)
          })
          return yield* sql.withTransaction(statement).pipe(
            Effect.catchTag("SqlError", (e) => {
              const constraint = uniqueFromError(e)
              return constraint
                ? Effect.fail(new Store.UniqueViolation({ entity: entity.name, constraint }))
                : Effect.die(e)
            })
          )
        }),
      findBy: (merchantId, column, value) =>
        Effect.gen(function* () {
          const rows = yield* sql<{
            data: unknown
            version: unknown
          }>`select data, version from ${table} where merchant_id = ${merchantId} and ${sql(column)} = ${value as string} order by created_at desc, id desc limit 1`.pipe(
            Effect.orDie
          )
          return rows[0] ? Option.some(versioned(rows[0])) : Option.none()
        }),
      lookup: (column, value) =>
        Effect.gen(function* () {
          if (value.includes("\u0000")) return Option.none()
          const rows = yield* sql<{
            data: unknown
            version: unknown
          }>`select data, version from ${table} where ${sql(column)} = ${value} limit 1`.pipe(Effect.orDie)
          return rows[0] ? Option.some(versioned(rows[0])) : Option.none()
        }),
      scan: ({ after, limit }) =>
        Effect.map(
          Effect.orDie(sql<{
            data: unknown
            version: unknown
          }>`select data, version from ${table} ${after === undefined ? sql.literal("") : sql`where id > ${after}`}
            order by id limit ${limit}`),
          (rows) => rows.map(versioned)
        ),
      remove: (merchantId, id) =>
        Effect.map(
          Effect.orDie(sql`delete from ${table} where merchant_id = ${merchantId} and id = ${id} returning id`),
          (r) => r.length > 0
        ),
      list: (merchantId, query) =>
        Effect.gen(function* () {
          const bad = Store.checkPage(query)
          if (bad) return yield* Effect.fail(bad)
          const cursorId = query.starting_after ?? query.ending_before
          if (cursorId !== undefined) {
            const found = yield* Effect.orDie(
              sql`select 1 from ${table} where merchant_id = ${merchantId} and id = ${cursorId}`
            )
            if (found.length === 0)
              return yield* Effect.fail(new Store.CursorNotFound({ entity: entity.name, cursor: cursorId }))
          }
          const clauses: Array<Statement.Fragment> = [sql`merchant_id = ${merchantId}`]
          for (const f of query.filters ?? []) clauses.push(filterClause(f))
          const c = query.created
          if (c?.gt !== undefined) clauses.push(sql`created_at > ${new Date(c.gt)}`)
          if (c?.gte !== undefined) clauses.push(sql`created_at >= ${new Date(c.gte)}`)
          if (c?.lt !== undefined) clauses.push(sql`created_at < ${new Date(c.lt)}`)
          if (c?.lte !== undefined) clauses.push(sql`created_at <= ${new Date(c.lte)}`)
          const cursorRow =
            cursorId !== undefined
              ? sql`(select created_at, id from ${table} where merchant_id = ${merchantId} and id = ${cursorId})`
              : undefined
          const backwards = query.ending_before !== undefined
          if (cursorRow)
            clauses.push(backwards ? sql`(created_at, id) > ${cursorRow}` : sql`(created_at, id) < ${cursorRow}`)
          const order = backwards ? sql.literal("created_at asc, id asc") : sql.literal("created_at desc, id desc")
          const rows = yield* sql<{
            data: unknown
            version: unknown
          }>`select data, version from ${table} where ${sql.and(clauses)} order by ${order} limit ${query.limit + 1}`.pipe(
            Effect.orDie
          )
          const has_more = rows.length > query.limit
          const page = rows.slice(0, query.limit)
          if (backwards) page.reverse()
          const list = page.map((r) => versioned(r).value)
          return { list, has_more }
        })
    }
  }

  const repositories = new Map<string, Store.Repository<any>>()

  const eventRow = (e: Store.OutboxEvent) => ({
    id: e.id,
    merchant_id: e.merchant_id,
    created_at: new Date(e.created_at),
    data: JSON.stringify(e),
    business_id: e.business_id,
    type: e.type,
    sequence: e.sequence
  })
  const toEvent = (data: unknown): Store.OutboxEvent =>
    (typeof data === "string" ? JSON.parse(data) : data) as Store.OutboxEvent

  const outbox: Store.Outbox = {
    append: (events) =>
      events.length === 0
        ? Effect.void
        : Effect.orDie(
            Effect.asVoid(
              sql`insert into recur_events ${sql.insert(events.map(eventRow) as unknown as readonly [Record<string, unknown>])}`
            )
          ),
    claim: ({ leaseMs, limit, now, owner }) =>
      Effect.map(
        Effect.orDie(sql<{
          data: unknown
        }>`update recur_events set lease_owner = ${owner}, lease_until = ${now + leaseMs}
          where id in (select id from recur_events where not dispatched and lease_until <= ${now}
                       order by created_at, id limit ${limit} for update skip locked)
          returning data`),
        (rows) => rows.map((r) => toEvent(r.data)).sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1))
      ),
    complete: (id, owner) =>
      Effect.map(
        Effect.orDie(
          sql`update recur_events set dispatched = true where id = ${id} and lease_owner = ${owner} and not dispatched returning id`
        ),
        (r) => r.length > 0
      ),
    completeMany: (ids, owner) =>
      ids.length === 0
        ? Effect.succeed(0)
        : Effect.map(
            Effect.orDie(
              sql`update recur_events set dispatched = true where id in ${sql.in([...new Set(ids)])} and lease_owner = ${owner} and not dispatched returning id`
            ),
            (r) => r.length
          ),
    nextSequence: (merchantId, businessId) =>
      Effect.map(
        Effect.orDie(
          sql<{
            next: unknown
          }>`select coalesce(max(sequence), 0) + 1 as next from recur_events where merchant_id = ${merchantId} and business_id = ${businessId}`
        ),
        (r) => num(r[0]!.next)
      ),
    nextSequences: (merchantId, businessIds) => {
      const wanted = [...new Set(businessIds)]
      if (wanted.length === 0) return Effect.succeed(new Map<string, number>())
      return Effect.map(
        Effect.orDie(sql<{
          business_id: string
          next: unknown
        }>`select business_id, max(sequence) + 1 as next from recur_events
          where merchant_id = ${merchantId} and business_id in ${sql.in(wanted)} group by business_id`),
        (rows) => {
          const next = new Map(wanted.map((b) => [b, 1]))
          for (const r of rows) next.set(r.business_id, num(r.next))
          return next
        }
      )
    }
  }

  const workQueue: Store.WorkQueue = {
    schedule: (item) =>
      Effect.orDie(
        Effect.asVoid(sql`insert into recur_work_items (merchant_id, kind, subject_id, due_at, lane)
          values (${item.merchant_id}, ${item.kind}, ${item.subject_id}, ${item.due_at}, ${item.lane ?? "live"})
          on conflict (merchant_id, kind, subject_id)
          do update set due_at = excluded.due_at, lane = excluded.lane, lease_owner = null, lease_until = 0, attempts = 0`)
      ),
    scheduleMany: (items) => {
      // one row per key (the last wins), as ON CONFLICT cannot touch a row twice in one statement
      const rows = [
        ...new Map(
          items.map((i) => [
            `${i.merchant_id}\u0000${i.kind}\u0000${i.subject_id}`,
            {
              merchant_id: i.merchant_id,
              kind: i.kind,
              subject_id: i.subject_id,
              due_at: i.due_at,
              lane: i.lane ?? "live"
            }
          ])
        ).values()
      ]
      if (rows.length === 0) return Effect.void
      return Effect.orDie(
        Effect.asVoid(sql`insert into recur_work_items (merchant_id, kind, subject_id, due_at, lane)
          select merchant_id, kind, subject_id, due_at, lane
          from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as x(merchant_id text, kind text, subject_id text, due_at bigint, lane text)
          on conflict (merchant_id, kind, subject_id)
          do update set due_at = excluded.due_at, lane = excluded.lane, lease_owner = null, lease_until = 0, attempts = 0`)
      )
    },
    cancel: (merchantId, kind, subjectId) =>
      Effect.orDie(
        Effect.asVoid(
          sql`delete from recur_work_items where merchant_id = ${merchantId} and kind = ${kind} and subject_id = ${subjectId}`
        )
      ),
    cancelMany: (keys) =>
      keys.length === 0
        ? Effect.void
        : Effect.orDie(
            Effect.asVoid(sql`delete from recur_work_items w using jsonb_to_recordset(${JSON.stringify(keys.map((k) => ({ merchant_id: k.merchant_id, kind: k.kind, subject_id: k.subject_id })))}::jsonb)
            as x(merchant_id text, kind text, subject_id text)
            where w.merchant_id = x.merchant_id and w.kind = x.kind and w.subject_id = x.subject_id`)
          ),
    claim: ({ lane, leaseMs, limit, merchantId, now, owner }) =>
      Effect.map(
        Effect.orDie(sql<{
          lane: "live" | "frozen"
          merchant_id: string
          kind: string
          subject_id: string
          due_at: unknown
          attempts: unknown
        }>`
          update recur_work_items w set lease_owner = ${owner}, lease_until = ${now + leaseMs}, attempts = w.attempts + 1
          from (select merchant_id, kind, subject_id from recur_work_items
                where due_at <= ${now} and lease_until <= ${now} and lane = ${lane ?? "live"}
                ${merchantId !== undefined ? sql`and merchant_id = ${merchantId}` : sql.literal("")}
                order by due_at limit ${limit} for update skip locked) due
          where w.merchant_id = due.merchant_id and w.kind = due.kind and w.subject_id = due.subject_id
          returning w.lane, w.merchant_id, w.kind, w.subject_id, w.due_at, w.attempts`),
        (rows) =>
          rows
            .map((r) => ({
              lane: r.lane,
              merchant_id: r.merchant_id,
              kind: r.kind,
              subject_id: r.subject_id,
              due_at: num(r.due_at),
              attempts: num(r.attempts)
            }))
            .sort((a, b) => a.due_at - b.due_at)
      ),
    complete: (item, owner) =>
      Effect.map(
        Effect.orDie(sql`delete from recur_work_items where merchant_id = ${item.merchant_id} and kind = ${item.kind}
          and subject_id = ${item.subject_id} and lease_owner = ${owner} and due_at = ${item.due_at} returning kind`),
        (r) => r.length > 0
      ),
    completeMany: (items, owner) =>
      items.length === 0
        ? Effect.succeed(0)
        : Effect.map(
            Effect.orDie(sql`delete from recur_work_items w using jsonb_to_recordset(${JSON.stringify(items.map((i) => ({ merchant_id: i.merchant_id, kind: i.kind, subject_id: i.subject_id, due_at: i.due_at })))}::jsonb)
            as x(merchant_id text, kind text, subject_id text, due_at bigint)
            where w.merchant_id = x.merchant_id and w.kind = x.kind and w.subject_id = x.subject_id and w.due_at = x.due_at and w.lease_owner = ${owner}
            returning w.kind`),
            (r) => r.length
          ),
    retryLater: (item, owner, at) =>
      Effect.map(
        Effect.orDie(sql`update recur_work_items set lease_until = ${at} where merchant_id = ${item.merchant_id} and kind = ${item.kind}
          and subject_id = ${item.subject_id} and lease_owner = ${owner} and due_at = ${item.due_at} returning kind`),
        (r) => r.length > 0
      ),
    setAside: (item, owner) =>
      Effect.map(
        Effect.orDie(sql`update recur_work_items set lane = 'held' where merchant_id = ${item.merchant_id} and kind = ${item.kind}
          and subject_id = ${item.subject_id} and lease_owner = ${owner} and due_at = ${item.due_at} returning kind`),
        (r) => r.length > 0
      ),
    listSetAside: ({ limit, merchantId }) =>
      Effect.map(
        Effect.orDie(sql<{ merchant_id: string; kind: string; subject_id: string; due_at: unknown; attempts: unknown }>`
          select merchant_id, kind, subject_id, due_at, attempts from recur_work_items where lane = 'held'
          ${merchantId !== undefined ? sql`and merchant_id = ${merchantId}` : sql.literal("")}
          order by due_at limit ${limit}`),
        (rows) =>
          rows.map((r) => ({
            lane: "held" as const,
            merchant_id: r.merchant_id,
            kind: r.kind,
            subject_id: r.subject_id,
            due_at: num(r.due_at),
            attempts: num(r.attempts)
          }))
      ),
    nextDue: (merchantId) =>
      Effect.map(
        Effect.orDie(
          sql<{
            due: unknown
          }>`select min(greatest(due_at, lease_until)) as due from recur_work_items where merchant_id = ${merchantId} and lane <> 'held'`
        ),
        (r) => (r[0]?.due === null || r[0]?.due === undefined ? Option.none() : Option.some(num(r[0].due)))
      )
  }

  type IdemRow = {
    merchant_id: string
    request_id: string
    fingerprint: string
    state: string
    status: unknown
    response: string | null
    created_at: unknown
    expires_at: unknown
  }
  const toIdem = (r: IdemRow): Store.IdempotencyRecord => ({
    merchant_id: r.merchant_id,
    request_id: r.request_id,
    fingerprint: r.fingerprint,
    state: r.state as Store.IdempotencyRecord["state"],
    status: r.status === null ? null : num(r.status),
    response: r.response,
    created_at: num(r.created_at),
    expires_at: num(r.expires_at)
  })

  const idempotency: Store.IdempotencyStore = {
    begin: (record) =>
      Effect.orDie(
        Effect.gen(function* () {
          const claimed = yield* sql`insert into recur_idempotency ${sql.insert({ ...record })}
            on conflict (merchant_id, request_id) do update
              set fingerprint = excluded.fingerprint, state = excluded.state, status = null, response = null,
                  created_at = excluded.created_at, expires_at = excluded.expires_at
              where recur_idempotency.expires_at <= excluded.created_at
            returning request_id`
          if (claimed.length > 0) return { created: true as const }
          const rows =
            yield* sql<IdemRow>`select * from recur_idempotency where merchant_id = ${record.merchant_id} and request_id = ${record.request_id}`
          return rows[0] ? { created: false as const, existing: toIdem(rows[0]) } : { created: true as const }
        })
      ),
    complete: (merchantId, requestId, status, response, expiresAt) =>
      Effect.orDie(
        Effect.asVoid(sql`update recur_idempotency set state = 'completed', status = ${status}, response = ${response}, expires_at = ${expiresAt}
        where merchant_id = ${merchantId} and request_id = ${requestId}`)
      ),
    release: (merchantId, requestId) =>
      Effect.orDie(
        Effect.asVoid(
          sql`delete from recur_idempotency where merchant_id = ${merchantId} and request_id = ${requestId}`
        )
      ),
    scanCompleted: ({ after, limit }) =>
      Effect.map(
        Effect.orDie(
          sql<IdemRow>`select * from recur_idempotency where state = 'completed'
            ${after === undefined ? sql.literal("") : sql`and (merchant_id, request_id) > (${after.merchant_id}, ${after.request_id})`}
            order by merchant_id, request_id limit ${limit}`
        ),
        (rows) => rows.map(toIdem)
      )
  }

  // the upsert takes the row's lock until the transaction ends: concurrent takers of one series
  // wait, and a rolled-back take leaves no hole
  const counters: Store.Counters = {
    take: (merchantId, series, count) =>
      Effect.map(
        Effect.orDie(
          sql<{
            last: unknown
          }>`insert into recur_counters (merchant_id, series, last) values (${merchantId}, ${series}, ${count})
            on conflict (merchant_id, series) do update set last = recur_counters.last + excluded.last
            returning last`
        ),
        (r) => num(r[0]!.last) - count + 1
      )
  }

  return Store.Storage.of({
    repository: <A, I>(entity: Store.Entity<A, I>) => {
      let r = repositories.get(entity.name)
      if (!r) {
        r = repository(entity)
        repositories.set(entity.name, r)
      }
      return r as Store.Repository<A>
    },
    withTransaction: (effect) =>
      sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", (e) => Effect.die(e))) as typeof effect,
    outbox,
    workQueue,
    idempotency,
    counters,
    meter: yield* SqlMeter.make
  })
})

/**
 * The storage on a `SqlClient` provided by the host (its own Postgres pool, say).
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<Store.Storage, never, SqlClient.SqlClient> = Layer.effect(Store.Storage, make)
