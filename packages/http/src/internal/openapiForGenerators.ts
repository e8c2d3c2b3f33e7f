/**
 * The last pass over the OpenAPI document, for client generators (openapi-typescript,
 * @hey-api/openapi-ts, openapi-generator…): what Effect's schema annotations cannot say, said
 * once here, so a generated client has one type per concept.
 *
 * - component names without the `Encoded` suffix Effect gives a class's encoded side, and no
 *   `_1` duplicates (a nullable alias is inlined, identical copies merged);
 * - an inline copy of a component (invoice lines, tax lines) replaced by its `$ref`;
 * - one-value enums as `const` (the envelope's `code` and `message`);
 * - every enum of two or more values a named component, referenced wherever it is used
 *   (request bodies, answers, list filters);
 * - list filters as arrays (`style: form, explode: true`: `?status=a&status=b`);
 * - timestamps `format: date-time`, counts `integer`, no `"Infinity"` strings for numbers;
 * - each operation's own error statuses (no 402, 413 and 415 on bodies, 409 on writes), the
 *   `Retry-After` and `Idempotent-Replayed` headers;
 * - a customer is created with exactly one of `email` and `payer_id`;
 * - `servers`: `/` here; the served document names the `publicUrl` instead (see `withServer`).
 */

type Json = Record<string, any>

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const refName = (s: unknown): string | undefined =>
  isObject(s) && typeof s.$ref === "string" && s.$ref.startsWith("#/components/schemas/")
    ? s.$ref.slice("#/components/schemas/".length)
    : undefined

/** Rebuilds every JSON value bottom-up with `f` (children first). */
const mapDeep = (value: unknown, f: (node: unknown, key: string | undefined) => unknown, key?: string): unknown => {
  const next = Array.isArray(value)
    ? value.map((v) => mapDeep(v, f))
    : isObject(value)
      ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapDeep(v, f, k)]))
      : value
  return f(next, key)
}

/** A canonical text of a JSON value (keys sorted), for equality. */
const canonical = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(canonical).join(",")}]`
    : isObject(value)
      ? `{${Object.keys(value)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
          .join(",")}}`
      : JSON.stringify(value)

/** `anyOf` without repeated members (`[string, null, null]` → `[string, null]`). */
const distinctAnyOf = (spec: Json): Json =>
  mapDeep(spec, (node) => {
    if (!isObject(node) || !Array.isArray(node.anyOf)) return node
    const seen = new Set<string>()
    const anyOf = node.anyOf.filter((s: unknown) => !seen.has(canonical(s)) && seen.add(canonical(s)))
    return { ...node, anyOf }
  }) as Json

const isNull = (s: unknown) => isObject(s) && s.type === "null" && Object.keys(s).length === 1

// ---------------------------------------------------------------------------------------------
// component names

/**
 * Components named as their concept: a component that only makes another nullable is inlined,
 * `XEncoded` becomes `X`, and a `X_1` identical to `X` is merged into it.
 */
const renameComponents = (spec: Json): Json => {
  const schemas: Json = { ...spec.components?.schemas }
  const rename = new Map<string, unknown>()
  for (const [name, schema] of Object.entries(schemas)) {
    const anyOf = isObject(schema) ? schema.anyOf : undefined
    if (Array.isArray(anyOf) && anyOf.length === 2 && anyOf.some(isNull) && anyOf.some((s) => refName(s))) {
      rename.set(name, schema)
      delete schemas[name]
    }
  }
  const groups = new Map<string, Array<string>>()
  for (const name of Object.keys(schemas)) {
    const base = name.replace(/_\d+$/, "").replace(/Encoded$/, "")
    groups.set(base, [...(groups.get(base) ?? []), name])
  }
  const target = new Map<string, string>()
  for (const [base, members] of groups) {
    if (new Set(members.map((m) => canonical(schemas[m]))).size > 1)
      throw new Error(`OpenAPI: different components would be named ${base}: ${members.join(", ")}`)
    for (const m of members) target.set(m, base)
  }
  const fix = (value: unknown): unknown =>
    mapDeep(value, (node) => {
      const name = refName(node)
      if (name === undefined) return node
      if (rename.has(name)) return fix(rename.get(name))
      return { ...(node as Json), $ref: `#/components/schemas/${target.get(name) ?? name}` }
    })
  const renamed: Json = {}
  for (const [name, schema] of Object.entries(schemas)) renamed[target.get(name)!] = fix(schema)
  return { ...(fix({ ...spec, components: undefined }) as Json), components: { ...spec.components, schemas: renamed } }
}

