// Moves packages/core's modules into their concept folders (`--move`, once) and rewrites every
// relative import in core's src/, test/ and scripts/ whose target no longer exists to the module
// of the same name where it now lives. Safe to run again (after merging work written against the
// flat layout): imports that resolve are left alone.
//
//   node scripts/core-imports.mjs [--move]
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { basename, dirname, join, relative, resolve } from "node:path"

const core = resolve(import.meta.dirname, "..", "packages", "core")
const src = join(core, "src")

/** Concept folder → its modules (file names without `.ts`), for the flat files of `src/`. */
const layout = {
  money: ["Money", "Decimal", "BillingPeriod", "Proration", "Pricing"],
  catalog: ["Catalog", "Price", "Product", "PriceRules"],
  customers: ["Customer", "Customers"],
  checkout: ["Checkout", "CheckoutSession", "SessionPayments"],
  subscriptions: [
    "Subscription",
    "Subscriptions",
    "SubscriptionStore",
    "PriceChanges",
    "Renewals",
    "RenewalBatches",
    "RenewalPlan"
  ],
  invoices: ["Invoice", "Invoicing", "InvoiceDocuments"],
  payments: [
    "Trade",
    "Payments",
    "Dunning",
    "DunningPolicy",
    "ProcessorEvents",
    "PaymentSettings",
    "DisputeHolds",
    "StripeCurrency"
  ],
  refunds: ["Refund", "Refunds"],
  discounts: ["Discount", "Discounts"],
  taxes: ["Tax", "TaxRates"],
  usage: ["Usage", "Metering"],
  webhooks: ["Webhook", "Webhooks", "WebhookDelivery", "WebhookDispatch"],
  portal: ["Portal", "PortalSession"],
  tenants: ["Merchant", "Merchants", "Secrets", "Settings", "SandboxClock"],
  kernel: ["Ids", "Common", "Errors", "NetworkAddress", "Redaction", "Store", "Entities", "Ports", "Lifecycle"],
  engine: ["Engine", "Worker", "Billing"]
}
/** Files that move and change their name (old path under src → new path under src). */
const renamed = {
  "internal/engine.ts": "kernel/ServiceSupport.ts",
  "internal/paging.ts": "kernel/Paging.ts",
  "internal/machines.ts": "kernel/internal/machines.ts",
  "internal/moneyMachines.ts": "kernel/internal/moneyMachines.ts",
  "internal/webhookEntities.ts": "webhooks/WebhookEntities.ts"
}
/** Tests that check more than one concept stay at the top of test/. */
const crossCutting = new Set(["Schemas", "StatusWrites"])

const git = (...args) => execFileSync("git", args, { cwd: core, stdio: "inherit" })
const mv = (from, to) => {
  mkdirSync(dirname(join(core, to)), { recursive: true })
  git("mv", from, to)
}

if (process.argv.includes("--move")) {
  for (const [folder, names] of Object.entries(layout)) {
    for (const name of names) {
      if (existsSync(join(src, `${name}.ts`))) mv(`src/${name}.ts`, `src/${folder}/${name}.ts`)
      const test = join(core, "test", `${name}.test.ts`)
      if (existsSync(test) && !crossCutting.has(name)) mv(`test/${name}.test.ts`, `test/${folder}/${name}.test.ts`)
    }
  }
  for (const [from, to] of Object.entries(renamed)) if (existsSync(join(src, from))) mv(`src/${from}`, `src/${to}`)
}

const files = (dir) =>
  existsSync(dir)
    ? readdirSync(dir).flatMap((f) => {
        const p = join(dir, f)
        return statSync(p).isDirectory() ? (f === "node_modules" ? [] : files(p)) : p.endsWith(".ts") ? [p] : []
      })
    : []
const all = [...files(src), ...files(join(core, "test")), ...files(join(core, "scripts"))]
/** Where a module of a given name now lives (names are unique across core). */
const byName = new Map()
for (const f of all) {
  const name = basename(f, ".ts")
  if (name === "index") continue // each folder's index.ts only re-exports its folder's modules
  if (byName.has(name)) throw new Error(`two modules named ${name}: ${byName.get(name)} and ${f}`)
  byName.set(name, f)
}
for (const [from, to] of Object.entries(renamed)) byName.set(basename(from, ".ts"), join(src, to))

let changed = 0
for (const file of all) {
  const text = readFileSync(file, "utf8")
  const next = text.replace(/((?:from|import)\s*\(?\s*")(\.{1,2}\/[^"]+?)\.js"/g, (whole, head, spec) => {
    if (existsSync(resolve(dirname(file), `${spec}.ts`))) return whole
    const target = byName.get(basename(spec))
    if (target === undefined) {
      console.warn(`${relative(core, file)}: no module named ${basename(spec)}; left as it is`)
      return whole
    }
    let path = relative(dirname(file), target).replace(/\.ts$/, "")
    if (!path.startsWith(".")) path = `./${path}`
    return `${head}${path}.js"`
  })
  if (next !== text) {
    writeFileSync(file, next)
    changed++
  }
}
console.log(`imports rewritten in ${changed} files`)

// The subpath exports: one per namespace that index.ts publishes through the folders' index.ts
// (`export * from "./money/index.js"` → `export * as Proration from "./Proration.js"` gives
// `@recur/core/Proration`), for the sources (`source`) and the published package.
const pkgPath = join(core, "package.json")
const pkg = JSON.parse(readFileSync(pkgPath, "utf8"))
const namespacesIn = (dir, file) =>
  [...readFileSync(join(src, dir, file), "utf8").matchAll(/export \*(?: as (\w+))? from "\.\/([^"]+)\.js"/g)].flatMap(
    ([, name, path]) =>
      name === undefined
        ? namespacesIn(join(dir, dirname(path)), `${basename(path)}.ts`)
        : [[undefined, name, join(dir, path)]]
  )
const entries = namespacesIn("", "index.ts")
const exportsMap = (withSource) => {
  const map = {
    ".": { ...(withSource ? { source: "./src/index.ts" } : {}), types: "./dist/index.d.ts", import: "./dist/index.js" }
  }
  for (const [, name, path] of entries) {
    map[`./${name}`] = {
      ...(withSource ? { source: `./src/${path}.ts` } : {}),
      types: `./dist/${path}.d.ts`,
      import: `./dist/${path}.js`
    }
  }
  return map
}
pkg.exports = exportsMap(true)
pkg.publishConfig.exports = exportsMap(false)
writeFileSync(pkgPath, `${JSON.stringify(pkg, null, 2)}\n`)
console.log(`package.json: ${entries.length} subpath exports`)
