/**
 * @recur/server — the standalone server.
 *
 * @since 0.1.0
 */
export * as Config from "./Config.js"
export * as Server from "./Server.js"