/**
 * A schema as compared for copies: a timestamp is a timestamp whether it names the `Timestamp`
 * component or not (a field with a decoding default loses the reference on its encoded side).
 */
const comparable = (schema: unknown): string =>
  canonical(mapDeep(schema, (node) => (refName(node) === "Timestamp" ? { type: "string" } : node)))

/** An inline schema identical to a component's becomes a reference to it. */
const referenceCopies = (spec: Json): Json => {
  const byText = new Map<string, string>()
  for (const [name, schema] of Object.entries(spec.components.schemas as Json))
    if (isObject(schema) && schema.type === "object") byText.set(comparable(schema), name)
  const replace = (value: unknown, own?: string): unknown =>
    mapDeep(value, (node) => {
      if (!isObject(node) || node.type !== "object") return node
      const name = byText.get(comparable(node))
      return name !== undefined && name !== own ? ref(name) : node
    })
  const schemas = Object.fromEntries(
    Object.entries(spec.components.schemas as Json).map(([name, schema]) => [
      name,
      // the component's own body stays; copies inside it become references
      isObject(schema) && schema.type === "object"
        ? Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, replace(v, name)]))
        : replace(schema, name)
    ])
  )
  return { ...(replace({ ...spec, components: undefined }) as Json), components: { ...spec.components, schemas } }
}

// ---------------------------------------------------------------------------------------------
// numbers and timestamps

/** Fields that count something: whole numbers (the server refuses fractions). */
const integerFields = new Set([
  "trial_period_count",
  "billing_cycle_count",
  "period_count",
  "exp_year",
  "exp_month",
  "max_redemptions",
  "max_redemptions_per_customer",
  "total_cycles",
  "percent_off",
  "duration_cycles",
  "usage_count",
  "email_subscription",
  "trial_policy",
  "trial_type",
  "value",
  "dunning_retry_days",
  "quantity"
])

const isNonFinite = (s: unknown) => isObject(s) && Array.isArray(s.enum) && s.enum.includes("Infinity")

/** An integer's bounds when they are only JavaScript's safe range: dropped (noise in every generated type). */
const safeBounds = (node: unknown): unknown => {
  if (!isObject(node) || node.type !== "integer") return node
  const { minimum, maximum, ...rest } = node
  return {
    ...rest,
    ...(minimum !== undefined && minimum !== -9007199254740991 ? { minimum } : {}),
    ...(maximum !== undefined && maximum !== 9007199254740991 ? { maximum } : {})
  }
}

/**
 * Numbers: the `"Infinity"`/`"NaN"` strings Effect allows for a `Schema.Number` dropped (the API
 * never sends nor takes them), counts and features `integer`.
 */
const numbers = (spec: Json): Json =>
  mapDeep(spec, (node, key) => {
    if (!isObject(node)) return node
    let out = safeBounds(node) as Json
    if (Array.isArray(out.anyOf) && out.anyOf.some(isNonFinite)) {
      const rest = out.anyOf.filter((s: unknown) => !isNonFinite(s))
      const { anyOf: _, ...others } = out
      out = rest.length === 1 ? { ...others, ...rest[0] } : { ...others, anyOf: rest }
    }
    if (key !== undefined && integerFields.has(key)) out = toInteger(out)
    if (key === "additionalProperties" && Array.isArray(out.anyOf) && out.anyOf.some((s: Json) => s.type === "boolean"))
      out = toInteger(out) // features: boolean or integer
    return out
  }) as Json

/** A count's schema as `integer`: itself, each of its alternatives, or its items when it is a list of counts. */
const toInteger = (schema: Json): Json =>
  schema.type === "number"
    ? { ...schema, type: "integer" }
    : schema.type === "array" && isObject(schema.items)
      ? { ...schema, items: toInteger(schema.items as Json) }
      : Array.isArray(schema.anyOf)
        ? { ...schema, anyOf: schema.anyOf.map((s: Json) => toInteger(s)) }
        : schema

/** Body fields that are RFC 3339 instants. */
const timeFields = new Set(["frozen_time", "target_time", "timestamp", "starts_at", "expires_at", "failed_at"])

/**
 * Response fields that are `Timestamp`s but lose the reference on their encoded side (a field
 * with a decoding default, or inside one): written as the `Timestamp` component, as every other
 * instant of the answers.
 */
const timestampRefFields = new Set(["due_date", "next_retry_at"])

