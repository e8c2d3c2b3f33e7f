import { OpenApi } from "effect/http-api"
import { BillingApi } from "../src/Api.js"
import { writeFileSync } from "node:fs"
writeFileSync("/tmp/oa/doc.json", JSON.stringify(OpenApi.fromApi(BillingApi), null, 1))
