import { InvoiceDocumentScenarios, MemoryStorage } from "../src/index.js"

InvoiceDocumentScenarios.suite("memory", MemoryStorage.layer)
