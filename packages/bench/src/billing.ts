// Benchmark 3: a billing run. N due monthly subscriptions on PostgreSQL renewed by `recur worker`
// (1, then 2 processes): invoices, trades, subscription periods and outbox events written.
// Baseline: the same rows written by one hand-written batched SQL script.
//
// Seeding 100,000 subscriptions through the services would take longer than the run itself, so
// a template of real subscriptions (made through checkout and payment, 31 days ago) is cloned in
// SQL: every row of a template subscription is copied with its ids rewritten.
import { Pg } from "@recur/sql"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { record } from "./report.js"
import { cloneTemplate, seedTemplate } from "./seed.js"
import { cpuSeconds, databaseUrl, dropSchema, ioBytes, masterKey, postgresAnswers, root } from "./servers.js"

const DAY = 86_400_000
const serverMain = fileURLToPath(new URL("../../server/src/main.ts", import.meta.url))
// BENCH_WORKER_DIST=1 runs the built worker (`pnpm build` first), as a deployment would
const workerEntry = process.env.BENCH_WORKER_DIST
  ? [fileURLToPath(new URL("../../server/dist/main.js", import.meta.url))]
  : ["--conditions=source", "--import", "tsx", serverMain]
const total = Number(process.env.BENCH_BILLING_SUBS ?? 100_000)
const templateSize = Number(process.env.BENCH_BILLING_TEMPLATE ?? 200)

const counts = async (client: pg.Client) => {
  const one = async (q: string) => Number((await client.query(q)).rows[0].n)
  return {
    renewals: await one("select count(*) as n from recur_invoices where invoice_type = 'renewal'"),
    invoices: await one("select count(*) as n from recur_invoices"),
    trades: await one("select count(*) as n from recur_trades"),
    events: await one("select count(*) as n from recur_events")
  }
}

const prepare = async (label: string) => {
  const schema = Pg.freshSchemaName(`recur_bench_bill_${label}`)
  const merchantId = await seedTemplate({ url: databaseUrl, schema, masterKey }, templateSize)
  const client = new pg.Client({ connectionString: databaseUrl, options: `-c search_path="${schema}"` })
  await client.connect()
  const copies = Math.max(0, Math.ceil(total / templateSize) - 1)
  const t0 = Date.now()
  await cloneTemplate(client, schema, merchantId, copies)
  const subs = Number((await client.query("select count(*) as n from recur_subscriptions")).rows[0].n)
  const due = Number(
    (
      await client.query("select count(*) as n from recur_work_items where kind = 'renewal' and due_at <= $1", [
        Date.now()
      ])
    ).rows[0].n
  )
  console.error(
    `  [billing ${label}] ${subs} subscriptions (${due} due) cloned in ${((Date.now() - t0) / 1000).toFixed(1)} s`
  )
  return { schema, client, merchantId, subs, due }
}

