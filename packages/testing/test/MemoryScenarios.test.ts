import {
  EngineScenarios,
  MemoryStorage,
  ServicesContract,
  StorageContract,
  SubscriptionScenarios
} from "../src/index.js"

StorageContract.suite("memory", MemoryStorage.layer)

ServicesContract.suite("memory", MemoryStorage.layer)

EngineScenarios.suite("memory", MemoryStorage.layer)
SubscriptionScenarios.suite("memory", MemoryStorage.layer)
