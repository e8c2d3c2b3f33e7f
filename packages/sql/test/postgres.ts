import pg from "pg"

/**
 * A URL to a fresh schema of the test database, so each run starts empty and runs never
 * see each other's rows.
 */
export const freshPostgresUrl = async (url: string): Promise<string> => {
  const schema = `recur_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query(`create schema ${schema}`)
  await client.end()
  const u = new URL(url)
  u.searchParams.set("options", `-c search_path=${schema}`)
  return u.toString()
}
