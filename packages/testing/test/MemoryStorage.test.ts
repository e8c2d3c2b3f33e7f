import { MemoryStorage, StorageContract } from "../src/index.js"

StorageContract.suite("memory", MemoryStorage.layer)
