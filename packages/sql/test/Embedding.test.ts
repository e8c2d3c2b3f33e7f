import { expect, it } from "@effect/vitest"
import { Catalog, Customers, Merchants, Secrets } from "@recur/core"
import { Pg } from "@recur/sql"
import { Effect, Layer, Redacted } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

// The README's "Embed the services" snippet, run as written (with a temporary data directory).
it.live(
  "the README embedding snippet runs on a PGlite data directory",
  () =>
    Effect.gen(function* () {
      const dataDir = mkdtempSync(join(tmpdir(), "recur-readme-"))
      const Billing = Layer.mergeAll(Merchants.Merchants.layer, Customers.Customers.layer, Catalog.Catalog.layer).pipe(
        Layer.provide(Layer.merge(Pg.layerPglite({ dataDir }), Secrets.layer(Redacted.make("ab".repeat(32)))))
      )
      const program = Effect.gen(function* () {
        const { merchant } = yield* (yield* Merchants.Merchants).create({ name: "Acme", currency: "USD" })
        return yield* (yield* Customers.Customers).create(merchant.merchant_id, { payer_id: "user-42", name: "Ada" })
      })
      const customer = yield* Effect.promise(() =>
        Effect.runPromise(program.pipe(Effect.provide(Billing), Effect.scoped))
      )
      expect(customer).toMatchObject({ payer_id: "user-42", name: "Ada", type: "customer" })
      rmSync(dataDir, { recursive: true, force: true })
    }),
  60_000
)
