import { Pg } from "@recur/sql"
import { MigrationScenarios } from "@recur/testing"
import { freshPostgres } from "./postgres.js"

MigrationScenarios.suite("PGlite", Pg.layerPglite())

const url = process.env.RECUR_TEST_DATABASE_URL
if (url) MigrationScenarios.suite("PostgreSQL", freshPostgres(url))
