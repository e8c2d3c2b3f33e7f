import { Pg } from "@recur/sql"
import { ModelScenarios } from "@recur/testing"
import { freshPostgres } from "./postgres.js"

// `pnpm test:model` runs RECUR_MODEL_OPS (default 100,000) operations with every operation as drawn
// (RECUR_MODEL_KNOWN=check); the default run is bounded, fixed-seed, and leaves out the operations
// that meet a known disagreement of the engine with issue 29's rules (see docs/reliability.md).
const ops = Number(process.env.RECUR_MODEL_OPS ?? 300)
const seed = Number(process.env.RECUR_MODEL_SEED ?? 20261124)
const known = (process.env.RECUR_MODEL_KNOWN ?? (process.env.RECUR_MODEL_OPS ? "check" : "avoid")) as "check" | "avoid"

ModelScenarios.suite("PGlite", Pg.layerPglite(), { ops, seed, known, everyOperation: ops >= 300 })

const url = process.env.RECUR_TEST_DATABASE_URL
if (url)
  ModelScenarios.suite("PostgreSQL", freshPostgres(url), { ops, seed: seed + 1, known, everyOperation: ops >= 300 })
