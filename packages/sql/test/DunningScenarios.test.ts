import { Pg } from "@recur/sql"
import { DunningScenarios } from "@recur/testing"
import { freshPostgres } from "./postgres.js"

DunningScenarios.suite("PGlite", Pg.layerPglite())

const url = process.env.RECUR_TEST_DATABASE_URL
if (url) DunningScenarios.suite("PostgreSQL", freshPostgres(url))
