// @hey-api/openapi-ts: the fetch client, types with enums as objects (counted by the test), zod
// schemas, and an SDK validating every answer with them. (Its request validator reads header
// parameters from a `Headers` object as if it were a plain one, so it would refuse every call
// for a missing `Request-Id`: the journey validates its request bodies with the zod schemas itself.)
export default {
  input: "openapi.json",
  output: "hey",
  logs: { file: false },
  plugins: [
    "@hey-api/client-fetch",
    { name: "@hey-api/typescript", enums: "javascript" },
    "zod",
    { name: "@hey-api/sdk", validator: { request: false, response: "zod" } }
  ]
}
