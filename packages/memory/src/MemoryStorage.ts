/**
 * In-memory storage behind the core ports: the same semantics as the SQL adapters (tenant
 * scoping, unique constraints, cursor pagination, transactions that roll back on any failure,
 * leases), fast enough for thousands of engine tests.
 *
 * @since 0.1.0
 */
import { Store } from "@recur/core"
import { Context, Effect, Exit, Layer, Option, Semaphore } from "effect"
import * as MemoryMeter from "./MemoryMeter.js"

interface Row {
  readonly value: unknown
  readonly version: number
  readonly merchantId: string
  readonly createdAt: number
  readonly id: string
  readonly columns: Readonly<Record<string, Store.ColumnValue>>
}

interface LeasedEvent extends Store.OutboxEvent {
  readonly dispatched: boolean
  readonly leaseOwner: string | null
  readonly leaseUntil: number
}

interface LeasedItem extends Store.WorkItem {
  readonly leaseOwner: string | null
  readonly leaseUntil: number
  readonly generation: number
}

type Undo = () => void

const norm = (v: Store.ColumnValue): unknown => (typeof v === "bigint" ? v.toString() : v)

const compareDesc = (a: Row, b: Row): number =>
  a.createdAt !== b.createdAt ? b.createdAt - a.createdAt : a.id < b.id ? 1 : a.id > b.id ? -1 : 0

/** A table: its rows by id, and for every column (and the merchant) the ids holding each value. */
interface Table {
  readonly rows: Map<string, Row>
  readonly index: Map<string, Map<unknown, Set<string>>>
}

const MERCHANT = "\u0000merchant"

const indexKeys = (row: Row): ReadonlyArray<readonly [string, unknown]> => {
  const keys: Array<readonly [string, unknown]> = [[MERCHANT, row.merchantId]]
  for (const [column, value] of Object.entries(row.columns)) {
    if (value === null || value === undefined) continue
    if (Array.isArray(value)) for (const v of value) keys.push([column, norm(v as Store.ColumnValue)])
    else keys.push([column, norm(value)])
  }
  return keys
}

const applyRow = (t: Table, id: string, row: Row | undefined) => {
  const previous = t.rows.get(id)
  if (previous) {
    for (const [column, value] of indexKeys(previous)) t.index.get(column)?.get(value)?.delete(id)
  }
  if (row === undefined) {
    t.rows.delete(id)
    return
  }
  t.rows.set(id, row)
  for (const [column, value] of indexKeys(row)) {
    let byValue = t.index.get(column)
    if (!byValue) {
      byValue = new Map()
      t.index.set(column, byValue)
    }
    let ids = byValue.get(value)
    if (!ids) {
      ids = new Set()
      byValue.set(value, ids)
    }
    ids.add(id)
  }
}

/** The rows whose `column` holds one of `values` (a superset for array columns; callers filter again). */
const candidates = (t: Table, column: string, values: ReadonlyArray<Store.ColumnValue | string>): Array<Row> => {
  const byValue = t.index.get(column)
  if (!byValue) return []
  const out: Array<Row> = []
  const seen = new Set<string>()
  for (const v of values) {
    for (const id of byValue.get(norm(v as Store.ColumnValue)) ?? []) {
      if (seen.has(id)) continue
      seen.add(id)
      const row = t.rows.get(id)
      if (row) out.push(row)
    }
  }
  return out
}

let instances = 0

/**
 * Builds a fresh in-memory storage.
 *
 * @since 0.1.0
 */
