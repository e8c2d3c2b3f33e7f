import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"

// A status changes only through its state machine: in core's sources, a status field is
// written by the entity modules' transition functions (built on `Lifecycle.moveBy`), set to a
// machine's initial state at creation (`Lifecycle.<machine>.initial`, `Lifecycle.bornAs`), or
// copied from an object that already has it. Anything else — a literal, an input, a ternary of
// literals — is a status assigned outside the machines, and fails here with its file and line.

const src = join(import.meta.dirname, "..", "src")
const files = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((f) => {
    const path = join(dir, f)
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : []
  })

/** The machines themselves and the entity modules whose transition functions write the status. */
const machines = new Set([
  "kernel/Lifecycle.ts",
  "payments/Trade.ts",
  "invoices/Invoice.ts",
  "subscriptions/Subscription.ts",
  "checkout/CheckoutSession.ts",
  "refunds/Refund.ts",
  "webhooks/Webhook.ts",
  "tenants/Merchant.ts",
  "discounts/Discount.ts",
  "taxes/Tax.ts",
  "schedules/Schedule.ts",
  "subscriptions/PriceMigration.ts",
  "notifications/Notification.ts",
  "invoices/InvoiceItem.ts",
  "usage/BillableMetric.ts",
  "credits/CreditGrant.ts",
  "usage/UsageAdjustment.ts"
])

/** Status fields of records without a machine: written once at creation, never changed. */
const noMachine = [
  /status: "active" as const \}\)\)/, // a configured tax table's rates (TaxRates.table): not records, never stored
  /status: "active",\s*$/, // the default category (`Merchants.create`): categories have no transitions
  /\{ \.\.\.valid, status: valid\.status === "frozen" \? "draft" : valid\.status \}/ // a price *input* (Catalog.updatePrice); its version is born through Lifecycle.bornAs
]

const KEY = /(?<![\w.])(status|trade_status|biz_status|refund_status|event_status)\s*:\s*(.+?)\s*(?:,\s*$|,\s|\}|$)/g
const ALLOWED = [
  /^Schema\./, // a schema
  /^\(/, // a column accessor
  /^Lifecycle\.\w+\.initial\b/, // born in the machine's initial state
  /^Result\.getOrThrow\(Lifecycle\.bornAs\(/, // born one transition away from it
  /^[\w.]+\.(status|trade_status|biz_status|refund_status|event_status|to)$/, // a copy, or a transition's result
  /^([A-Z]\w*\.)?[A-Z]\w*Status$/, // a type (a parameter's on its own line: `status: Lifecycle.ProductStatus`)
  /^[\w.]+\["status"\]$/, // a type
  /^"(status|trade_status|biz_status|refund_status|event_status)"$/, // an indexed column of the same-named field (Store.entity)
  /^(string|number|[A-Z][\w.]*)\)/, // a parameter's type
  /^(string|number|boolean)$/ // a parameter's type on its own line
]

describe("status writes", () => {
  it("no status is assigned outside the state machines' transition functions", () => {
    const offences: Array<string> = []
    for (const file of files(src)) {
      const name = relative(src, file)
      if (machines.has(name)) continue
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          const code = line.replace(/\/\/.*$/, "")
          if (/^\s*(\*|\/\*\*|readonly\b)/.test(code) || /\breadonly\s+\w*status\b/.test(code)) return
          if (noMachine.some((r) => r.test(code))) return
          for (const m of code.matchAll(KEY)) {
            const value = m[2]!.trim()
            if (!ALLOWED.some((r) => r.test(value))) offences.push(`${name}:${i + 1}: ${m[1]}: ${value}`)
          }
        })
    }
    expect(offences).toEqual([])
  })

  it("the check finds a literal status write", () => {
    const sample = `const t = new Trade.Trade({ ...trade, trade_status: "succeeded", paid_at })`
    const found = [...sample.matchAll(KEY)].map((m) => m[2]!.trim()).filter((v) => !ALLOWED.some((r) => r.test(v)))
    expect(found).toEqual(['"succeeded"'])
  })
})