const isPlainString = (s: unknown) => isObject(s) && s.type === "string" && Object.keys(s).length === 1

/** `{type: string}` (or `[string, null]`) as the `Timestamp` component (nullable where it was). */
const asTimestamp = (node: Json): Json =>
  isPlainString(node)
    ? ref("Timestamp")
    : Array.isArray(node.anyOf) && node.anyOf.length === 2 && node.anyOf.some(isNull) && node.anyOf.some(isPlainString)
      ? { ...node, anyOf: node.anyOf.map((s: unknown) => (isPlainString(s) ? ref("Timestamp") : s)) }
      : node

const timestamps = (spec: Json): Json => {
  const out = mapDeep(spec, (node, key) => {
    if (key !== undefined && timeFields.has(key) && isObject(node) && node.type === "string" && !node.enum)
      return { ...node, format: "date-time" }
    if (key !== undefined && timestampRefFields.has(key) && isObject(node)) return asTimestamp(node)
    return node
  }) as Json
  const schemas = out.components.schemas as Json
  if (isObject(schemas.Timestamp)) schemas.Timestamp = { ...schemas.Timestamp, format: "date-time" }
  return out
}

// ---------------------------------------------------------------------------------------------
// enums

/** Names of the API's value sets, by their values (any order); others are named by their field. */
const enumNames: ReadonlyArray<readonly [string, ReadonlyArray<string | number>]> = [
  ["BillingType", ["one_time", "recurring"]],
  ["PriceType", ["flat_price", "package_price", "based_on_usage"]],
  ["ModelType", ["per_unit", "tiers_price"]],
  ["PaymentTiming", ["prepaid", "postpaid"]],
  ["BillingDimension", ["quantity", "usage", "mixed"]],
  ["IntervalUnit", ["day", "week", "month", "quarter", "year"]],
  ["BillingCycleUnit", ["week", "month", "quarter", "year", "customer-initiated", "over_threshold"]],
  ["PriceDiscountType", ["percentage", "amount"]],
  ["PriceVersionStatus", ["draft", "active", "frozen"]],
  ["NewProductStatus", ["draft", "active"]],
  ["ProductStatus", ["draft", "active", "disabled"]],
  ["CategoryStatus", ["active", "disabled"]],
  ["SessionMode", ["checkout", "payment"]],
  ["SessionStatus", ["open", "complete", "expired"]],
  ["ChangeTiming", ["immediate", "end_of_period"]],
  ["ProrationBehavior", ["always_invoice", "create_prorations", "none", "immediate"]],
  ["DiscountType", ["percentage", "fixed_amount"]],
  ["DiscountDuration", ["once", "repeating", "forever"]],
  ["DiscountStatus", ["active", "ended"]],
  ["TaxRateStatus", ["active", "archived"]],
  ["EndpointStatus", ["enabled", "disabled"]],
  ["DeliveryStatus", ["pending", "succeeded", "retrying", "failed"]],
  ["RefundStatus", ["pending", "succeeded", "failed"]],
  ["TradeRefundStatus", ["no_refund", "partially_refunded", "refunded"]],
  ["GrantingStatus", ["trial", "active", "past_due", "paused", "unpaid"]],
  ["ConflictCode", ["state_conflict", "duplicate_resource", "idempotency_conflict", "request_in_progress"]],
  ["PaymentProvider", ["sandbox", "stripe"]],
  ["FraudDisputeRenewals", ["hold", "charge"]],
  ["ScheduleStart", ["current_period", "next_period"]],
  ["ScheduleEndBehavior", ["release", "cancel"]],
  ["TierMode", ["graduated", "volume"]],
  ["DisputeStatus", ["none", "open", "won", "lost", "warning_closed", "prevented"]],
  ["EmailSubscription", [1, 2]],
  // issue 34: invoices, invoice items, the balance ledger, notifications, dunning by decline
  ["DerivedInvoiceStatus", ["draft", "open", "paid", "void", "uncollectible", "issued"]],
  [
    "InvoiceLineKind",
    [
      "subscription",
      "one_time",
      "trial",
      "usage",
      "proration_credit",
      "proration_charge",
      "refund",
      "discount",
      "balance",
      "invoice_item"
    ]
  ],
  ["InvoiceItemStatus", ["pending", "invoiced", "deleted"]],
  ["CollectionMethod", ["charge_automatically", "send_invoice"]],
  [
    "BalanceTransactionSource",
    [
      "credit_note",
      "proration_credit",
      "carried_minimum",
      "manual_adjustment",
      "applied_to_invoice",
      "refund_leftover",
      "refund_of_balance",
      "credit_grant",
      "credit_grant_expired",
      "credit_grant_voided",
      "top_up"
    ]
  ],
  ["CreditNoteMethod", ["credit_balance", "reduce_invoice", "refund"]],
  // issue 35: prepaid credits
  ["CreditGrantStatus", ["active", "depleted", "expired", "voided"]],
  ["CreditGrantCategory", ["paid", "promotional"]],
  ["CreditGrantSource", ["grant", "top_up"]],
  // issue 35: billable metrics (their status shares TaxRateStatus's values: active, archived)
  ["AggregationType", ["count", "sum", "max", "unique_count", "latest", "weighted_sum"]],
  ["UsageAdjustmentKind", ["draft", "invoice", "credit_note"]],
  ["UsageAdjustmentStatus", ["pending", "applied"]],
  ["UsageAdjustmentPreviewKind", ["draft", "invoice", "credit_note", "none"]],
  ["UsageAdjustmentCreditMethod", ["credit_balance", "reduce_invoice"]],
  [
    "NotificationKind",
    [
      "invoice_issued",
      "invoice_past_due",
      "payment_receipt",
      "payment_failed",
      "trial_ending",
      "card_expiring",
      "subscription_canceled"
    ]
  ],
  ["NotificationStatus", ["pending", "sent", "skipped"]],
  ["NotificationLanguage", ["en", "de", "fr"]],
  ["DeclineAction", ["retry", "stop"]],
  ["DunningNextAction", ["retry", "new_payment_method", "none"]],
  ["DunningPreviewNextAction", ["new_payment_method", "none"]],
  ["DunningStepKind", ["failed", "retry", "stop", "exhausted"]],
  ["DunningStepInvoiceStatus", ["retrying", "failed"]],
  ["DunningStepSubscriptionStatus", ["past_due", "unpaid", "canceled"]],
  ["DunningEndedBy", ["decline", "retries_exhausted"]],
  ["ScheduleStatus", ["not_started", "active", "completed", "released", "canceled"]],
  ["MigrationStatus", ["previewed", "running", "completed", "canceled"]],
  ["TrialPolicy", [1, 2, 3]],
  [
    "QuoteOutcome",
    [
      "upgrade",
      "refund",
      "credit_balance",
      "none",
      "scheduled",
      "quantity_next_cycle",
      "pending_prorations",
      "interval_switch"
    ]
  ]
]

