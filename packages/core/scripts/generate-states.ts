import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Lifecycle } from "../src/index.js"

const target = fileURLToPath(new URL("../../../docs/states.md", import.meta.url))
writeFileSync(target, Lifecycle.toMarkdown())
console.log(`wrote ${target}`)
