import { describe, expect, it } from "@effect/vitest"
import { BillingApi } from "../src/Api.js"
import { OpenApi } from "effect/http-api"

// The OpenAPI document as client generators read it (see OpenApiClients.test.ts for two of them
// at work): names, enums, formats, errors and headers, and its server.

const doc = OpenApi.fromApi(BillingApi) as any
const schemas = doc.components.schemas as Record<string, any>
const operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
  Object.entries(ops).map(([method, op]) => ({ path, method, op }))
)
const byId = (id: string) => operations.find((o) => o.op.operationId === id)!

/** Every schema object in a JSON value, with the key it sits under. */
const everySchema = (value: unknown, key = "", out: Array<{ key: string; schema: any }> = []) => {
  if (Array.isArray(value)) for (const v of value) everySchema(v, key, out)
  else if (typeof value === "object" && value !== null) {
    out.push({ key, schema: value })
    for (const [k, v] of Object.entries(value)) everySchema(v, k, out)
  }
  return out
}

describe("the OpenAPI document", () => {
  it("names components as their concepts: no Encoded suffix, no _1 duplicates", () => {
    const names = Object.keys(schemas)
    expect(names.filter((n) => /Encoded$|_\d+$/.test(n))).toEqual([])
    expect(JSON.stringify(doc)).not.toMatch(/Encoded"|_\d+"/)
    // the invoice's applied discount and the discount resource are two components
    expect(Object.keys(schemas.AppliedDiscount.properties)).toEqual(["discount_id", "discount_amount", "discount_code"])
    expect(schemas.Discount.properties).toHaveProperty("percent_off")
    expect(schemas.Discounts.properties.current_period.items).toEqual({ $ref: "#/components/schemas/AppliedDiscount" })
  })

  it("names each value set as its concept: no SubscriptionStatusValue… for an invoice's or an item's status", () => {
    const names = Object.keys(schemas)
    expect(names.filter((n) => /Value(Value)+$|Value\d|Value$/.test(n))).toEqual([])
    const named: Record<string, ReadonlyArray<string>> = {
      DerivedInvoiceStatus: ["draft", "open", "paid", "void", "uncollectible"],
      InvoiceLineKind: ["one_time", "balance", "invoice_item"],
      InvoiceItemStatus: ["pending", "invoiced", "deleted"],
      NotificationKind: ["invoice_issued", "payment_receipt"],
      NotificationStatus: ["pending", "sent", "skipped"],
      CollectionMethod: ["charge_automatically", "send_invoice"],
      BalanceTransactionSource: ["manual_adjustment", "applied_to_invoice", "credit_note"],
      CreditNoteMethod: ["credit_balance", "reduce_invoice", "refund"],
      ScheduleStatus: ["not_started", "released"],
      MigrationStatus: ["previewed", "running"]
    }
    for (const [name, values] of Object.entries(named))
      expect(schemas[name]?.enum).toEqual(expect.arrayContaining([...values]))
    const at = (name: string) => ({ $ref: `#/components/schemas/${name}` })
    expect(schemas.Invoice.properties.status).toEqual(at("DerivedInvoiceStatus"))
    expect(schemas.InvoiceLine.properties.kind).toEqual(at("InvoiceLineKind"))
    expect(schemas.InvoiceItem.properties.status).toEqual(at("InvoiceItemStatus"))
    expect(schemas.Notification.properties.kind).toEqual(at("NotificationKind"))
    expect(schemas.BalanceTransaction.properties.source_type).toEqual(at("BalanceTransactionSource"))
    const creditNote = byId("customerBalances.creditNote").op.requestBody.content["application/json"].schema
    expect(creditNote.properties.method).toEqual(at("CreditNoteMethod"))
    // instants are the Timestamp component, as every other one
    expect(schemas.Invoice.properties.due_date).toEqual({ anyOf: [at("Timestamp"), { type: "null" }] })
    expect(schemas.BalanceTransaction.properties.created_at).toEqual(at("Timestamp"))
  }, 10_000)

  it("envelope fields with one value are const, and no enum has a single value", () => {
    const customer = byId("customers.get").op.responses["200"].content["application/json"].schema
    expect(customer.properties.code).toEqual({ type: "string", const: "success" })
    expect(customer.properties.message).toEqual({ type: "string", const: "success" })
    expect(schemas.NotFound.properties.code).toEqual({ type: "string", const: "resource_not_found" })
    const oneValue = everySchema(doc).filter(({ schema }) => Array.isArray(schema.enum) && schema.enum.length < 2)
    expect(oneValue).toEqual([])
  })

  it("every enum is a named component, referenced wherever it is used; list filters are form-exploded arrays", () => {
    const inline = everySchema(doc.paths).filter(({ schema }) => Array.isArray(schema.enum))
    expect(inline).toEqual([])
    const componentEnums = Object.entries(schemas).filter(([, s]) => Array.isArray(s.enum))
    const inlineInComponents = everySchema(
      Object.fromEntries(Object.entries(schemas).filter(([, s]) => !Array.isArray(s.enum)))
    ).filter(({ schema }) => Array.isArray(schema.enum))
    expect(inlineInComponents).toEqual([])
    // one component per value set
    const sets = componentEnums.map(([, s]) => JSON.stringify([...s.enum].sort()))
    expect(new Set(sets).size).toBe(sets.length)
    expect(schemas.SubscriptionStatus.enum).toEqual(expect.arrayContaining(["active", "past_due", "canceled"]))
    // a schedule's start and end_behavior are enums, not plain strings
    expect(schemas.ScheduleStart.enum).toEqual(["current_period", "next_period"])
    expect(schemas.ScheduleEndBehavior.enum).toEqual(["release", "cancel"])
    const scheduleBody = byId("schedules.create").op.requestBody.content["application/json"].schema
    const createSchedule = scheduleBody.$ref ? schemas[scheduleBody.$ref.split("/").pop()] : scheduleBody
    expect(createSchedule.properties.start).toMatchObject({ $ref: "#/components/schemas/ScheduleStart" })
    expect(createSchedule.properties.end_behavior).toMatchObject({ $ref: "#/components/schemas/ScheduleEndBehavior" })
    expect(schemas.Subscription.properties.status).toEqual({ $ref: "#/components/schemas/SubscriptionStatus" })
    const status = byId("subscriptions.list").op.parameters.find((p: any) => p.name === "status")
    expect(status).toMatchObject({
      in: "query",
      style: "form",
      explode: true,
      schema: { type: "array", items: { $ref: "#/components/schemas/SubscriptionStatus" } }
    })
    // a quote's outcome is its literal outcomes, not a string
    const quote = byId("subscriptions.previewChange").op.responses["200"].content["application/json"].schema
    expect(quote.properties.data.properties.outcome.$ref).toBe("#/components/schemas/QuoteOutcome")
    expect([...schemas.QuoteOutcome.enum].sort()).toEqual([
      "credit_balance",
      "interval_switch",
      "none",
      "pending_prorations",
      "quantity_next_cycle",
      "refund",
      "scheduled",
      "upgrade"
    ])
    // no parameter is "a string or an array"
    for (const { op } of operations)
      for (const p of op.parameters ?? [])
        expect([op.operationId, p.name, p.schema?.anyOf]).toEqual([op.operationId, p.name, undefined])
  })

  it("timestamps are date-time, counts are integers, numbers are never 'Infinity'", () => {
    expect(schemas.Timestamp).toMatchObject({ type: "string", format: "date-time" })
    expect(schemas.Subscription.properties.created_at).toEqual({ $ref: "#/components/schemas/Timestamp" })
    const advance = byId("sandbox.advanceClock").op.requestBody.content["application/json"].schema
    expect(advance.properties.frozen_time).toMatchObject({ type: "string", format: "date-time" })
    expect(JSON.stringify(doc)).not.toContain('"Infinity"')
    const usage = byId("subscriptions.recordUsage").op.requestBody.content["application/json"].schema
    expect(usage.properties.usage_count.type).toBe("integer")
    expect(schemas.UsageSummary.properties.total_usage_count.type).toBe("integer")
    expect(schemas.Features.additionalProperties.anyOf).toEqual([{ type: "boolean" }, { type: "integer" }])
    const numbers = everySchema(doc).filter(({ schema }) => schema.type === "number")
    // the numbers that are not counts: the session's merchant_rate, a decimal FX rate (or its string),
    // and a meter event's property value (an exact decimal, a string or a boolean)
    expect(numbers.map((n) => n.key)).toEqual(["anyOf", "anyOf"])
    expect(schemas.MeterProperty.anyOf).toContainEqual({ type: "number" })
    const billing = byId("payments.updateBillingSettings").op.requestBody.content["application/json"].schema
    expect(billing.properties.dunning_retry_days.anyOf).toContainEqual({ type: "array", items: { type: "integer" } })
    const session = byId("checkout.create").op.requestBody.content["application/json"].schema
    expect(session.properties.merchant_rate.anyOf).toContainEqual({ type: "number" })
  })

  it("an item shows what waits for its next cycle, as the subscription shows its own pending change", () => {
    const item = schemas.SubscriptionItem
    expect(item.required).toEqual(expect.arrayContaining(["pending_change", "scheduled_price_version_id"]))
    expect(JSON.stringify(item.properties.pending_change)).toContain("#/components/schemas/PendingChange")
    expect(item.properties.pending_change).toEqual(schemas.Subscription.properties.pending_change)
    expect(JSON.stringify(item.properties.scheduled_price_version_id)).toContain("string")
  }, 10_000)

  it("invoice lines and tax lines are references to their components, not copies", () => {
    expect(schemas.Invoice.properties.lines.anyOf[0].items).toEqual({ $ref: "#/components/schemas/InvoiceLine" })
    expect(schemas.Invoice.properties.tax_lines.anyOf[0].items).toEqual({ $ref: "#/components/schemas/InvoiceTaxLine" })
    expect(schemas.UpcomingInvoice.properties.lines.items).toEqual({ $ref: "#/components/schemas/InvoiceLine" })
    // no inline object equals a component
    const bodies = new Set(
      Object.values(schemas)
        .filter((s) => s.type === "object")
        .map((s) => JSON.stringify(s))
    )
    const copies = everySchema(doc.paths).filter(({ schema }) => bodies.has(JSON.stringify(schema)))
    expect(copies).toEqual([])
  })

  it("each operation declares its own errors: no 402 anywhere, 409 on writes (and one read), 413/415 on bodies, 503 only where a processor answers", () => {
    for (const { method, op } of operations) {
      const statuses = Object.keys(op.responses)
      expect([op.operationId, statuses]).toEqual([
        op.operationId,
        expect.arrayContaining(["200", "400", "401", "429", "500"])
      ])
      expect([op.operationId, statuses.includes("402")]).toEqual([op.operationId, false])
      const write = method === "post"
      for (const status of ["413", "415"])
        expect([op.operationId, status, statuses.includes(status)]).toEqual([op.operationId, status, write])
      // a read is 409 only where a state refuses it: the sandbox clock of a live merchant
      expect([op.operationId, statuses.includes("409")]).toEqual([
        op.operationId,
        write || op.operationId === "sandbox.clock"
      ])
      expect([op.operationId, statuses.includes("503")]).toEqual([
        op.operationId,
        op.operationId === "payments.updatePaymentSettings"
      ])
    }
    // a path that names an object can be 404
    for (const { path, op } of operations.filter((o) => o.path.includes("{")))
      expect([path, Object.keys(op.responses)]).toEqual([path, expect.arrayContaining(["404"])])
    expect(Object.keys(byId("customers.list").op.responses)).toEqual(["200", "400", "401", "429", "500"])
    expect(Object.keys(byId("payments.refund").op.responses)).toEqual([
      "200",
      "400",
      "401",
      "404",
      "409",
      "413",
      "415",
      "429",
      "500"
    ])
    expect(byId("catalog.createProduct").op.responses["413"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/PayloadTooLarge"
    })
    expect(schemas.UnsupportedMediaType.properties.code).toEqual({ type: "string", const: "unsupported_media_type" })
    expect(schemas).not.toHaveProperty("PaymentFailed")
  })

  it("declares Retry-After on 429 and Idempotent-Replayed on every write's answer", () => {
    for (const { method, op } of operations) {
      expect([op.operationId, op.responses["429"].headers?.["Retry-After"]?.schema]).toEqual([
        op.operationId,
        { type: "integer", minimum: 1 }
      ])
      expect([op.operationId, op.responses["200"].headers?.["Idempotent-Replayed"] !== undefined]).toEqual([
        op.operationId,
        method === "post"
      ])
    }
  })

  it("says a customer is created with email or payer_id, exactly one", () => {
    const body = byId("customers.create").op.requestBody.content["application/json"].schema
    expect(body.oneOf.map((s: any) => s.required)).toEqual([["email"], ["payer_id"]])
  })

  it("its base URL is '/' unless served: then the engine's public URL (mount prefix included)", () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: "/" })])
  })
})
