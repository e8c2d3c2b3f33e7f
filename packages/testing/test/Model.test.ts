import { MemoryStorage, ModelScenarios } from "../src/index.js"

// Small in the default run; `pnpm test:model` runs 100,000 operations (RECUR_MODEL_OPS).
const ops = Number(process.env.RECUR_MODEL_OPS ?? 600)
const seed = Number(process.env.RECUR_MODEL_SEED ?? 20261124)

ModelScenarios.suite("memory", MemoryStorage.layer, { ops, seed })
