import { MemoryStorage, OneOffScenarios } from "../src/index.js"

OneOffScenarios.suite("memory", MemoryStorage.layer)
