// The hand-written baseline the HTTP benchmarks compare Recur with: node:http + pg, the same
// tables, the same SQL statements and the same JSON, and nothing else (no validation library,
// no framework, no logging). Run as its own process, like Recur's server:
//   DATABASE_URL=... RECUR_DATABASE_SCHEMA=... PORT=... node baseline-server.mjs
import { createHash, randomUUID } from "node:crypto"
import { createServer } from "node:http"
import pg from "pg"

const schema = process.env.RECUR_DATABASE_SCHEMA
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: 10,
  ...(schema ? { options: `-c search_path="${schema}"` } : {})
})

const send = (res, status, body) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}
const unauthorized = (res, requestId) =>
  send(res, 401, { code: "unauthorizedError", message: "ApiKey authentication is required", data: { request_id: requestId } })

/** The same two lookups as Recur: the key by its SHA-256, then its merchant. */
const authenticate = async (header) => {
  const m = /^Bearer (\S+)$/.exec(header ?? "")
  if (!m) return undefined
  const hash = createHash("sha256").update(m[1]).digest("hex")
  const keys = await pool.query("select data from recur_api_keys where lookup_hash = $1 limit 1", [hash])
  const key = keys.rows[0]?.data
  if (!key || key.status === "revoked" || (key.expires_at !== null && Date.now() >= key.expires_at)) return undefined
  const merchants = await pool.query("select data, version from recur_merchants where merchant_id = $1 and id = $2", [key.merchant_id, key.merchant_id])
  return merchants.rows[0]?.data
}

const invoices = async (req, res, url, requestId) => {
  const merchant = await authenticate(req.headers.authorization)
  if (!merchant) return unauthorized(res, requestId)
  const limit = Number(url.searchParams.get("limit") ?? 10)
  const params = [merchant.merchant_id]
  const where = ["merchant_id = $1"]
  for (const [name, column] of [["biz_status", "biz_status"], ["invoice_types", "invoice_type"]]) {
    const values = url.searchParams.get(name)?.split(",").filter((v) => v !== "")
    if (values?.length) {
      where.push(`${column} in (${values.map((v) => `$${params.push(v)}`).join(", ")})`)
    }
  }
  const rows = await pool.query(`select data, version from recur_invoices where ${where.join(" and ")} order by created_at desc, id desc limit ${limit + 1}`, params)
  send(res, 200, { code: "success", message: "", data: { has_more: rows.rows.length > limit, list: rows.rows.slice(0, limit).map((r) => r.data) } })
}

const readBody = (req) =>
  new Promise((resolve, reject) => {
    let text = ""
    req.setEncoding("utf8")
    req.on("data", (c) => (text += c))
    req.on("end", () => resolve(text))
    req.on("error", reject)
  })

/** Idempotency record, the customer row, the recorded answer: the same inserts as Recur. */
const createCustomer = async (req, res, requestId) => {
  const merchant = await authenticate(req.headers.authorization)
  if (!merchant) return unauthorized(res, requestId)
  const text = await readBody(req)
  const input = JSON.parse(text)
  const now = Date.now()
  const fingerprint = `POST /api/v1/front/customer/create ${createHash("sha256").update(text).digest("hex")}`
  const claimed = await pool.query(
    `insert into recur_idempotency (merchant_id, request_id, fingerprint, state, status, response, created_at, expires_at)
     values ($1, $2, $3, 'in_progress', null, null, $4, $5) on conflict (merchant_id, request_id) do nothing returning request_id`,
    [merchant.merchant_id, requestId, fingerprint, now, now + 60_000]
  )
  if (claimed.rows.length === 0) return send(res, 409, { code: "request_in_progress", message: "A request with this Request-Id is still running.", data: { request_id: requestId } })
  const customer = {
    id: `cus_${randomUUID().replace(/-/g, "")}`, merchant_id: merchant.merchant_id, email: input.email ?? null, payer_id: input.payer_id ?? null,
    name: input.name ?? null, phone: null, description: null, address: null, metadata: {}, email_subscription: null,
    type: input.payer_id !== undefined ? "customer" : "guest", created_at: now, updated_at: now, deleted_at: null
  }
  await pool.query(
    `insert into recur_customers (id, merchant_id, created_at, data, email, payer_id, type, deleted) values ($1, $2, $3, $4, $5, $6, $7, false) on conflict do nothing returning id`,
    [customer.id, customer.merchant_id, new Date(now), JSON.stringify(customer), customer.email, customer.payer_id, customer.type]
  )
  const body = { code: "success", message: "", data: { customer_id: customer.id, email: customer.email, payer_id: customer.payer_id, type: customer.type, created_at: new Date(now).toISOString() } }
  await pool.query(`update recur_idempotency set state = 'completed', status = 200, response = $3, expires_at = $4 where merchant_id = $1 and request_id = $2`, [
    merchant.merchant_id, requestId, JSON.stringify(body), now + 7 * 86_400_000
  ])
  send(res, 200, body)
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://x")
  const requestId = req.headers["request-id"] ?? ""
  const route =
    req.method === "GET" && url.pathname === "/healthz" ? Promise.resolve(send(res, 200, { status: "ok" }))
    : req.method === "GET" && url.pathname === "/api/v1/invoices" ? invoices(req, res, url, requestId)
    : req.method === "POST" && url.pathname === "/api/v1/front/customer/create" ? createCustomer(req, res, requestId)
    : Promise.resolve(send(res, 404, { code: "resource_not_found", message: "No such route.", data: { request_id: requestId } }))
  route.catch((e) => {
    console.error(e)
    if (!res.headersSent) send(res, 500, { code: "system_error", message: "An unexpected error occurred.", data: { request_id: requestId } })
  })
})
server.listen(Number(process.env.PORT ?? 4100), "127.0.0.1", () => console.log(`baseline listening on ${process.env.PORT}`))
const stop = () => server.close(() => pool.end().then(() => process.exit(0)))
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
