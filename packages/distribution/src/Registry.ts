/**
 * A package registry for one scope, served from `npm pack` tarballs: just enough of the npm
 * registry protocol (packument + tarball) for `npm install` to resolve `@recur/*` from here
 * while every other package comes from the real registry (`@recur:registry=` in `.npmrc`).
 */
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { basename } from "node:path"

export interface Registry {
  readonly url: string
  readonly packages: ReadonlyArray<{ readonly name: string; readonly version: string; readonly tarball: string }>
  readonly close: () => Promise<void>
}

/** Serves the given tarballs (each a packed package) on 127.0.0.1 at a free port. */
export const serve = async (tarballs: ReadonlyArray<string>): Promise<Registry> => {
  const entries = tarballs.map((tarball) => {
    const manifest = JSON.parse(execFileSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" }))
    const bytes = readFileSync(tarball)
    return {
      name: manifest.name as string,
      version: manifest.version as string,
      tarball,
      file: basename(tarball),
      bytes,
      manifest,
      shasum: createHash("sha1").update(bytes).digest("hex"),
      integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`
    }
  })
  let base = ""
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? "/").split("?")[0] ?? "/")
    const tarball = entries.find((e) => path === `/-/${e.file}`)
    if (tarball) {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": tarball.bytes.length })
      res.end(tarball.bytes)
      return
    }
    const entry = entries.find((e) => path === `/${e.name}`)
    if (!entry) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}')
      return
    }
    const packument = {
      name: entry.name,
      "dist-tags": { latest: entry.version },
      versions: {
        [entry.version]: {
          ...entry.manifest,
          _id: `${entry.name}@${entry.version}`,
          dist: { tarball: `${base}/-/${entry.file}`, shasum: entry.shasum, integrity: entry.integrity }
        }
      }
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(packument))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("registry did not bind")
  base = `http://127.0.0.1:${address.port}`
  return {
    url: `${base}/`,
    packages: entries.map(({ name, version, tarball }) => ({ name, version, tarball })),
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}
