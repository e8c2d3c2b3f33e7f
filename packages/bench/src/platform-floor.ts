// The floor under benchmark 6: a bare @effect/platform router on NodeHttpServer (no Recur code,
// tracing off) answering the same JSON. Run by `pnpm bench platform` as its own process.
import { HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { createServer } from "node:http"

const app = HttpRouter.empty.pipe(HttpRouter.get("/healthz", HttpServerResponse.json({ status: "ok" })))
const served = HttpServer.serve(app).pipe(Layer.provide(Layer.setTracerEnabled(false)))
NodeRuntime.runMain(Layer.launch(served.pipe(Layer.provide(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: Number(process.env.PORT ?? 4200) })))))
