import { MemoryStorage, NotificationScenarios } from "../src/index.js"

NotificationScenarios.suite("memory", MemoryStorage.layer)
