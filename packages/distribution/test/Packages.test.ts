/**
 * Recur as its users get it. Every package is built and packed, served from a local registry for
 * the `@recur` scope (everything else comes from npm), and installed by npm into fresh projects:
 * - each README install section is run as written, its files typechecked strictly and run;
 * - one project with every package and the latest `effect` typechecks a program touching every
 *   export of every package, without `skipLibCheck`, and its runtime exports equal its types.
 */
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import ts from "typescript"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Exports from "../src/Exports.js"
import * as Readme from "../src/Readme.js"
import * as Registry from "../src/Registry.js"

const root = resolve(import.meta.dirname, "../../..")
const work = mkdtempSync(join(tmpdir(), "recur-packages-"))
const published = readdirSync(join(root, "packages"))
  .map((dir) => ({ dir: join(root, "packages", dir), manifest: readJson(join(root, "packages", dir, "package.json")) }))
  .filter((p) => p.manifest.private !== true)
let registry: Registry.Registry

function readJson(file: string): any {
  return JSON.parse(readFileSync(file, "utf8"))
}

/** The environment of a user's shell: this Node first on PATH, npm quiet. */
const userEnv = (extra: Record<string, string> = {}) => ({
  // without what pnpm sets for its own scripts (npm_config_*, npm_package_*): a user's shell has none of it
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith("npm_"))),
  PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
  npm_config_prefer_online: "true",
  npm_config_fund: "false",
  npm_config_audit: "false",
  npm_config_update_notifier: "false",
  ...extra
})

/** Runs a shell line (asynchronously: the registry answers from this process meanwhile). */
const sh = (cwd: string, line: string, env: Record<string, string> = {}) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn("sh", ["-c", line], { cwd, env: userEnv(env) })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("error", reject)
    child.on("exit", (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`\`${line}\` failed (${code}) in ${cwd}\n${stdout}\n${stderr}`))
    )
  })

/**
 * Starts a serving command and waits until `url` answers 200 (`url` may be read from the
 * command's output, for a server on port 0 that prints its port); `stop()` ends it.
 */
const startServing = async (
  cwd: string,
  line: string,
  url: string | ((output: string) => string | undefined),
  env: Record<string, string>
) => {
  const child = spawn("sh", ["-c", `exec ${line}`], { cwd, env: userEnv(env), detached: true })
  let output = ""
  child.stdout.on("data", (d) => (output += d))
  child.stderr.on("data", (d) => (output += d))
  let exited = false
  child.on("exit", () => (exited = true))
  const stop = async () => {
    try {
      process.kill(-child.pid!, "SIGTERM")
    } catch {}
    await new Promise((r) => (exited ? r(undefined) : child.on("exit", r)))
    return output
  }
  for (let i = 0; i < 600; i++) {
    if (exited) throw new Error(`\`${line}\` exited before serving:\n${output}`)
    const target = typeof url === "string" ? url : url(output)
    const ok =
      target !== undefined &&
      (await fetch(target).then(
        (r) => r.status === 200,
        () => false
      ))
    if (ok) return { output: () => output, stop }
    await new Promise((r) => setTimeout(r, 250))
  }
  await stop()
  throw new Error(`\`${line}\` never answered ${typeof url === "string" ? url : "the URL it printed"}:\n${output}`)
}

/** Runs a serving command until `url` answers 200, then stops it; returns what it printed. */
const serveUntil = async (cwd: string, line: string, url: string, env: Record<string, string>) =>
  (await startServing(cwd, line, url, env)).stop()

/** A fresh TypeScript project, as a user has it before installing Recur. */
const freshProject = (name: string) => {
  const dir = join(work, name)
  mkdirSync(dir, { recursive: true })
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify(
      { name, private: true, type: "module", devDependencies: { typescript: "~5.9.3", "@types/node": "^24.10.0" } },
      null,
      2
    )
  )
  writeFileSync(join(dir, ".npmrc"), `@recur:registry=${registry.url}\n`)
  return dir
}

