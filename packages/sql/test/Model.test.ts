import { Pg } from "@recur/sql"
import { ModelScenarios } from "@recur/testing"
import { freshPostgres } from "./postgres.js"

// Small in the default run; `pnpm test:model` runs 100,000 operations (RECUR_MODEL_OPS).
const ops = Number(process.env.RECUR_MODEL_OPS ?? 300)
const seed = Number(process.env.RECUR_MODEL_SEED ?? 20261124)

ModelScenarios.suite("PGlite", Pg.layerPglite(), { ops, seed })

const url = process.env.RECUR_TEST_DATABASE_URL
if (url) ModelScenarios.suite("PostgreSQL", freshPostgres(url), { ops, seed: seed + 1 })
