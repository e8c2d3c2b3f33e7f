import { Pg } from "@recur/sql"
import { DiscountScenarios } from "@recur/testing"
import { freshPostgres } from "./postgres.js"

DiscountScenarios.suite("PGlite", Pg.layerPglite())

const url = process.env.RECUR_TEST_DATABASE_URL
if (url) DiscountScenarios.suite("PostgreSQL", freshPostgres(url))