const setKey = (values: ReadonlyArray<unknown>) => canonical([...values].map((v) => JSON.stringify(v)).sort())

const pascal = (field: string) =>
  field
    .split(/[^A-Za-z0-9]+/)
    .filter((p) => p !== "")
    .map((p) => p[0]!.toUpperCase() + p.slice(1))
    .join("")

/** Field names whose values are better named by another word. */
const fieldEnumNames: Record<string, string> = {
  biz_status: "InvoiceStatus",
  trade_status: "TradeStatus",
  event_type: "EventType",
  event_types: "EventType",
  invoice_type: "InvoiceType",
  invoice_types: "InvoiceType",
  kind: "InvoiceLineKind",
  locale: "Locale",
  status: "SubscriptionStatus",
  result: "RevokeResult"
}

/**
 * Every enum: one value → `const`; two or more → a component named for its value set, and a
 * `$ref` wherever the set appears.
 */
const enums = (spec: Json): Json => {
  const named = new Map(enumNames.map(([name, values]) => [setKey(values), name]))
  const components: Json = {}
  const nameOf = (values: ReadonlyArray<unknown>, field: string | undefined): string => {
    const key = setKey(values)
    const known = named.get(key)
    if (known !== undefined) return known
    let name = fieldEnumNames[field ?? ""] ?? pascal(field ?? "Value")
    if (name === "" || /^\d/.test(name)) name = "Value"
    while (Object.hasOwn(components, name) || Object.hasOwn(spec.components.schemas, name)) name = `${name}Value`
    named.set(key, name)
    return name
  }
  /** the field a schema belongs to: the property name, or for an array's items the array's */
  const walk = (value: unknown, field: string | undefined): unknown => {
    if (Array.isArray(value)) return value.map((v) => walk(v, field))
    if (!isObject(value)) return value
    if (
      Array.isArray(value.enum) &&
      value.enum.length === 1 &&
      Object.keys(value).every((k) => k === "type" || k === "enum" || k === "description")
    )
      return { ...value, enum: undefined, const: value.enum[0] }
    if (Array.isArray(value.enum) && value.enum.length > 1) {
      const name = nameOf(value.enum, field)
      const { enum: values, type, ...rest } = value
      components[name] ??= { type, enum: values }
      return Object.keys(rest).length === 0 ? ref(name) : { ...ref(name), ...rest }
    }
    const out: Json = {}
    for (const [k, v] of Object.entries(value)) {
      if (k === "properties" && isObject(v))
        out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, walk(s, name)]))
      else if (k === "parameters" && Array.isArray(v))
        out[k] = v.map((p: Json) => (isObject(p) && p.schema ? { ...p, schema: walk(p.schema, p.name) } : p))
      else out[k] = walk(v, field)
    }
    return out
  }
  const clean = (u: unknown): unknown => JSON.parse(JSON.stringify(u)) // drops the `enum: undefined` keys
  const walked = clean(walk(spec, undefined)) as Json
  return { ...walked, components: { ...walked.components, schemas: { ...walked.components.schemas, ...components } } }
}

