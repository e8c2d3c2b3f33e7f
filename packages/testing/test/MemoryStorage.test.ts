import { MemoryStorage, ServicesContract, StorageContract } from "../src/index.js"

StorageContract.suite("memory", MemoryStorage.layer)

ServicesContract.suite("memory", MemoryStorage.layer)
