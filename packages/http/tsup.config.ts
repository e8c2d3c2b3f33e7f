import { defineConfig } from "tsup"

export default defineConfig({
  entry: ["src/index.ts", "src/Api.ts", "src/express.ts", "src/fastify.ts", "src/hono.ts", "src/node.ts"],
  format: ["esm"],
  dts: false,
  sourcemap: true,
  clean: true,
  target: "es2022",
  external: [/^effect/, /^@effect\//, /^@recur\//, "vitest", "express", "fastify", "hono"]
})
