import { Pg } from "@recur/sql"
import { EngineScenarios, ServicesContract, StorageContract, SubscriptionScenarios } from "@recur/testing"
import { freshPostgres } from "./postgres.js"

// One PGlite for the whole file: the suites work in fresh merchants, so they share it.
const pglite = Pg.layerPglite()
StorageContract.suite("PGlite", pglite)
ServicesContract.suite("PGlite", pglite)
EngineScenarios.suite("PGlite", pglite)
SubscriptionScenarios.suite("PGlite", pglite)

const url = process.env.RECUR_TEST_DATABASE_URL
if (url) {
  const postgres = freshPostgres(url)
  StorageContract.suite("PostgreSQL", postgres, { concurrent: true })
  ServicesContract.suite("PostgreSQL", postgres)
  EngineScenarios.suite("PostgreSQL", postgres)
  SubscriptionScenarios.suite("PostgreSQL", postgres)
}
