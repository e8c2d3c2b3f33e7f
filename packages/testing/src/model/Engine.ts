/**
 * The engine a model run drives: the whole engine with the sandbox gateway, static FX, the
 * merchants' own tax rates (`TaxRates.table`), settings and a webhook recorder, over a storage.
 * Used by `ModelScenarios.suite`.
 *
 * @since 0.1.0
 */
import { Engine, Ports, Secrets, Settings, type Store, TaxRates } from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { Layer } from "effect"
import * as ServicesContract from "../ServicesContract.js"
import * as WebhookRecorder from "../WebhookRecorder.js"

/** The whole engine with the sandbox gateway and the merchants' own tax rates (`TaxRates.table`). */
export const commercialEngine = <E>(storage: Layer.Layer<Store.Storage, E>) =>
  Engine.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        SandboxGateway.layer(),
        Ports.fxStatic({}),
        TaxRates.table(),
        Settings.layer(),
        WebhookRecorder.layer
      )
    ),
    Layer.provideMerge(Layer.mergeAll(storage, Secrets.layer(ServicesContract.testMasterKey)))
  )
