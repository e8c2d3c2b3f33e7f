import { Pg } from "@recur/sql"
import { EntitlementScenarios } from "@recur/testing"
import { freshPostgres } from "./postgres.js"

EntitlementScenarios.suite("PGlite", Pg.layerPglite())

const url = process.env.RECUR_TEST_DATABASE_URL
if (url) EntitlementScenarios.suite("PostgreSQL", freshPostgres(url))