export const make = Effect.gen(function* () {
  const tables = new Map<string, Table>()
  const outbox = new Map<string, LeasedEvent>()
  const sequences = new Map<string, number>()
  const work = new Map<string, LeasedItem>()
  const idempotency = new Map<string, Store.IdempotencyRecord>()
  const lock = yield* Semaphore.make(1)
  // the open transaction's undo log, per fiber and per storage
  const undoLog = Context.Reference<Array<Undo> | null>(`@recur/testing/MemoryStorage/undoLog/${++instances}`, {
    defaultValue: () => null
  })

  const table = (name: string): Table => {
    let t = tables.get(name)
    if (!t) {
      t = { rows: new Map(), index: new Map() }
      tables.set(name, t)
    }
    return t
  }

  /** Writes (or with `undefined` removes) a row and keeps the table's indexes in step; undone with the transaction. */
  const putRow = (t: Table, id: string, row: Row | undefined, undo: (u: Undo) => void) => {
    const previous = t.rows.get(id)
    undo(() => applyRow(t, id, previous))
    applyRow(t, id, row)
  }

  /** Runs a write atomically: inside a transaction it joins it, otherwise it takes the lock. */
  const write = <A>(f: (undo: (u: Undo) => void) => A): Effect.Effect<A> =>
    Effect.flatMap(Effect.service(undoLog), (log) =>
      log !== null ? Effect.sync(() => f((u) => log.push(u))) : lock.withPermits(1)(Effect.sync(() => f(() => {})))
    )

  const setMapEntry = <K, V>(map: Map<K, V>, key: K, value: V | undefined, undo: (u: Undo) => void) => {
    const had = map.has(key)
    const previous = map.get(key)
    undo(() => (had ? map.set(key, previous as V) : map.delete(key)))
    if (value === undefined) map.delete(key)
    else map.set(key, value)
  }

  const repository = <A, I>(entity: Store.Entity<A, I>): Store.Repository<A> => {
    const rows = () => table(entity.table).rows
    const indexed = () => table(entity.table)
    const toRow = (a: A, version: number): Row => ({
      value: a,
      version,
      id: entity.id(a),
      merchantId: entity.merchantId(a),
      createdAt: entity.createdAt(a),
      columns: { id: entity.id(a), ...Object.fromEntries(Object.entries(entity.columns).map(([k, f]) => [k, f(a)])) }
    })
    const conflict = (row: Row): Store.UniqueViolation | undefined => {
      for (const u of entity.unique) {
        const values = u.columns.map((c) => row.columns[c])
        if (values.some((v) => v === null || v === undefined)) continue
        for (const other of candidates(indexed(), u.columns[0]!, [values[0]!])) {
          if (other.id === row.id || other.merchantId !== row.merchantId) continue
          if (u.columns.every((c, i) => norm(other.columns[c] ?? null) === norm(values[i] ?? null))) {
            return new Store.UniqueViolation({ entity: entity.name, constraint: u.name })
          }
        }
      }
      return undefined
    }
    const versioned = (row: Row): Store.Versioned<A> => ({ value: row.value as A, version: row.version })
    const matches = (row: Row, filter: Store.Filter): boolean => {
      const v = row.columns[filter.column]
      switch (filter.op) {
        case "in":
          return filter.values.some((x) => norm(x) === norm(v ?? null))
        case "overlaps":
          return Array.isArray(v) && filter.values.some((x) => (v as ReadonlyArray<string>).includes(x))
        case "is_null":
          return v === null || v === undefined
        case "not_null":
          return v !== null && v !== undefined
      }
    }
    const inRange = (row: Row, r: Store.CreatedRange | undefined): boolean =>
      r === undefined ||
      ((r.gt === undefined || row.createdAt > r.gt) &&
        (r.gte === undefined || row.createdAt >= r.gte) &&
        (r.lt === undefined || row.createdAt < r.lt) &&
        (r.lte === undefined || row.createdAt <= r.lte))

    return {
      insert: (a) =>
        Effect.flatMap(
          write((undo) => {
            const row = toRow(a, 1)
            if (rows().has(row.id)) return new Store.UniqueViolation({ entity: entity.name, constraint: "primary_key" })
            const c = conflict(row)
            if (c) return c
            putRow(indexed(), row.id, row, undo)
            return undefined
          }),
          (e) => (e ? Effect.fail(e) : Effect.void)
        ),
      update: (a, expectedVersion) =>
        Effect.flatMap(
          write((undo): Store.UniqueViolation | Store.VersionConflict | number => {
            const id = entity.id(a)
            const current = rows().get(id)
            if (!current || current.merchantId !== entity.merchantId(a) || current.version !== expectedVersion) {
              return new Store.VersionConflict({ entity: entity.name, id })
            }
            const row = { ...toRow(a, expectedVersion + 1), createdAt: current.createdAt }
            const c = conflict(row)
            if (c) return c
            putRow(indexed(), id, row, undo)
            return row.version
          }),
          (r) => (typeof r === "number" ? Effect.succeed(r) : Effect.fail(r))
        ),
      get: (merchantId, id) =>
        Effect.sync(() => {
          const row = rows().get(id)
          return row && row.merchantId === merchantId ? Option.some(versioned(row)) : Option.none()
        }),
      getMany: (merchantId, ids) =>
        Effect.sync(() => {
          const found = new Map<string, Store.Versioned<A>>()
          for (const id of ids) {
            const row = rows().get(id)
            if (row && row.merchantId === merchantId) found.set(id, versioned(row))
          }
          return found
        }),
      insertMany: (as) =>
        write((undo) => {
          const inserted: Array<A> = []
          for (const a of as) {
            const row = toRow(a, 1)
            if (rows().has(row.id) || conflict(row)) continue
            putRow(indexed(), row.id, row, undo)
            inserted.push(a)
          }
          return inserted
        }),
      updateMany: (items) =>
        Effect.flatMap(
          write((undo): Store.UniqueViolation | Store.VersionConflict | ReadonlyArray<number> => {
            // check everything first: all or none
            const next: Array<Row> = []
            for (const { expectedVersion, value } of items) {
              const id = entity.id(value)
              const current = rows().get(id)
              if (
                !current ||
                current.merchantId !== entity.merchantId(value) ||
                current.version !== expectedVersion ||
                next.some((r) => r.id === id)
              ) {
                return new Store.VersionConflict({ entity: entity.name, id })
              }
              next.push({ ...toRow(value, expectedVersion + 1), createdAt: current.createdAt })
            }
            const local: Array<Undo> = []
            for (const row of next) putRow(indexed(), row.id, row, (u) => local.push(u))
            for (const row of next) {
              const c = conflict(row)
              if (c) {
                for (const u of local.reverse()) u()
                return c
              }
            }
            for (const u of local) undo(u)
            return next.map((r) => r.version)
          }),
          (r) =>
            Array.isArray(r)
              ? Effect.succeed(r as ReadonlyArray<number>)
              : Effect.fail(r as Store.UniqueViolation | Store.VersionConflict)
        ),
      findBy: (merchantId, column, value) =>
        Effect.sync(() => {
          for (const row of candidates(indexed(), column, [value])) {
            if (row.merchantId === merchantId && norm(row.columns[column] ?? null) === norm(value))
              return Option.some(versioned(row))
          }
          return Option.none()
        }),
      lookup: (column, value) =>
        Effect.sync(() => {
          for (const row of candidates(indexed(), column, [value]))
            if (row.columns[column] === value) return Option.some(versioned(row))
          return Option.none()
        }),
      scan: ({ after, limit }) =>
        Effect.sync(() =>
          [...rows().values()]
            .filter((r) => after === undefined || r.id > after)
            .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
            .slice(0, limit)
            .map(versioned)
        ),
      remove: (merchantId, id) =>
        write((undo) => {
          const row = rows().get(id)
          if (!row || row.merchantId !== merchantId) return false
          putRow(indexed(), id, undefined, undo)
          return true
        }),
      list: (merchantId, query) =>
        Effect.suspend((): Effect.Effect<Store.Page<A>, Store.CursorNotFound | Store.InvalidPage> => {
          const bad = Store.checkPage(query)
          if (bad) return Effect.fail(bad)
          const cursorId = query.starting_after ?? query.ending_before
          let cursor: Row | undefined
          if (cursorId !== undefined) {
            cursor = rows().get(cursorId)
            if (!cursor || cursor.merchantId !== merchantId) {
              return Effect.fail(new Store.CursorNotFound({ entity: entity.name, cursor: cursorId }))
            }
          }
          // the rows an indexed `in` filter names, else the merchant's rows
          const by = (query.filters ?? []).find((f) => f.op === "in")
          const all = (
            by !== undefined && by.op === "in"
              ? candidates(indexed(), by.column, by.values)
              : candidates(indexed(), MERCHANT, [merchantId])
          )
            .filter(
              (r) =>
                r.merchantId === merchantId &&
                inRange(r, query.created) &&
                (query.filters ?? []).every((f) => matches(r, f))
            )
            .sort(compareDesc)
          if (cursor && query.ending_before !== undefined) {
            const before = all.filter((r) => compareDesc(r, cursor) < 0)
            const page = before.slice(Math.max(0, before.length - query.limit))
            return Effect.succeed({ list: page.map((r) => r.value as A), has_more: before.length > query.limit })
          }
          const after = cursor ? all.filter((r) => compareDesc(r, cursor) > 0) : all
          return Effect.succeed({
            list: after.slice(0, query.limit).map((r) => r.value as A),
            has_more: after.length > query.limit
          })
        })
    }
  }

  const repositories = new Map<string, Store.Repository<any>>()

  const withTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(Effect.service(undoLog), (current) =>
      current !== null
        ? effect
        : lock.withPermits(1)(
            Effect.suspend(() => {
              const log: Array<Undo> = []
              return Effect.provideService(effect, undoLog, log).pipe(
                Effect.onExit((exit) =>
                  Exit.isSuccess(exit)
                    ? Effect.void
                    : Effect.sync(() => {
                        for (let i = log.length - 1; i >= 0; i--) log[i]!()
                      })
                )
              )
            })
          )
    )

  const eventOutbox: Store.Outbox = {
    append: (events) =>
      write((undo) => {
        const eventsTable = table("recur_events")
        for (const e of events) {
          setMapEntry(outbox, e.id, { ...e, dispatched: false, leaseOwner: null, leaseUntil: 0 }, undo)
          putRow(
            eventsTable,
            e.id,
            {
              value: e,
              version: 1,
              id: e.id,
              merchantId: e.merchant_id,
              createdAt: e.created_at,
              columns: { business_id: e.business_id, type: e.type }
            },
            undo
          )
          const key = `${e.merchant_id}:${e.business_id}`
          setMapEntry(sequences, key, Math.max(sequences.get(key) ?? 0, e.sequence), undo)
        }
      }),
    claim: ({ leaseMs, limit, now, owner }) =>
      write((undo) => {
        const due = [...outbox.values()]
          .filter((e) => !e.dispatched && e.leaseUntil <= now)
          .sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1))
          .slice(0, limit)
        for (const e of due) setMapEntry(outbox, e.id, { ...e, leaseOwner: owner, leaseUntil: now + leaseMs }, undo)
        return due.map(({ dispatched: _d, leaseOwner: _o, leaseUntil: _u, ...e }) => e)
      }),
    complete: (id, owner) =>
      write((undo) => {
        const e = outbox.get(id)
        if (!e || e.leaseOwner !== owner || e.dispatched) return false
        setMapEntry(outbox, id, { ...e, dispatched: true }, undo)
        return true
      }),
    completeMany: (ids, owner) =>
      write((undo) => {
        let n = 0
        for (const id of new Set(ids)) {
          const e = outbox.get(id)
          if (!e || e.leaseOwner !== owner || e.dispatched) continue
          setMapEntry(outbox, id, { ...e, dispatched: true }, undo)
          n++
        }
        return n
      }),
    nextSequence: (merchantId, businessId) =>
      Effect.sync(() => (sequences.get(`${merchantId}:${businessId}`) ?? 0) + 1),
    nextSequences: (merchantId, businessIds) =>
      Effect.sync(() => new Map(businessIds.map((b) => [b, (sequences.get(`${merchantId}:${b}`) ?? 0) + 1])))
  }

  const counterValues = new Map<string, number>()
  const counters: Store.Counters = {
    take: (merchantId, series, count) =>
      write((undo) => {
        const k = `${merchantId}\u0000${series}`
        const last = counterValues.get(k) ?? 0
        setMapEntry(counterValues, k, last + count, undo)
        return last + 1
      })
  }

  const key = (merchantId: string, kind: string, subjectId: string) => `${merchantId}\u0000${kind}\u0000${subjectId}`
  const workQueue: Store.WorkQueue = {
    schedule: (item) =>
      write((undo) => {
        const k = key(item.merchant_id, item.kind, item.subject_id)
        const prev = work.get(k)
        setMapEntry(
          work,
          k,
          { ...item, attempts: 0, leaseOwner: null, leaseUntil: 0, generation: (prev?.generation ?? 0) + 1 },
          undo
        )
      }),
    scheduleMany: (items) =>
      write((undo) => {
        for (const item of items) {
          const k = key(item.merchant_id, item.kind, item.subject_id)
          const prev = work.get(k)
          setMapEntry(
            work,
            k,
            { ...item, attempts: 0, leaseOwner: null, leaseUntil: 0, generation: (prev?.generation ?? 0) + 1 },
            undo
          )
        }
      }),
    cancel: (merchantId, kind, subjectId) =>
      write((undo) => setMapEntry(work, key(merchantId, kind, subjectId), undefined, undo)),
    cancelMany: (keys) =>
      write((undo) => {
        for (const k of keys) setMapEntry(work, key(k.merchant_id, k.kind, k.subject_id), undefined, undo)
      }),
    claim: ({ lane, leaseMs, limit, merchantId, now, owner }) =>
      write((undo) => {
        const due = [...work.entries()]
          .filter(
            ([, w]) =>
              w.due_at <= now &&
              w.leaseUntil <= now &&
              (w.lane ?? "live") === (lane ?? "live") &&
              (merchantId === undefined || w.merchant_id === merchantId)
          )
          .sort(([, a], [, b]) => a.due_at - b.due_at)
          .slice(0, limit)
        return due.map(([k, w]) => {
          const claimed = { ...w, attempts: w.attempts + 1, leaseOwner: owner, leaseUntil: now + leaseMs }
          setMapEntry(work, k, claimed, undo)
          return {
            lane: w.lane ?? "live",
            merchant_id: w.merchant_id,
            kind: w.kind,
            subject_id: w.subject_id,
            due_at: w.due_at,
            attempts: claimed.attempts
          }
        })
      }),
    complete: (item, owner) =>
      write((undo) => {
        const k = key(item.merchant_id, item.kind, item.subject_id)
        const w = work.get(k)
        if (!w || w.leaseOwner !== owner || w.due_at !== item.due_at) return false
        setMapEntry(work, k, undefined, undo)
        return true
      }),
    completeMany: (items, owner) =>
      write((undo) => {
        let n = 0
        for (const item of items) {
          const k = key(item.merchant_id, item.kind, item.subject_id)
          const w = work.get(k)
          if (!w || w.leaseOwner !== owner || w.due_at !== item.due_at) continue
          setMapEntry(work, k, undefined, undo)
          n++
        }
        return n
      }),
    retryLater: (item, owner, at) =>
      write((undo) => {
        const k = key(item.merchant_id, item.kind, item.subject_id)
        const w = work.get(k)
        if (!w || w.leaseOwner !== owner || w.due_at !== item.due_at) return false
        setMapEntry(work, k, { ...w, leaseUntil: at }, undo)
        return true
      }),
    setAside: (item, owner) =>
      write((undo) => {
        const k = key(item.merchant_id, item.kind, item.subject_id)
        const w = work.get(k)
        if (!w || w.leaseOwner !== owner || w.due_at !== item.due_at) return false
        setMapEntry(work, k, { ...w, lane: "held" }, undo)
        return true
      }),
    listSetAside: ({ limit, merchantId }) =>
      Effect.sync(() =>
        [...work.values()]
          .filter((w) => w.lane === "held" && (merchantId === undefined || w.merchant_id === merchantId))
          .sort((a, b) => a.due_at - b.due_at)
          .slice(0, limit)
          .map((w) => ({
            lane: "held" as const,
            merchant_id: w.merchant_id,
            kind: w.kind,
            subject_id: w.subject_id,
            due_at: w.due_at,
            attempts: w.attempts
          }))
      ),
    nextDue: (merchantId) =>
      Effect.sync(() => {
        let min: number | undefined
        for (const w of work.values()) {
          const at = Math.max(w.due_at, w.leaseUntil)
          if (w.merchant_id === merchantId && w.lane !== "held" && (min === undefined || at < min)) min = at
        }
        return Option.fromNullishOr(min)
      })
  }

  const idem = (m: string, r: string) => `${m}\u0000${r}`
  const idempotencyStore: Store.IdempotencyStore = {
    begin: (record) =>
      write((undo) => {
        const k = idem(record.merchant_id, record.request_id)
        const existing = idempotency.get(k)
        if (existing && existing.expires_at > record.created_at) return { created: false as const, existing }
        setMapEntry(idempotency, k, record, undo)
        return { created: true as const }
      }),
    complete: (merchantId, requestId, status, response, expiresAt) =>
      write((undo) => {
        const k = idem(merchantId, requestId)
        const existing = idempotency.get(k)
        if (existing)
          setMapEntry(
            idempotency,
            k,
            { ...existing, state: "completed", status, response, expires_at: expiresAt },
            undo
          )
      }),
    release: (merchantId, requestId) =>
      write((undo) => setMapEntry(idempotency, idem(merchantId, requestId), undefined, undo)),
    scanCompleted: ({ after, limit }) =>
      Effect.sync(() => {
        const from = after === undefined ? undefined : idem(after.merchant_id, after.request_id)
        return [...idempotency.entries()]
          .filter(([k, r]) => r.state === "completed" && (from === undefined || k > from))
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .slice(0, limit)
          .map(([, r]) => r)
      })
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
    withTransaction,
    outbox: eventOutbox,
    workQueue,
    idempotency: idempotencyStore,
    counters,
    meter: MemoryMeter.make(write)
  })
})

/**
 * A fresh in-memory {@link Store.Storage} per layer build.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<Store.Storage> = Layer.effect(Store.Storage, Effect.scoped(make))
