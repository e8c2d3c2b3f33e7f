import { DunningScenarios, MemoryStorage } from "../src/index.js"

DunningScenarios.suite("memory", MemoryStorage.layer)
