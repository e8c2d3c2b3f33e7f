import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { Ajv2020 } from "ajv/dist/2020.js"
import { api, paidSubscription, report, size } from "./harness.js"

// Requests generated from the OpenAPI document, valid and invalid, over every endpoint; every
// answer is checked against the document: no 500, the documented status and body shape.

const app = api()
let doc: any
let key = ""
let ids: Record<string, string> = {}
let validate: (pointer: string, body: unknown) => string | null
beforeAll(async () => {
  doc = (await app.call("GET", "/openapi.json", null)).body
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false })
  // Effect stamps `$id: "/schemas/{}"` on some inline schemas; ids are not needed to validate
  const withoutIds = (node: unknown): unknown =>
    Array.isArray(node)
      ? node.map(withoutIds)
      : node && typeof node === "object"
        ? Object.fromEntries(
            Object.entries(node)
              .filter(([k]) => k !== "$id")
              .map(([k, v]) => [k, withoutIds(v)])
          )
        : node
  ajv.addSchema({ ...(withoutIds(doc) as object), $id: "openapi" })
  validate = (pointer, body) => {
    const check = ajv.compile({ $ref: `openapi#${pointer}` })
    return check(body) ? null : ajv.errorsText(check.errors)
  }
  const m = await app.merchant()
  key = m.api_key
  const w = await paidSubscription(app, key)
  const customer = (await app.call("POST", "/api/v1/front/customer/create", key, { payer_id: "fuzz-payer" })).body.data
    .customer_id
  const invoice = (await app.call("GET", `/api/v1/invoices?trade_ids=${w.trade}`, key)).body.data.list[0].invoice_id
  const endpoint = (
    await app.call("POST", "/api/v2/webhook/endpoints", key, { url: "http://127.0.0.1:9/x", all_events: true })
  ).body.data.id
  const event = (await app.call("GET", "/api/v2/webhook/events?limit=1", key)).body.data.list[0].id
  ids = {
    customer_id: customer,
    product_id: w.product,
    price_id: w.price.price_id,
    price_version_id: w.price.price_version_id,
    session_id: w.session,
    subscription_id: w.sub,
    trade_id: w.trade,
    invoice_id: invoice,
    refund_id: "ref_none",
    endpoint_id: endpoint,
    event_id: event,
    merchant_id: m.merchant.merchant_id
  }
})
afterAll(() => app.dispose())

const pointer = (path: string, method: string, status: string) =>
  `/paths/${path.replace(/~/g, "~0").replace(/\//g, "~1")}/${method}/responses/${status}/content/application~1json/schema`

const weird = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.constantFrom(
    "",
    " ",
    "0",
    "-1",
    "1e400",
    "NaN",
    "null",
    "true",
    "[]",
    "{}",
    "../../etc/passwd",
    "' or 1=1 --",
    "\u0000",
    "%00",
    "𝟘𝟙",
    "x".repeat(5000),
    "2026-13-45T99:99:99Z"
  )
)
const scalar = fc.oneof(weird, fc.integer(), fc.double(), fc.boolean(), fc.constant(null))

/**
 * A value that satisfies a JSON schema (known ids for id-named fields, short Unicode text, enum
 * members, every required key), so nested valid values such as a product's features reach the
 * services; `forSchema` then covers what is off the schema.
 */
