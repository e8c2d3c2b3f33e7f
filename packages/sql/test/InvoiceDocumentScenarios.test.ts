import { Pg } from "@recur/sql"
import { InvoiceDocumentScenarios } from "@recur/testing"
import { freshPostgres } from "./postgres.js"

InvoiceDocumentScenarios.suite("PGlite", Pg.layerPglite())

const url = process.env.RECUR_TEST_DATABASE_URL
if (url) InvoiceDocumentScenarios.suite("PostgreSQL", freshPostgres(url))
