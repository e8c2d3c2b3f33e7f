import { defineConfig } from "tsup"

export default defineConfig({
  // index.ts and each concept folder's modules (its index.ts among them)
  entry: ["src/*.ts", "src/*/*.ts"],
  format: ["esm"],
  dts: false,
  sourcemap: true,
  clean: true,
  target: "es2022",
  external: ["effect", "dinero.js"]
})
