import pg from "pg"
import { Pg } from "@recur/sql"
import { databaseUrl, startRecur, startBaseline, dropSchema } from "./servers.js"
import { seedFor } from "./http.js"
const schema = Pg.freshSchemaName("recur_probe")
const key = await seedFor(schema, 5)
const c = new pg.Client({ connectionString: databaseUrl })
await c.connect()
const stats = async () =>
  (
    await c.query(
      `select relname, coalesce(idx_scan,0)+coalesce(seq_scan,0) as scans, n_tup_ins+n_tup_upd as writes from pg_stat_user_tables where schemaname=$1`,
      [schema]
    )
  ).rows
const xacts = async () =>
  Number(
    (await c.query(`select xact_commit from pg_stat_database where datname=current_database()`)).rows[0].xact_commit
  )
for (const start of [startRecur, startBaseline]) {
  const s = (await start(schema)).running
  for (const [name, go] of [
    [
      "read",
      (_i: number) =>
        fetch(`${s.url}/api/v1/invoices?limit=10&biz_status=success,open`, {
          headers: { authorization: `Bearer ${key}` }
        })
    ],
    [
      "write",
      (i: number) =>
        fetch(`${s.url}/api/v1/front/customer/create`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${key}`,
            "request-id": `p-${s.name}-${i}`,
            "content-type": "application/json"
          },
          body: JSON.stringify({ payer_id: `probe-${s.name}-${i}` })
        })
    ]
  ] as const) {
    await new Promise((r) => setTimeout(r, 1500))
    const before = await stats()
    const x0 = await xacts()
    for (let i = 0; i < 100; i++) await (await go(i)).text()
    await new Promise((r) => setTimeout(r, 1500))
    const after = await stats()
    const x1 = await xacts()
    console.log(
      s.name,
      name,
      "xacts/req",
      (x1 - x0) / 100,
      after
        .map((a) => {
          const b = before.find((b) => b.relname === a.relname)!
          return [a.relname, (a.scans - b.scans) / 100, (a.writes - b.writes) / 100]
        })
        .filter((r) => r[1] !== 0 || r[2] !== 0)
    )
  }
  await s.stop()
}
await c.end()
await dropSchema(schema)
process.exit(0)
