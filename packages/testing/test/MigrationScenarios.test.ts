import { MemoryStorage, MigrationScenarios } from "../src/index.js"

MigrationScenarios.suite("memory", MemoryStorage.layer)