const freePort = async () => {
  const { createServer } = await import("node:net")
  return new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

beforeAll(async () => {
  await sh(root, "pnpm build")
  const tarballs = join(work, "tarballs")
  mkdirSync(tarballs)
  for (const p of published) await sh(p.dir, `pnpm pack --pack-destination ${tarballs}`)
  registry = await Registry.serve(readdirSync(tarballs).map((f) => join(tarballs, f)))
})

afterAll(async () => {
  await registry?.close()
  if (!process.env.RECUR_KEEP_PACKAGES) rmSync(work, { recursive: true, force: true })
})

describe("the tarballs", () => {
  it("carry README, LICENSE, repository and engines, built files only, and no workspace pins", async () => {
    expect(registry.packages.map((p) => p.name).sort()).toEqual(published.map((p) => p.manifest.name).sort())
    for (const p of registry.packages) {
      const files = (await sh(work, `tar -tzf ${p.tarball}`)).split("\n").filter(Boolean)
      expect(files, p.name).toContain("package/README.md")
      expect(files, p.name).toContain("package/LICENSE")
      expect(
        files.filter((f) => f.startsWith("package/src/") || (f.endsWith(".ts") && !f.endsWith(".d.ts"))),
        p.name
      ).toEqual([])
      const m = JSON.parse(await sh(work, `tar -xzOf ${p.tarball} package/package.json`))
      expect(m.license, p.name).toBe("MIT")
      expect(m.repository?.url, p.name).toMatch(/^git\+https:/)
      expect(m.engines?.node, p.name).toBe(">=22.19.0")
      expect(JSON.stringify(m.exports), p.name).not.toContain('"source"')
      const deps = { ...m.dependencies, ...m.peerDependencies }
      expect(JSON.stringify(deps), p.name).not.toContain("workspace:")
      // effect and its platform packages are the host's: peers, never pinned copies
      for (const host of ["effect", "@effect/platform-node", "@effect/sql-pg"]) {
        expect(m.dependencies?.[host], `${p.name} pins ${host}`).toBeUndefined()
      }
      // nothing for tests or for running TypeScript at run time, except in the testing kit
      if (p.name !== "@recur/testing") {
        for (const dev of ["vitest", "@effect/vitest", "tsx", "@recur/testing"]) {
          expect(deps[dev], `${p.name} needs ${dev}`).toBeUndefined()
        }
      }
    }
  })
})

describe("before the public registry", () => {
  it("`npm publish --dry-run` of every tarball is clean: no warning, no correction, nothing refused", async () => {
    // a token for a registry nobody answers on: the dry run checks the package, not the login;
    // npm 11 asks that registry whether the version exists, and would retry the refused
    // connection for about a minute per package (fetch-retries 2 after 10 s and 60 s)
    const userconfig = join(work, "publish.npmrc")
    writeFileSync(userconfig, "//127.0.0.1:9/:_authToken=dry-run\n")
    for (const p of registry.packages) {
      const out = await sh(
        work,
        `npm publish --dry-run --fetch-retries=0 --userconfig ${userconfig} --registry http://127.0.0.1:9/ ${p.tarball} 2>&1`
      )
      expect(
        out.split("\n").filter((l) => /npm (warn|error|ERR)/i.test(l)),
        p.name
      ).toEqual([])
      expect(out, p.name).toContain(`+ ${p.name}@${p.version}`)
    }
  })

  it("a clone's `pnpm pack:all` writes every tarball and the npm line that installs them into a project", async () => {
    const out = join(work, "from-clone")
    const line = (await sh(root, `node scripts/pack.mjs --no-build --out ${out}`)).trim()
    expect(readdirSync(out).sort()).toEqual(
      published.map((p) => `${p.manifest.name.replace("@", "").replace("/", "-")}-${p.manifest.version}.tgz`).sort()
    )
    expect(line.split(" ").slice(0, 3)).toEqual(["npm", "i", "effect"])
    expect(
      line
        .split(" ")
        .slice(3)
        .map((t) => t.slice(out.length + 1))
    ).toEqual(readdirSync(out).sort())
    // a project that knows no registry of ours: the @recur packages resolve each other from the tarballs
    const dir = join(work, "install-from-clone")
    mkdirSync(dir)
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "from-clone", private: true, type: "module" }))
    await sh(dir, line)
    writeFileSync(
      join(dir, "run.ts"),
      [
        'import { createBilling } from "@recur/embedded"',
        'import { Money } from "@recur/core"',
        'const billing = await createBilling({ storage: "memory", payments: "sandbox" })',
        'const { merchant_id } = await billing.merchants.create({ name: "Acme", currency: "USD", frozen_time: Date.now() })',
        'console.log(merchant_id.startsWith("mch_"), Money.format(Money.make(4900n, "USD")))',
        "await billing.close()"
      ].join("\n")
    )
    expect((await sh(dir, "node run.ts")).trim()).toBe("true 49.00")
  })
})