/** A list filter (one value, a repeated key or a comma-separated value) as an array of values. */
const listFilters = (spec: Json): Json =>
  mapDeep(spec, (node, key) => {
    if (key !== "parameters" || !Array.isArray(node)) return node
    return node.map((p: Json) => {
      const anyOf = p.in === "query" && isObject(p.schema) ? p.schema.anyOf : undefined
      const items = Array.isArray(anyOf) ? anyOf.find((s: Json) => s.type === "array")?.items : undefined
      return items === undefined
        ? p
        : {
            ...p,
            schema: { type: "array", items },
            style: "form",
            explode: true,
            description:
              p.description ?? "Repeat the parameter for several values (a comma-separated value is read too)."
          }
    })
  }) as Json

// ---------------------------------------------------------------------------------------------
// errors and headers

const errorData = {
  type: "object",
  properties: { request_id: { type: "string" }, param: { type: "string" } },
  required: ["request_id"]
}
const refusalBody = (code: string) => ({
  type: "object",
  properties: { code: { type: "string", const: code }, message: { type: "string" }, data: errorData },
  required: ["code", "message", "data"]
})

/** Operations that take no object by id (no 404 besides an unknown route). */
const noNotFound = new Set([
  "customers.create",
  "customers.list",
  "catalog.categories",
  "catalog.products",
  "catalog.prices",
  "payments.trades",
  "payments.invoices",
  "payments.refunds",
  "payments.invoiceSettings",
  "payments.updateInvoiceSettings",
  "payments.disputeSettings",
  "payments.updateDisputeSettings",
  "payments.paymentSettings",
  "payments.updatePaymentSettings",
  "sandbox.clock",
  "sandbox.advanceClock",
  "webhooks.events",
  "webhooks.endpoints",
  "webhooks.createEndpoint",
  "discounts.list",
  "taxRates.create",
  "taxRates.list",
  "billableMetrics.create",
  "billableMetrics.list",
  "usageAlerts.list",
  "portal.settings",
  "entitlements.settings",
  "entitlements.updateSettings"
])

/** Reads that can be 409: the sandbox clock of a live merchant (test helpers need a sandbox key). */
const readConflicts = new Set(["sandbox.clock"])

/** Operations that ask a payment processor before they answer (503 when it does not). */
const processorCalls = new Set(["payments.updatePaymentSettings"])

/**
 * The statuses an operation can answer with, besides 200: 400, 401, 429 and 500 always; 404
 * when it names an object; 409 on writes (a lost race, a reused `Request-Id`, a state that
 * refuses) and the few reads a state refuses; 413 and 415 on a body; 503 when a processor must
 * answer first. Checked against the statuses the HTTP suites see (docs/decisions.md).
 */
export const errorStatuses = (operationId: string, method: string): ReadonlyArray<string> => {
  const write = method === "post"
  return [
    "400",
    "401",
    ...(noNotFound.has(operationId) ? [] : ["404"]),
    ...(write || readConflicts.has(operationId) ? ["409"] : []),
    ...(write ? ["413", "415"] : []),
    "429",
    "500",
    ...(processorCalls.has(operationId) ? ["503"] : [])
  ]
}

const retryAfter = {
  description: "Seconds to wait before retrying.",
  schema: { type: "integer", minimum: 1 }
}
const replayed = {
  description:
    "`true` when this is the stored answer to an earlier POST with the same `Request-Id` (replayed, nothing done again).",
  schema: { type: "string", const: "true" }
}

