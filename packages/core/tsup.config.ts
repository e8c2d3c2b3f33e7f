import { defineConfig } from "tsup"

export default defineConfig({
  // index.ts, the REST modules still at the top, and each concept folder's modules
  entry: ["src/*.ts", "src/*/*.ts"],
  format: ["esm"],
  dts: false,
  sourcemap: true,
  clean: true,
  target: "es2022",
  external: ["effect", "dinero.js"]
})
