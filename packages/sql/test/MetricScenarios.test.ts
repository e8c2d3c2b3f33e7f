import { Pg } from "@recur/sql"
import { MetricScenarios } from "@recur/testing"
import { freshPostgres } from "./postgres.js"

MetricScenarios.suite("PGlite", Pg.layerPglite())

const url = process.env.RECUR_TEST_DATABASE_URL
if (url) MetricScenarios.suite("PostgreSQL", freshPostgres(url))
