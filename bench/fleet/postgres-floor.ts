/**
 * The database's floor in the fleet benchmark: a bare node HTTP server, in its own process, that answers each request
 * after one single-row INSERT committed by PostgreSQL (`synchronous_commit` on: the WAL flushed), through the same
 * client library and pool size as the sidecar (`pg`, SERVICE_DATABASE_POOL_SIZE's default). It parses, signs and
 * evaluates nothing: the least a sidecar on PostgreSQL must do once per signed decision.
 */
import { DEFAULT_DATABASE } from "../../sidecar/src/storage/postgres/config.js";
import { startFloorServer, type Floor } from "../sidecar/floor.js";

const PROGRAM = `
import { createServer } from "node:http";
import pg from "pg";
const pool = new pg.Pool({ connectionString: process.argv[1], max: Number(process.argv[2]) });
pool.on("error", () => undefined);
await pool.query("CREATE TABLE IF NOT EXISTS bench_floor (id bigserial PRIMARY KEY, at bigint NOT NULL)");
const server = createServer((request, response) => {
  request.resume();
  request.on("end", async () => {
    try {
      await pool.query("INSERT INTO bench_floor (at) VALUES ($1)", [Date.now()]);
      response.writeHead(200, { "content-type": "application/json" });
      response.end("{}");
    } catch (error) {
      response.writeHead(503, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: String(error) }));
    }
  });
});
server.listen(0, "127.0.0.1", () => console.log("listening " + server.address().port));
`;

export function startPostgresFloor(databaseUrl: string): Promise<Floor> {
  return startFloorServer(PROGRAM, [databaseUrl, String(DEFAULT_DATABASE.poolSize)]);
}
