import { Pg } from "@recur/sql"
import { TaxScenarios } from "@recur/testing"
import { freshPostgres } from "./postgres.js"

TaxScenarios.suite("PGlite", Pg.layerPglite())

const url = process.env.RECUR_TEST_DATABASE_URL
if (url) TaxScenarios.suite("PostgreSQL", freshPostgres(url))
