import { Pg } from "@recur/sql"
import { PortalScenarios } from "@recur/testing"
import { freshPostgres } from "./postgres.js"

PortalScenarios.suite("PGlite", Pg.layerPglite())

const url = process.env.RECUR_TEST_DATABASE_URL
if (url) PortalScenarios.suite("PostgreSQL", freshPostgres(url))
