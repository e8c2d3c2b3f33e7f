/**
 * `catalog/` — Products and versioned prices: entities, machines, price rules and the catalog service.
 *
 * @since 0.1.0
 */
export * as Price from "./Price.js"
export * as Product from "./Product.js"
export * as PriceRules from "./PriceRules.js"
export * as Catalog from "./Catalog.js"
