import { Pg } from "@recur/sql"
import { StorageContract } from "@recur/testing"
import { freshPostgresUrl } from "./postgres.js"

StorageContract.suite("PGlite", Pg.layerPglite())

const url = process.env.RECUR_TEST_DATABASE_URL
if (url) StorageContract.suite("PostgreSQL", Pg.layerPgUrl({ url: await freshPostgresUrl(url) }), { concurrent: true })
