/**
 * The hosted pages the adapter serves itself, one module each: checkout, invoice, customer
 * portal, and the sandbox's 3-D Secure challenge.
 *
 * @since 0.1.0
 */
import { Layer } from "effect"
import * as Challenge from "./challenge.js"
import * as Checkout from "./checkout.js"
import * as Invoice from "./invoice.js"
import * as Portal from "./portal.js"

/**
 * Every page's routes.
 *
 * @since 0.1.0
 */
export const routes = Layer.mergeAll(Checkout.routes, Invoice.routes, Portal.routes, Challenge.routes)
