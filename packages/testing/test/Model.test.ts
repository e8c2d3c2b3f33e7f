import { MemoryStorage, ModelScenarios } from "../src/index.js"

// `pnpm test:model` runs RECUR_MODEL_OPS (default 100,000) operations; the default run is bounded
// and fixed-seed. Both run every operation as drawn, the model's rules strict; RECUR_MODEL_AVOID
// (items of issue 29, e.g. "3,4") leaves out the operations meeting them, a debugging knob only.
const ops = Number(process.env.RECUR_MODEL_OPS ?? 600)
const seed = Number(process.env.RECUR_MODEL_SEED ?? 20261124)
const avoid = (process.env.RECUR_MODEL_AVOID ?? "")
  .split(",")
  .filter((x) => x !== "")
  .map(Number)

ModelScenarios.suite("memory", MemoryStorage.layer, { ops, seed, avoid, everyOperation: ops >= 300 })
