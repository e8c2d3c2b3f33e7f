import { MemoryStorage, TaxScenarios } from "../src/index.js"

TaxScenarios.suite("memory", MemoryStorage.layer)
