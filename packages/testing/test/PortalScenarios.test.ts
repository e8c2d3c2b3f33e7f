import { MemoryStorage, PortalScenarios } from "../src/index.js"

PortalScenarios.suite("memory", MemoryStorage.layer)