describe("the README's install sections, as written", () => {
  const kinds = Readme.installSections(readFileSync(join(root, "README.md"), "utf8"))
  it("names a section for each kind of user", () => {
    expect(kinds.map((k) => k.title).length).toBeGreaterThanOrEqual(4)
  })
  for (const kind of kinds) {
    it(kind.title, async () => {
      const dir = freshProject(kind.title.toLowerCase().replace(/[^a-z0-9]+/g, "-"))
      for (const f of kind.files) writeFileSync(join(dir, f.name), f.text)
      const port = await freePort()
      const env = { PORT: String(port), RECUR_MASTER_KEY: "ab".repeat(32) }
      const outputs: Array<string> = []
      for (const c of kind.commands) {
        outputs.push(
          c.serves
            ? await serveUntil(dir, c.line, c.serves.replace(/:\d+\//, `:${port}/`), env)
            : await sh(dir, c.line, env)
        )
      }
      const tsFiles = kind.files.filter((f) => /\.m?ts$/.test(f.name)).map((f) => join(dir, f.name))
      expect(Exports.diagnostics(tsFiles, Exports.strictOptions())).toEqual([])
      // every example says what it did, so "ran" means something
      expect(outputs.join("")).toMatch(/\S/)
    })
  }
})

describe("every package in one project, with the latest effect", () => {
  let dir: string
  let specifiers: Array<string>
  let published_: Map<string, Array<Exports.Exported>>

  beforeAll(async () => {
    dir = freshProject("everything")
    await sh(
      dir,
      `npm i ${registry.packages.map((p) => p.name).join(" ")} effect@latest @effect/platform-node@latest ` +
        // the optional peers whose types @recur/http/fastify and @recur/http/hono name
        "@effect/sql-pg@latest @effect/vitest@latest vitest@latest fastify@latest hono@latest"
    )
    specifiers = []
    for (const p of registry.packages) {
      const exports = readJson(join(dir, "node_modules", p.name, "package.json")).exports as Record<string, unknown>
      for (const [key, target] of Object.entries(exports)) {
        if (target === null) continue
        if (key === ".") specifiers.push(p.name)
        else if (key.endsWith("/*")) {
          const dist = join(dir, "node_modules", p.name, "dist")
          for (const f of readdirSync(dist).filter((f) => /^[A-Z]\w*\.d\.ts$/.test(f))) {
            specifiers.push(`${p.name}/${f.replace(/\.d\.ts$/, "")}`)
          }
        } else specifiers.push(`${p.name}/${key.slice(2)}`)
      }
    }
    published_ = Exports.exportsOf(join(dir, "exports.ts"), specifiers, Exports.strictOptions())
  })

  it("the declarations export exactly what the sources export, each name with its meanings", () => {
    const tsconfig = ts.getParsedCommandLineOfConfigFile(
      join(root, "tsconfig.json"),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (d) => {
          throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"))
        }
      }
    )
    const sources = Exports.exportsOf(join(import.meta.dirname, "sources.ts"), specifiers, tsconfig!.options)
    const meanings = (m: Map<string, Array<Exports.Exported>>) =>
      [...m].flatMap(([s, list]) =>
        list.map((e) => `${s}:${e.path}${e.value ? " value" : ""}${e.type ? " type" : ""}/${e.typeParameters}`)
      )
    expect(meanings(published_).length).toBeGreaterThan(500)
    expect(meanings(published_)).toEqual(meanings(sources))
  })

  it("a strict program touching every export typechecks without skipLibCheck", () => {
    writeFileSync(join(dir, "touch.ts"), Exports.touchProgram(published_))
    expect(Exports.diagnostics([join(dir, "touch.ts")], Exports.strictOptions())).toEqual([])
  })

  it("every runtime export is declared, and every declared value exists at run time", async () => {
    writeFileSync(
      join(dir, "runtime.mjs"),
      `const specifiers = ${JSON.stringify(specifiers)}
const out = {}
for (const s of specifiers) {
  const values = [], modules = [""]
  const walk = (o, prefix) => {
    for (const k of Object.keys(o)) {
      const path = prefix ? prefix + "." + k : k
      values.push(path)
      if (Object.prototype.toString.call(o[k]) === "[object Module]") { modules.push(path); walk(o[k], path) }
    }
  }
  walk(await import(s), "")
  out[s] = { values, modules }
}
console.log(JSON.stringify(out))
`
    )
    const runtime = JSON.parse(await sh(dir, "node runtime.mjs")) as Record<
      string,
      { values: Array<string>; modules: Array<string> }
    >
    for (const s of specifiers) {
      const declared = (published_.get(s) ?? []).filter((e) => e.value).map((e) => e.path)
      const { values, modules } = runtime[s]!
      const parent = (p: string) => (p.includes(".") ? p.slice(0, p.lastIndexOf(".")) : "")
      expect(
        values.filter((v) => !declared.includes(v)),
        `${s}: at run time, not declared`
      ).toEqual([])
      expect(
        declared.filter((d) => modules.includes(parent(d)) && !values.includes(d)),
        `${s}: declared, missing at run time`
      ).toEqual([])
    }
  })
})

describe("framework glue from npm: @recur/http/<framework> at /billing", () => {
  // each framework from npm, in a project of its own; the app mounts Recur at /billing and sends a
  // JSON write, the hosted page's form post, a webhook signed over its exact bytes, and a write
  // whose body a middleware read first (answered 400, saying so)
  const frameworks = [
    { name: "fastify", install: "fastify" },
    { name: "express", install: "express @types/express" },
    { name: "hono", install: "hono @hono/node-server" },
    // no framework at all: @recur/http installs, typechecks and runs without its optional peers
    { name: "node", install: "" }
  ]
  for (const f of frameworks) {
    it(`framework glue: ${f.name}`, async () => {
      const dir = freshProject(`mount-${f.name}`)
      await sh(dir, `npm i @recur/http @recur/embedded @recur/core effect ${f.install}`.trim())
      for (const file of ["journey.ts", `${f.name}.ts`])
        writeFileSync(join(dir, file), readFileSync(join(import.meta.dirname, "../fixtures/mount", file)))
      const options = { ...Exports.strictOptions(), allowImportingTsExtensions: true }
      expect(Exports.diagnostics([join(dir, `${f.name}.ts`)], options)).toEqual([])
      const out = JSON.parse((await sh(dir, `node ${f.name}.ts`)).trim().split("\n").at(-1) ?? "{}")
      expect(out).toMatchObject({
        product: "success",
        paid: true,
        active: 1,
        webhook: [200, true],
        consumed: [400, "invalid_request_error", true]
      })
      if (f.name === "fastify") expect(out.echo).toEqual({ got: { a: 1 } })
      const installed = readdirSync(join(dir, "node_modules"))
      for (const peer of ["fastify", "express", "hono"])
        expect(installed.includes(peer), `${f.name} project has ${peer}`).toBe(f.install.split(" ").includes(peer))
    })
  }
})

describe("the OpenAPI document, as linters and generated clients read it", () => {
  it("Spectral (spectral:oas) finds nothing; an openapi-typescript + openapi-fetch client typechecks without casts and runs", async () => {
    const dir = freshProject("openapi-client")
    await sh(dir, "npm i @recur/server openapi-fetch && npm i -D @stoplight/spectral-cli openapi-typescript")
    // port 0: the server listens on a port the system picks and prints it
    const listening = (output: string) => /Recur listening on port (\d+)/.exec(output)?.[1]
    const server = await startServing(
      dir,
      "npx recur serve",
      (output) => {
        const port = listening(output)
        return port === undefined ? undefined : `http://127.0.0.1:${port}/healthz`
      },
      { PORT: "0", RECUR_DATA_DIR: join(dir, ".recur") }
    )
    const port = listening(server.output())
    try {
      // the server answers /healthz as soon as it listens; the demo merchant is printed a moment later
      let key: string | undefined
      for (let i = 0; i < 240 && key === undefined; i++) {
        key = /Demo API key: (sk_test_\S+)/.exec(server.output())?.[1]
        if (key === undefined) await new Promise((r) => setTimeout(r, 250))
      }
      expect(key, server.output()).toBeDefined()
      await sh(dir, `curl -sf http://127.0.0.1:${port}/openapi.json -o openapi.json`)
      writeFileSync(join(dir, ".spectral.yaml"), 'extends: ["spectral:oas"]\n')
      // every rule of spectral:oas, warnings included
      await sh(dir, "npx spectral lint openapi.json --fail-severity=hint")
      await sh(dir, "npx openapi-typescript openapi.json -o schema.d.ts")
      writeFileSync(join(dir, "client.ts"), readFileSync(join(import.meta.dirname, "../fixtures/openapi-client.ts")))
      const source = readFileSync(join(dir, "client.ts"), "utf8")
      expect(source).not.toMatch(/\bas (any|unknown|never)\b|as [A-Z]\w*\b/)
      expect(Exports.diagnostics([join(dir, "client.ts")], Exports.strictOptions())).toEqual([])
      const out = JSON.parse(
        await sh(dir, "node client.ts", { RECUR_URL: `http://127.0.0.1:${port}`, RECUR_KEY: key ?? "" })
      ) as {
        productId: string
        sessionUrl: string
        names: Array<string>
        refused: string
        invoice: { number: string; tax: string; amount: string }
        pdf: string
        hosted: number
        portal: { cancel: boolean; upcoming: string | null; page: number; german: boolean }
      }
      expect(out.productId).toMatch(/^prd_/)
      expect(out.sessionUrl).toContain("/checkout/ses_")
      expect(out.names).toContain("Pro")
      expect(out.refused).toBe("InvalidParameter")
      // the invoice of the payment: numbered, 19 % VAT inside 30.00, its page and its PDF served
      expect(out.invoice).toEqual({ number: "INV-000001", tax: "4.79", amount: "30.00" })
      expect([out.pdf, out.hosted]).toEqual(["%PDF-", 200])
      // portal settings, the upcoming invoice (30.00 with the VAT inside) and the German portal page
      expect(out.portal).toEqual({ cancel: false, upcoming: "30.00", page: 200, german: true })
    } finally {
      await server.stop()
    }
  })
})
