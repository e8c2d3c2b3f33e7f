#!/usr/bin/env node
// Runs the CLI from its TypeScript sources (workspace) or its build (published).
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const built = join(here, "../dist/main.js")
if (existsSync(built)) await import(built)
else {
  const { register } = await import("tsx/esm/api")
  register()
  await import(join(here, "../src/main.ts"))
}
