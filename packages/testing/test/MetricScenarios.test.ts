import { MemoryStorage, MetricScenarios } from "../src/index.js"

MetricScenarios.suite("memory", MemoryStorage.layer)
