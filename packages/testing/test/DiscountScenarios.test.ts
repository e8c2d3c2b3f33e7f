import { MemoryStorage, DiscountScenarios } from "../src/index.js"

DiscountScenarios.suite("memory", MemoryStorage.layer)