/** `recur worker` × processes until every due renewal is invoiced. */
const runWorkers = async (processes: number) => {
  const { client, due, schema } = await prepare(`w${processes}`)
  try {
    const before = await counts(client)
    const stats = async () =>
      (
        await client.query(
          `select relname, coalesce(idx_scan,0)+coalesce(seq_scan,0) as scans, n_tup_ins as ins, n_tup_upd as upd, n_tup_del as del from pg_stat_user_tables where schemaname = $1`,
          [schema]
        )
      ).rows
    const xacts = async () =>
      Number(
        (await client.query("select xact_commit from pg_stat_database where datname = current_database()")).rows[0]
          .xact_commit
      )
    const stats0 = process.env.BENCH_BILLING_STATS ? { t: await stats(), x: await xacts() } : undefined
    const env = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      RECUR_DATABASE_SCHEMA: schema,
      RECUR_MASTER_KEY: masterKey
    }
    const started = Date.now()
    const children = Array.from({ length: processes }, () =>
      spawn(
        process.execPath,
        [...(process.env.BENCH_WORKER_NODE_ARGS?.split(" ").filter(Boolean) ?? []), ...workerEntry, "worker"],
        { cwd: root, env, stdio: ["ignore", "ignore", "inherit"] }
      )
    )
    const deadline = started + Number(process.env.BENCH_BILLING_TIMEOUT_S ?? 1800) * 1000
    let now = before
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1000))
      now = await counts(client)
      if (now.renewals - before.renewals >= due) break
    }
    const seconds = (Date.now() - started) / 1000
    const workerCpu = children.reduce((sum, c) => sum + cpuSeconds(c.pid), 0)
    const workerIo = children.reduce(
      (sum, c) => {
        const io = ioBytes(c.pid)
        return { written: sum.written + io.written, read: sum.read + io.read }
      },
      { written: 0, read: 0 }
    )
    for (const c of children) c.kill("SIGTERM")
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once("exit", r)))))
    const after = await counts(client)
    const renewed = after.renewals - before.renewals
    if (stats0) {
      await new Promise((r) => setTimeout(r, 1500))
      const t = await stats()
      console.error(`  [billing stats] transactions per renewal ${((await xacts()) - stats0.x) / renewed}`)
      for (const row of t) {
        const b = stats0.t.find((x) => x.relname === row.relname)!
        const d = (k: string) => ((row[k] - b[k]) / renewed).toFixed(2)
        console.error(
          `  [billing stats] ${row.relname}: scans ${d("scans")} ins ${d("ins")} upd ${d("upd")} del ${d("del")}`
        )
      }
    }
    const rows =
      after.invoices - before.invoices + (after.trades - before.trades) + (after.events - before.events) + renewed
    return {
      due,
      renewed,
      seconds,
      rows,
      workerCpuMsPerRenewal: (workerCpu * 1000) / Math.max(1, renewed),
      workerKbPerRenewal: {
        written: workerIo.written / 1024 / Math.max(1, renewed),
        read: workerIo.read / 1024 / Math.max(1, renewed)
      },
      perRenewal: {
        trades: (after.trades - before.trades) / Math.max(1, renewed),
        events: (after.events - before.events) / Math.max(1, renewed)
      }
    }
  } finally {
    await client.end()
    await dropSchema(schema)
  }
}

/** The same rows, written by batched SQL: trades, invoices, events, subscriptions, work items. */
const runBaseline = async (eventsPerRenewal: number) => {
  const { client, due, schema } = await prepare("sql")
  try {
    const before = await counts(client)
    const started = Date.now()
    const batch = 5_000
    for (;;) {
      await client.query("begin")
      const claimed = await client.query(
        `update recur_work_items set lease_owner = 'sql', lease_until = $1
         where (merchant_id, kind, subject_id) in (select merchant_id, kind, subject_id from recur_work_items
           where kind = 'renewal' and due_at <= $2 and lease_owner is distinct from 'sql' limit ${batch} for update skip locked)
         returning merchant_id, subject_id`,
        [Date.now() + 60_000, Date.now()]
      )
      if (claimed.rowCount === 0) {
        await client.query("commit")
        break
      }
      await client.query("create temp table if not exists due (merchant_id text, subject_id text) on commit drop")
      await client.query("insert into due select * from unnest($1::text[], $2::text[])", [
        claimed.rows.map((r) => r.merchant_id),
        claimed.rows.map((r) => r.subject_id)
      ])
      // a new trade per subscription: its first trade, re-keyed, paid now
      await client.query(`insert into recur_trades (id, merchant_id, created_at, version, data, trade_status, order_id, customer_id, amount_minor, currency)
        select 'trd_' || md5(s.id || 'r1')::text, t.merchant_id, now(), 1,
               jsonb_set(jsonb_set(t.data, '{trade,trade_id}', to_jsonb('trd_' || md5(s.id || 'r1'))), '{trade,created_at}', to_jsonb(now())),
               'success', t.order_id, t.customer_id, t.amount_minor, t.currency
        from due d join recur_subscriptions s on s.merchant_id = d.merchant_id and s.id = d.subject_id
        join recur_trades t on t.merchant_id = s.merchant_id and t.id = s.source_trade_id`)
      // the renewal invoice, unique per (subscription, cycle)
      await client.query(`insert into recur_invoices (id, merchant_id, created_at, version, data, trade_id, order_id, subscription_id, customer_id, biz_status, invoice_type, cycle_index, amount_minor, currency, cycle_key)
        select 'inv_' || md5(s.id || 'r1')::text, i.merchant_id, now(), 1,
               jsonb_set(jsonb_set(jsonb_set(i.data, '{invoice_id}', to_jsonb('inv_' || md5(s.id || 'r1'))), '{invoice_type}', '"renewal"'), '{cycle_index}', '1'),
               'trd_' || md5(s.id || 'r1'), i.order_id, i.subscription_id, i.customer_id, 'success', 'renewal', 1, i.amount_minor, i.currency, s.id || ':1:renewal'
        from due d join recur_subscriptions s on s.merchant_id = d.merchant_id and s.id = d.subject_id
        join recur_invoices i on i.merchant_id = s.merchant_id and i.subscription_id = s.id and i.invoice_type = 'initial'`)
      // the outbox events of a renewal (as many as Recur writes), in the same transaction
      await client.query(
        `insert into recur_events (id, merchant_id, created_at, version, data, business_id, type, sequence)
        select 'evt_' || md5(s.id || 'r1' || k), s.merchant_id, now(), 1,
               jsonb_build_object('id', 'evt_' || md5(s.id || 'r1' || k), 'type', 'v2.subscriptions.renewed', 'merchant_id', s.merchant_id, 'business_id', s.id, 'data', s.data),
               s.id, 'v2.subscriptions.renewed', 100 + k
        from due d join recur_subscriptions s on s.merchant_id = d.merchant_id and s.id = d.subject_id, generate_series(1, $1) k`,
        [Math.max(1, Math.round(eventsPerRenewal))]
      )
      // the next period, and the next renewal
      await client.query(`update recur_subscriptions s set version = version + 1, data = jsonb_set(s.data, '{cycle_index}', '1')
        from due d where s.merchant_id = d.merchant_id and s.id = d.subject_id`)
      await client.query(`update recur_work_items w set due_at = due_at + ${31 * DAY}, lease_owner = null, lease_until = 0
        from due d where w.merchant_id = d.merchant_id and w.subject_id = d.subject_id and w.kind = 'renewal'`)
      await client.query("commit")
    }
    const seconds = (Date.now() - started) / 1000
    const after = await counts(client)
    const renewed = after.renewals - before.renewals
    const rows =
      after.invoices - before.invoices + (after.trades - before.trades) + (after.events - before.events) + renewed
    return { due, renewed, seconds, rows }
  } finally {
    await client.end()
    await dropSchema(schema)
  }
}