const validFor = (schema: any, depth = 0, key = ""): fc.Arbitrary<unknown> => {
  if (!schema || depth > 4) return fc.constant(null)
  if (schema.$ref) return validFor(doc.components.schemas[schema.$ref.split("/").pop()], depth + 1, key)
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s: any) => validFor(s, depth + 1, key)))
  if (schema.enum) return fc.constantFrom(...schema.enum)
  switch (schema.type) {
    case "string":
      return ids[key] !== undefined
        ? fc.oneof(
            { weight: 3, arbitrary: fc.constant(ids[key]) },
            { weight: 1, arbitrary: fc.constantFrom(...Object.values(ids)) }
          )
        : fc.oneof(
            fc.constantFrom(
              "10.00",
              "0.50",
              "3",
              "USD",
              "EUR",
              "JPY",
              "month",
              "day",
              "year",
              "active",
              "immediate",
              "end_of_period",
              "https://shop.example/x"
            ),
            fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }).filter((v) => !v.includes("\u0000"))
          )
    case "integer":
    case "number":
      return fc.integer({ min: 0, max: 100 })
    case "boolean":
      return fc.boolean()
    case "array":
      return fc.array(validFor(schema.items, depth + 1, key), { minLength: 1, maxLength: 3 })
    case "object": {
      const properties = Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([k, v]) => [k, validFor(v, depth + 1, k)])
      )
      const required = ((schema.required ?? []) as Array<string>).filter((k) => k in properties)
      return Object.keys(properties).length === 0 && schema.additionalProperties
        ? fc.dictionary(
            fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !k.includes("\u0000")),
            validFor(schema.additionalProperties, depth + 1),
            { maxKeys: 3 }
          )
        : fc.record(properties, { requiredKeys: required })
    }
    default:
      return fc.constant(null)
  }
}

/** A value for a JSON schema: mostly the right type, sometimes anything. */
const forSchema = (schema: any, depth = 0): fc.Arbitrary<unknown> => {
  if (!schema || depth > 3) return scalar
  if (schema.$ref) return forSchema(doc.components.schemas[schema.$ref.split("/").pop()], depth + 1)
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s: any) => forSchema(s, depth + 1)))
  const right: fc.Arbitrary<unknown> = schema.enum
    ? fc.constantFrom(...schema.enum)
    : schema.type === "string"
      ? fc.oneof(
          weird,
          fc.constantFrom(...Object.values(ids)),
          fc.constantFrom("10.00", "USD", "month", "active", "immediate", "end_of_period", "https://shop.example/x")
        )
      : schema.type === "integer" || schema.type === "number"
        ? fc.oneof(fc.integer({ min: -5, max: 200 }), fc.double())
        : schema.type === "boolean"
          ? fc.boolean()
          : schema.type === "array"
            ? fc.array(forSchema(schema.items, depth + 1), { maxLength: 4 })
            : schema.type === "object"
              ? fc.record(
                  Object.fromEntries(
                    Object.entries(schema.properties ?? {}).map(([k, v]) => [k, forSchema(v, depth + 1)])
                  ),
                  { requiredKeys: [] }
                )
              : scalar
  return fc.oneof({ weight: 4, arbitrary: right }, { weight: 1, arbitrary: scalar })
}

const operations = () => {
  const out: Array<{ path: string; method: string; op: any }> = []
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(methods)) out.push({ path, method, op })
  }
  return out
}

const documentedCodes = new Set([
  "InvalidParameter",
  "invalid_request_error",
  "unauthorizedError",
  "payment_failed",
  "resource_not_found",
  "state_conflict",
  "duplicate_resource",
  "idempotency_conflict",
  "request_in_progress",
  "rate_limit_exceeded",
  "system_error"
])

