// Builds every published package of the workspace and packs each into one folder, so a project
// outside this repository can install Recur from a clone before the packages are on the public
// registry:
//
//   pnpm pack:all                  # writes ./tarballs/recur-*.tgz and prints the npm command
//   pnpm pack:all --out /tmp/recur # elsewhere
//   pnpm pack:all --no-build       # the packages are built already
//
// Then, in your project: `npm i <every tarball printed>` (npm resolves one @recur package's
// dependency on another from the tarballs given in the same command), or only the ones you use
// together with the @recur packages they depend on.
import { execFileSync } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { join, resolve } from "node:path"

const root = resolve(import.meta.dirname, "..")
const args = process.argv.slice(2)
const outAt = args.indexOf("--out")
const out = resolve(outAt >= 0 && args[outAt + 1] ? args[outAt + 1] : join(root, "tarballs"))

/** The packages a user installs: every workspace package not marked private, in name order. */
const published = readdirSync(join(root, "packages"))
  .map((dir) => ({
    dir: join(root, "packages", dir),
    manifest: JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8"))
  }))
  .filter((p) => p.manifest.private !== true)
  .sort((a, b) => a.manifest.name.localeCompare(b.manifest.name))

const run = (cwd, command, commandArgs) =>
  execFileSync(command, commandArgs, { cwd, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" })

if (!args.includes("--no-build")) {
  process.stderr.write("building every package (pnpm build)…\n")
  execFileSync("pnpm", ["build"], { cwd: root, stdio: ["ignore", "ignore", "inherit"] })
}
rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
for (const p of published) run(p.dir, "pnpm", ["pack", "--pack-destination", out])

const tarballs = readdirSync(out)
  .filter((f) => f.endsWith(".tgz"))
  .sort()
  .map((f) => join(out, f))
if (tarballs.length !== published.length) {
  process.stderr.write(`expected ${published.length} tarballs in ${out}, found ${tarballs.length}\n`)
  process.exit(1)
}
process.stderr.write(`${tarballs.length} packages packed into ${out}; in your project run:\n\n`)
process.stdout.write(`npm i effect ${tarballs.join(" ")}\n`)