export const run = async () => {
  if (!(await postgresAnswers())) {
    console.log(`| billing | skipped: no PostgreSQL at ${databaseUrl} | | | | |`)
    return
  }
  const one = await runWorkers(1)
  if (process.env.BENCH_BILLING_ONLY === "w1") {
    console.log(
      `  [billing w1] ${one.renewed} of ${one.due} renewed in ${one.seconds.toFixed(1)} s = ${(one.renewed / one.seconds).toFixed(0)} renewals/s, worker CPU ${one.workerCpuMsPerRenewal.toFixed(2)} ms per renewal, worker I/O ${one.workerKbPerRenewal.written.toFixed(1)} KiB written and ${one.workerKbPerRenewal.read.toFixed(1)} KiB read per renewal`
    )
    return
  }
  const two = await runWorkers(2)
  const sql = await runBaseline(one.perRenewal.events)
  for (const [label, r] of [
    ["1 worker process", one],
    ["2 worker processes", two]
  ] as const) {
    if (r.renewed !== r.due) console.log(`  ! ${label}: ${r.renewed} of ${r.due} renewed before the timeout`)
    record({
      bench: `3. billing run: ${r.due.toLocaleString("en-US")} due subscriptions, ${label}`,
      recur: r.rows / r.seconds,
      baseline: sql.rows / sql.seconds,
      unit: "rows/s",
      goal: "≥ 50 %; 100,000 in < 60 s",
      note: `(Recur ${r.renewed.toLocaleString("en-US")} renewals in ${r.seconds.toFixed(1)} s = ${(r.renewed / r.seconds).toFixed(0)}/s, ${r.perRenewal.trades.toFixed(2)} trades and ${r.perRenewal.events.toFixed(2)} events per renewal, worker CPU ${r.workerCpuMsPerRenewal.toFixed(2)} ms per renewal; SQL ${sql.renewed.toLocaleString("en-US")} in ${sql.seconds.toFixed(1)} s)`
    })
  }
}