describe("fuzzing from the OpenAPI document", () => {
  it("every endpoint, valid and invalid requests: no 500, every answer as documented", async () => {
    const runs = size(25, 200)
    let sent = 0
    const statuses = new Map<number, number>()
    const violations: Array<string> = []
    for (const [n, { method, op, path }] of operations().entries()) {
      const params: Array<any> = op.parameters ?? []
      const arb = fc.record({
        path: fc.record(
          Object.fromEntries(
            params
              .filter((p) => p.in === "path")
              .map((p) => [
                p.name,
                fc.oneof(
                  fc.constant(ids[p.name] ?? "x"),
                  // `.` and `..` are dot segments no URL can carry (`new URL` resolves them away)
                  weird.filter((v) => v !== "" && !/^(?:\.|%2e){1,2}$/i.test(v))
                )
              ])
          )
        ),
        query: fc.record(
          Object.fromEntries(
            params
              .filter((p) => p.in === "query")
              .map((p) => [p.name, fc.oneof(validFor(p.schema, 0, p.name), forSchema(p.schema))])
          ),
          { requiredKeys: [] }
        ),
        body: op.requestBody
          ? fc.oneof(
              { weight: 4, arbitrary: validFor(op.requestBody.content["application/json"].schema) },
              { weight: 4, arbitrary: forSchema(op.requestBody.content["application/json"].schema) },
              { weight: 1, arbitrary: scalar },
              { weight: 1, arbitrary: fc.constantFrom("{", "[1,", '"x', '{"a":}') }
            )
          : fc.constant(undefined)
      })
      // a fixed seed per operation: a failure replays
      for (const sample of fc.sample(arb, { numRuns: runs, seed: 20_261_127 + n })) {
        const url = path.replace(/\{(\w+)\}/g, (_, name) => encodeURIComponent(String((sample.path as any)[name])))
        const qs = new URLSearchParams()
        for (const [k, v] of Object.entries(sample.query as Record<string, unknown>)) {
          if (Array.isArray(v)) for (const x of v) qs.append(k, String(x))
          else if (v !== undefined) qs.append(k, typeof v === "string" ? v : JSON.stringify(v))
        }
        const full = `${url}${qs.size > 0 ? `?${qs}` : ""}`
        const body =
          sample.body === undefined
            ? undefined
            : typeof sample.body === "string" && /^[{["]/.test(sample.body)
              ? sample.body
              : JSON.stringify(sample.body)
        const answer = await app.call(method.toUpperCase(), full, key, body)
        sent++
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
        const where = `${method.toUpperCase()} ${full.slice(0, 200)} ${String(body).slice(0, 200)} → ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`
        if (answer.status >= 500) violations.push(`5xx: ${where}`)
        if (path === "/openapi.json" || path === "/docs") continue
        if (
          typeof answer.body !== "object" ||
          answer.body === null ||
          !("code" in answer.body) ||
          !("message" in answer.body) ||
          !("data" in answer.body)
        ) {
          violations.push(`not an envelope: ${where}`)
          continue
        }
        if (answer.status === 200) {
          const problem = op.responses["200"] ? validate(pointer(path, method, "200"), answer.body) : null
          if (problem) violations.push(`200 off schema (${problem}): ${where}`)
        } else {
          if (!documentedCodes.has(answer.body.code)) violations.push(`undocumented code: ${where}`)
          if (!op.responses[String(answer.status)]) violations.push(`undocumented status: ${where}`)
        }
      }
    }
    report(
      `fuzz: ${sent} requests over ${operations().length} operations; statuses ${JSON.stringify(Object.fromEntries(statuses))}; ${violations.length} violations`
    )
    expect(violations.slice(0, 10)).toEqual([])
  })

  it("Authorization header fuzz: anything but exactly `Bearer <key>` is the documented 401", async () => {
    const variants = fc.oneof(
      fc
        .constantFrom("bearer", "BEARER", "Bearer", "BeArEr", "Basic", "Token", "ApiKey", "Digest", "")
        .chain((scheme) =>
          fc
            .tuple(
              fc.constantFrom(" ", "  ", "\t", "", " \t", "\u00a0", "\u3000"),
              fc.constantFrom(
                key,
                `${key}x`,
                key.toUpperCase(),
                key.slice(0, -1),
                `${key},${key}`,
                `${key} ${key}`,
                "x".repeat(100_000),
                "sk_test_🙂",
                ""
              )
            )
            .map(([sep, k]) => `${scheme}${sep}${k}`)
        ),
      fc.string({ unit: "grapheme", maxLength: 80 }),
      fc.constant(`Bearer ${key}, Bearer ${key}`)
    )
    const samples = fc.sample(variants, size(300, 3000))
    let accepted = 0
    const wrong: Array<string> = []
    for (const raw of samples) {
      // what a server can receive: header bytes as latin1; surrounding whitespace is not part of a value
      const header = Buffer.from(raw, "utf8")
        .toString("latin1")
        .replace(/[\r\n\0]/g, "")
        .trim()
      let answer: Awaited<ReturnType<typeof app.call>>
      try {
        answer = await app.call("GET", "/api/v1/product-categories", null, undefined, { authorization: header })
      } catch {
        continue // not a sendable header value
      }
      if (header === `Bearer ${key}`) {
        accepted++
        expect(answer.status).toBe(200)
        continue
      }
      const ok =
        answer.status === 401 &&
        answer.body.code === "unauthorizedError" &&
        String(answer.body.message).includes("ApiKey authentication is required") &&
        answer.headers.get("www-authenticate") === "Bearer"
      if (!ok) wrong.push(`${JSON.stringify(header).slice(0, 80)} → ${answer.status}`)
    }
    report(`auth fuzz: ${samples.length} headers (${accepted} exactly right); ${wrong.length} not the documented 401`)
    expect(wrong).toEqual([])
  })

  it("stateful sequences: random walks over the money path never 500 and never refund more than paid", async () => {
    const steps = size(60, 600)
    const { api_key } = await app.merchant()
    const w = await paidSubscription(app, api_key)
    const actions = fc.oneof(
      fc.record({
        kind: fc.constant("change"),
        price: fc.constantFrom("5.00", "30.00", "99.99"),
        effective: fc.constantFrom("immediate", "end_of_period", "bogus")
      }),
      fc.record({
        kind: fc.constant("refund"),
        amount: fc.constantFrom("0.01", "1.00", "15.00", "30.00", "45.00", "-1", "1.001", undefined)
      }),
      fc.record({
        kind: fc.constantFrom("pause", "resume", "cancel", "revoke-cancel", "renewal", "revoke-price-change")
      }),
      fc.record({ kind: fc.constant("clock"), days: fc.integer({ min: 0, max: 40 }) })
    )
    const prices = new Map<string, string>()
    let clock = Date.parse("2026-01-01T00:00:00Z")
    let fivexx = 0
    for (const a of fc.sample(actions, steps) as Array<any>) {
      let r: Awaited<ReturnType<typeof app.call>>
      if (a.kind === "change") {
        let price = prices.get(a.price)
        if (!price) {
          price = (
            await app.call("POST", "/api/v1/prices", api_key, {
              name: a.price,
              product_id: w.product,
              currency: "USD",
              billing_type: "recurring",
              price_type: "flat_price",
              price_plan: { billing_cycle_unit: "month", base_price_val: a.price }
            })
          ).body.data.price_id as string
          prices.set(a.price, price)
        }
        r = await app.call("POST", `/api/v1/subscription/${w.sub}`, api_key, {
          price_id: price,
          effective_type: a.effective
        })
      } else if (a.kind === "refund") {
        const trades = (await app.call("GET", "/api/v1/trades?trade_status=succeeded&limit=100", api_key)).body.data
          .list
        const t = trades[Math.floor(Math.random() * trades.length)]
        r = await app.call("POST", "/api/v1/refund", api_key, {
          trade_id: t.trade_id,
          ...(a.amount !== undefined ? { amount: a.amount } : {})
        })
      } else if (a.kind === "clock") {
        clock += a.days * 86_400_000
        r = await app.call("POST", "/api/v1/test_helpers/advance_clock", api_key, {
          frozen_time: new Date(clock).toISOString().replace(/\.\d{3}Z$/, "Z")
        })
      } else {
        r = await app.call("POST", `/api/v1/subscription/${w.sub}/${a.kind}`, api_key, {})
      }
      if (r.status >= 500) fivexx++
      expect([a.kind, r.status < 500]).toEqual([a.kind, true])
    }
    const trades = (await app.call("GET", "/api/v1/trades?limit=100", api_key)).body.data.list
    for (const t of trades)
      expect(Math.round(Number(t.total_refunded_amount) * 100)).toBeLessThanOrEqual(Math.round(Number(t.amount) * 100))
    report(
      `stateful fuzz: ${steps} random steps over one subscription; ${trades.length} trades; ${fivexx} 5xx; refunded ≤ paid on every trade`
    )
  })
})
