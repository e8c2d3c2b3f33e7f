import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { createBilling } from "@recur/embedded"
import { Mount } from "@recur/http"
import { execFile } from "node:child_process"
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"

// Two client generators from npm read the document a mounted API serves, and the clients they
// generate — strictly typechecked — run a merchant's first journey against it: openapi-typescript
// with openapi-fetch, and @hey-api/openapi-ts with its fetch client, SDK and zod schemas (every
// request and answer validated). Then what they generated is counted: one type per enum.

const run = promisify(execFile)
const here = import.meta.dirname
const bin = (name: string) => join(here, "../node_modules/.bin", name)
const rootBin = (name: string) => join(here, "../../../node_modules/.bin", name)

describe("clients generated from the served OpenAPI document", { timeout: 400_000 }, () => {
  let server: Server
  let billing: Awaited<ReturnType<typeof createBilling>>
  let mount: Awaited<ReturnType<typeof Mount.nodeHandler>>
  let base = ""
  let dir = ""
  let doc: any

  beforeAll(async () => {
    server = createServer()
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/billing`
    billing = await createBilling({ storage: "memory", publicUrl: base })
    mount = await Mount.nodeHandler(billing, { prefix: "/billing" })
    server.on("request", (req, res) => void mount.handle(req, res, () => res.writeHead(404).end()))
    dir = mkdtempSync(join(tmpdir(), "recur-openapi-clients-"))
    symlinkSync(join(here, "../node_modules"), join(dir, "node_modules"), "dir")
    cpSync(join(here, "../openapi-clients"), dir, { recursive: true })
    doc = await (await fetch(`${base}/openapi.json`)).json()
    writeFileSync(join(dir, "openapi.json"), JSON.stringify(doc))
  }, 180_000)

  afterAll(async () => {
    await mount?.close()
    await new Promise((resolve) => server?.close(resolve))
    await billing?.close()
    if (dir !== "") rmSync(dir, { recursive: true, force: true })
  })

  const enumComponents = () =>
    Object.values(doc.components.schemas as Record<string, { enum?: unknown }>).filter((s) => Array.isArray(s.enum))
      .length

  it("the served document names the mounted address as its server", () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: base })])
  })

  it("generates, typechecks strictly, runs the journey with both clients, and counts one type per enum", async () => {
    const sh = (file: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
      run(file, args, { cwd: dir, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 })
    await sh(bin("openapi-typescript"), ["openapi.json", "-o", "schema.d.ts"])
    await sh(bin("openapi-typescript"), ["openapi.json", "-o", "enums.ts", "--enum"])
    await sh(bin("openapi-ts"), ["-f", "openapi-ts.config.mjs", "-s"])
    const read = (file: string) => readFileSync(join(dir, file), "utf8")

    // the generated base URL is the document's server: the mounted API
    expect(read("hey/client.gen.ts")).toContain(`baseUrl: '${base}'`)

    // strict tsc over the generated code and both journeys, without skipLibCheck
    await sh(rootBin("tsc"), ["-p", "tsconfig.json"])

    const enums = enumComponents()
    expect(enums).toBeGreaterThan(20)
    const typescriptEnums = read("enums.ts").match(/^export enum /gm)?.length ?? 0
    const heyEnums = read("hey/types.gen.ts").match(/^export const \w+ = \{/gm)?.length ?? 0
    const zodEnums = read("hey/zod.gen.ts").match(/z\.enum\(/g)?.length ?? 0
    expect({ typescriptEnums, heyEnums, zodEnums }).toEqual({
      typescriptEnums: expect.any(Number),
      heyEnums: expect.any(Number),
      zodEnums: expect.any(Number)
    })
    for (const count of [typescriptEnums, heyEnums, zodEnums]) {
      expect(count).toBeGreaterThan(0)
      expect(count).toBeLessThanOrEqual(enums)
    }
    // no generated type is named after Effect's encoded side or a renamed duplicate
    const names = Object.keys(doc.components.schemas)
    expect(names.filter((n) => /Encoded$|_\d+$/.test(n))).toEqual([])
    expect(read("hey/types.gen.ts").match(/^export (?:type|const) \w*(?:Encoded|_\d+)\b/gm)).toBeNull()
    expect(read("schema.d.ts").match(/^ {8}\w*(?:Encoded|_\d+): /gm)).toBeNull()

    for (const journey of ["openapi-fetch.ts", "hey-api.ts"]) {
      const merchant = await billing.merchants.create({ name: `Client ${journey}`, currency: "USD" })
      const { stdout } = await sh(rootBin("tsx"), [journey], { RECUR_URL: base, RECUR_KEY: merchant.api_key })
      expect([journey, JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}")]).toEqual([
        journey,
        { status: "active", customer: true, price: true, notFound: "resource_not_found" }
      ])
    }
  })
})
