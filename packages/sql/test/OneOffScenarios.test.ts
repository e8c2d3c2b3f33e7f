import { Pg } from "@recur/sql"
import { OneOffScenarios } from "@recur/testing"
import { freshPostgres } from "./postgres.js"

OneOffScenarios.suite("PGlite", Pg.layerPglite())

const url = process.env.RECUR_TEST_DATABASE_URL
if (url) OneOffScenarios.suite("PostgreSQL", freshPostgres(url))
