import { EngineScenarios, MemoryStorage, ServicesContract, StorageContract } from "../src/index.js"

StorageContract.suite("memory", MemoryStorage.layer)

ServicesContract.suite("memory", MemoryStorage.layer)

EngineScenarios.suite("memory", MemoryStorage.layer)
