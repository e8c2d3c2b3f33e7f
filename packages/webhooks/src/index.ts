/**
 * @recur/webhooks — webhook delivery for Recur: the HttpClient transport, the dispatcher, and
 * the verifiers merchants use in their receivers.
 *
 * @since 0.1.0
 */
export * as HttpTransport from "./HttpTransport.js"
export * as Dispatcher from "./Dispatcher.js"
export * as Verify from "./Verify.js"
export { verifyStandardWebhook, verifyWebhook } from "./Verify.js"
