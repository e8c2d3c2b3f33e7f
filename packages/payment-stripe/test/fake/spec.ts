/**
 * Stripe's published OpenAPI description, cut to the operations the adapter uses
 * (`spec/stripe-openapi.subset.json`, see its `info`), as validators: every request the adapter
 * sends and every response the fake returns is checked against it, so the fake cannot drift from
 * the real API unnoticed.
 */
import { Ajv, type ValidateFunction } from "ajv"
import { readFileSync } from "node:fs"
import { join } from "node:path"

interface Operation {
  readonly requestBody?: { readonly content: Record<string, { readonly schema: unknown }> }
  readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string; readonly required?: boolean }>
  readonly responses: Record<string, { readonly content?: Record<string, { readonly schema: unknown }> }>
}

interface Spec {
  readonly info: Record<string, unknown>
  readonly paths: Record<string, Record<string, Operation>>
  readonly components: { readonly schemas: Record<string, Schema> }
}

interface Schema {
  readonly $ref?: string
  readonly properties?: Record<string, Schema>
  readonly anyOf?: ReadonlyArray<Schema>
  readonly items?: Schema
  readonly additionalProperties?: boolean | Schema
}

/** The subset, as read from the package. */
export const spec: Spec = JSON.parse(
  readFileSync(join(import.meta.dirname, "../../spec/stripe-openapi.subset.json"), "utf8")
) as Spec

/** OpenAPI 3.0's `nullable` as JSON Schema: the schema, or null. */
const jsonSchemaOf = (o: unknown): unknown => {
  if (Array.isArray(o)) return o.map(jsonSchemaOf)
  if (o === null || typeof o !== "object") return o
  const { nullable, ...rest } = o as Record<string, unknown>
  const converted = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, jsonSchemaOf(v)]))
  return nullable === true ? { anyOf: [converted, { type: "null" }] } : converted
}

const ajv = new Ajv({ strict: false, allErrors: true, coerceTypes: true, validateFormats: false })
ajv.addSchema({ ...(jsonSchemaOf(spec) as object), $id: "stripe" })

const pointer = (parts: ReadonlyArray<string>) =>
  `stripe#/${parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`

const compiled = new Map<string, ValidateFunction>()
const validator = (parts: ReadonlyArray<string>) => {
  const key = pointer(parts)
  let v = compiled.get(key)
  if (v === undefined) {
    v = ajv.compile({ $ref: key })
    compiled.set(key, v)
  }
  return v
}

/** The spec's path template a request path matches (`/v1/payment_intents/pi_1` → `/v1/payment_intents/{intent}`). */
export const templateOf = (method: string, path: string): string | undefined =>
  Object.keys(spec.paths).find((template) => {
    if (spec.paths[template]?.[method] === undefined) return false
    const re = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`)
    return (
      re.test(path) && !(template.includes("{") && Object.keys(spec.paths).some((t) => t !== template && t === path))
    )
  })

const describe = (v: ValidateFunction) =>
  (v.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? ""} ${JSON.stringify(e.params)}`).join("; ")

/**
 * Checks a request's parameters (the form body of a POST, the query of a GET) against the
 * operation; answers what is wrong, or nothing. Values arrive as strings and are coerced as the
 * schema says (the form encoding has no numbers or booleans).
 */
export const checkRequest = (method: string, template: string, params: unknown): string | undefined => {
  const op = spec.paths[template]?.[method]
  if (op === undefined) return `${method.toUpperCase()} ${template} is not in the spec subset`
  if (method === "get") {
    const known = new Set((op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name))
    const sent = Object.keys((params ?? {}) as Record<string, unknown>)
    const unknown = sent.filter((k) => !known.has(k))
    if (unknown.length > 0) return `unknown query parameters: ${unknown.join(", ")}`
    const missing = (op.parameters ?? []).filter((p) => p.in === "query" && p.required && !sent.includes(p.name))
    return missing.length > 0 ? `missing query parameters: ${missing.map((p) => p.name).join(", ")}` : undefined
  }
  const v = validator([
    "paths",
    template,
    method,
    "requestBody",
    "content",
    "application/x-www-form-urlencoded",
    "schema"
  ])
  return v(params) ? undefined : describe(v)
}

const resolve = (schema: Schema | undefined): Schema | undefined => {
  if (schema?.$ref === undefined) return schema
  return spec.components.schemas[schema.$ref.split("/").pop()!]
}

/**
 * Fields of `value` the schema does not know (the schemas allow extra properties; a fake that
 * invented a field would pass them). Follows objects and arrays through `$ref` and `anyOf`.
 */
const unknownFields = (schema: Schema | undefined, value: unknown, at: string): ReadonlyArray<string> => {
  const s = resolve(schema)
  if (s === undefined || value === null || typeof value !== "object") return []
  if (Array.isArray(value)) return value.flatMap((v, i) => unknownFields(s.items, v, `${at}[${i}]`))
  if (s.anyOf) {
    const options = s.anyOf.map((o) => unknownFields(o, value, at))
    return options.some((o) => o.length === 0) ? [] : (options[0] ?? [])
  }
  if (s.properties === undefined) return []
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => {
    const property = s.properties?.[k]
    if (property === undefined)
      return typeof s.additionalProperties === "object"
        ? unknownFields(s.additionalProperties, v, `${at}.${k}`)
        : [`${at}.${k}`]
    return unknownFields(property, v, `${at}.${k}`)
  })
}

/** Checks a response body against the operation's answer for its status; answers what is wrong, or nothing. */
export const checkResponse = (method: string, template: string, status: number, body: unknown): string | undefined => {
  const op = spec.paths[template]?.[method]
  if (op === undefined) return `${method.toUpperCase()} ${template} is not in the spec subset`
  const key = status === 200 ? "200" : "default"
  const parts = ["paths", template, method, "responses", key, "content", "application/json", "schema"]
  const v = validator(parts)
  if (!v(structuredClone(body))) return describe(v)
  const schema = op.responses[key]?.content?.["application/json"]?.schema as Schema | undefined
  const unknown = unknownFields(schema, body, "")
  return unknown.length > 0 ? `fields the spec does not define: ${unknown.join(", ")}` : undefined
}

/** Checks an object against a schema of the spec (a webhook event and what it carries). */
export const checkObject = (schema: string, value: unknown): string | undefined => {
  const v = validator(["components", "schemas", schema])
  if (!v(structuredClone(value))) return describe(v)
  const unknown = unknownFields({ $ref: `#/components/schemas/${schema}` }, value, "")
  return unknown.length > 0 ? `fields the spec does not define: ${unknown.join(", ")}` : undefined
}