const errors = (spec: Json): Json => {
  const schemas: Json = { ...spec.components.schemas }
  delete schemas.PaymentFailed // the API never answers 402
  schemas.PayloadTooLarge = refusalBody("payload_too_large")
  schemas.UnsupportedMediaType = refusalBody("unsupported_media_type")
  const extra: Json = {
    "413": {
      description: "The request body is over the size limit (1 MiB by default)",
      content: { "application/json": { schema: ref("PayloadTooLarge") } }
    },
    "415": {
      description: "The request body is not JSON (Content-Type: application/json)",
      content: { "application/json": { schema: ref("UnsupportedMediaType") } }
    }
  }
  const paths = Object.fromEntries(
    Object.entries(spec.paths as Json).map(([path, ops]) => [
      path,
      Object.fromEntries(
        Object.entries(ops as Json).map(([method, op]) => {
          if (!isObject(op) || !isObject(op.responses)) return [method, op]
          const allowed = errorStatuses(String(op.operationId), method)
          const responses: Json = {}
          for (const [status, response] of Object.entries(op.responses as Json)) {
            if (status.startsWith("2")) {
              responses[status] =
                method === "post"
                  ? { ...response, headers: { ...response.headers, "Idempotent-Replayed": replayed } }
                  : response
            } else if (allowed.includes(status)) {
              responses[status] =
                status === "400" && method === "get" && !isList(op)
                  ? onlyInvalidParameter(response)
                  : status === "429"
                    ? { ...response, headers: { ...response.headers, "Retry-After": retryAfter } }
                    : response
            }
          }
          for (const status of allowed)
            if (responses[status] === undefined && extra[status]) responses[status] = extra[status]
          const ordered = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)))
          return [method, { ...op, responses: ordered }]
        })
      )
    ])
  )
  return { ...spec, paths, components: { ...spec.components, schemas } }
}

const isList = (op: Json) =>
  Array.isArray(op.parameters) && op.parameters.some((p: Json) => p.name === "starting_after" || p.name === "limit")

/** A read that is not a list has no cursor to contradict: its 400 is `InvalidParameter` only. */
const onlyInvalidParameter = (response: Json): Json => ({
  ...response,
  description: "A required field or header is missing, or a value is malformed or out of range",
  content: { "application/json": { schema: ref("InvalidParameter") } }
})

// ---------------------------------------------------------------------------------------------
// rules no schema carries

/**
 * `POST /api/v1/front/customer/create` takes `email` or `payer_id`, exactly one (the seed's
 * "mutually exclusive"): none is 400 `InvalidParameter` on `email`, both 400
 * `invalid_request_error` on `payer_id`. Each alternative names its field's type, so generated
 * types and validators require one (`oneOf` also refuses both, for a JSON Schema validator).
 */
const customerIdentity = (spec: Json): Json => {
  const op = spec.paths?.["/api/v1/front/customer/create"]?.post
  const content = op?.requestBody?.content?.["application/json"]
  if (!content?.schema) return spec
  content.schema = {
    ...content.schema,
    oneOf: [
      { type: "object", title: "Guest", properties: { email: { type: "string" } }, required: ["email"] },
      { type: "object", title: "Member", properties: { payer_id: { type: "string" } }, required: ["payer_id"] }
    ],
    description:
      "A guest (`email`) or a member (`payer_id`, your own id for the customer, unique per merchant): exactly one of the two."
  }
  return spec
}

/**
 * The document's base URL. Standalone, the API is served from the host's root: `/`. The served
 * `/openapi.json` names the engine's `publicUrl` instead ({@link withServer}), which under a
 * mount is the mounted address.
 */
const servers = [{ url: "/", description: "The API's root (the served /openapi.json names the public URL)" }]

/**
 * The document with its server set to `publicUrl` (the address the API is reached at,
 * mount prefix included).
 */
export const withServer = (spec: Json, publicUrl: string): Json => ({
  ...spec,
  servers: [{ url: publicUrl.replace(/\/+$/, "") || "/", description: "This server" }]
})

/**
 * Every rule above, in order.
 */
export const forGenerators = (spec: Json): Json => {
  const steps = [
    distinctAnyOf,
    renameComponents,
    referenceCopies,
    numbers,
    timestamps,
    enums,
    listFilters,
    errors,
    customerIdentity
  ]
  const out = steps.reduce((doc, step) => step(JSON.parse(JSON.stringify(doc))), spec)
  return { ...out, servers }
}
