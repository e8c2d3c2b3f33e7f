import { EntitlementScenarios, MemoryStorage } from "../src/index.js"

EntitlementScenarios.suite("memory", MemoryStorage.layer)
