// The floor under benchmark 6: a bare Effect router on NodeHttpServer (no Recur code, tracing
// off) answering the same JSON. Run by `pnpm bench platform` as its own process.
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Layer, References } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { createServer } from "node:http"

const Routes = HttpRouter.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ status: "ok" }))
const served = HttpRouter.serve(Routes, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provide(Layer.succeed(References.TracerEnabled, false))
)
NodeRuntime.runMain(
  Layer.launch(
    served.pipe(
      Layer.provide(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: Number(process.env.PORT ?? 4200) }))
    )
  )
)
