import { Pg } from "@recur/sql"

/** Storage on a fresh schema of the test database, so runs never see each other's rows. */
export const freshPostgres = (url: string) => Pg.layerPgScratch({ url })
