/**
 * A start refused because the database sessions are not what writ needs (session-check.ts): a connection pooler
 * between the sidecar and PostgreSQL dropped their settings, or shares server connections between clients
 * transaction by transaction while named prepared statements are on. Exit code 1, `code: "DATABASE_SESSIONS_UNFIT"`;
 * the message says why and what to set.
 */
import { StartRefusal } from "../../start-refusal.js";

export class UnfitSessionsError extends StartRefusal {
  readonly code = "DATABASE_SESSIONS_UNFIT" as const;

  constructor(message: string) {
    super(message);
    this.name = "UnfitSessionsError";
  }
}
