import { Pg } from "@recur/sql"
import { NotificationScenarios } from "@recur/testing"
import { freshPostgres } from "./postgres.js"

NotificationScenarios.suite("PGlite", Pg.layerPglite())

const url = process.env.RECUR_TEST_DATABASE_URL
if (url) NotificationScenarios.suite("PostgreSQL", freshPostgres(url))
