/**
 * @recur/embedded — Recur for plain async code.
 *
 * @since 0.1.0
 */
export {
  type BillingClient,
  type BillingOptions,
  createBilling,
  engineOn,
  layer,
  type StorageOption
} from "./createBilling.js"
