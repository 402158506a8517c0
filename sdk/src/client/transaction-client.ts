/**
 * The Surface B client (spec 4.2): one method per route of the 13, each resolving to the answer body. Every error
 * answer is a `WritApiError`, except the 404 of `POST /policies/validate`, which is its documented result
 * (`{valid: false, errors}`).
 */
import type {
  BusinessTransaction,
  CreateTransactionRequest,
  ExecuteTransactionRequest,
  PolicyValidation,
  Receipt,
  ReplayResult,
  ServiceHealth,
  TransactionPage,
  TransactionQuery,
  TrustRecord,
  Verification,
  VersionInfo,
} from "@writ/wire";
import { HttpTransport, type CallOptions, type ClientOptions } from "./http.js";
import { queryOf } from "./query.js";

const segment = encodeURIComponent;

/** The 404 of `POST /policies/validate` carries a validation; a 404 without one (a wrong base URL) stays an error. */
function isValidation(status: number, body: unknown): boolean {
  return status === 404 && typeof body === "object" && body !== null && (body as { valid?: unknown }).valid === false;
}

export class TransactionClient {
  readonly #http: HttpTransport;

  constructor(options: ClientOptions) {
    this.#http = new HttpTransport(options);
  }

  /** `GET /health`. */
  health(call?: CallOptions): Promise<ServiceHealth> {
    return this.#http.get("/health", call);
  }

  /** `GET /version`. */
  version(call?: CallOptions): Promise<VersionInfo> {
    return this.#http.get("/version", call);
  }

  /** `POST /execute`: the whole pipeline in one call (execute, verify, receipt); its id is consumed once and for all. */
  execute(transaction: ExecuteTransactionRequest, call?: CallOptions): Promise<TrustRecord> {
    return this.#http.post("/execute", transaction, call);
  }

  /** `POST /transactions` (201): executes as `execute` does, with the weaker validation of spec 4.2. */
  createTransaction(transaction: CreateTransactionRequest, call?: CallOptions): Promise<TrustRecord> {
    return this.#http.post("/transactions", transaction, call);
  }

  /** `GET /transactions`, oldest first. */
  listTransactions(query: TransactionQuery = {}, call?: CallOptions): Promise<TransactionPage> {
    return this.#http.get("/transactions", call, queryOf(query));
  }

  /** `GET /transactions/:id`. */
  transaction(businessTransactionId: string, call?: CallOptions): Promise<BusinessTransaction> {
    return this.#http.get(`/transactions/${segment(businessTransactionId)}`, call);
  }

  /** `GET /trust-records/:id`. */
  trustRecord(businessTransactionId: string, call?: CallOptions): Promise<TrustRecord> {
    return this.#http.get(`/trust-records/${segment(businessTransactionId)}`, call);
  }

  /** `POST /verify`: a fresh verification, kept in the record's history. */
  verify(businessTransactionId: string, call?: CallOptions): Promise<Verification> {
    return this.#http.post("/verify", { businessTransactionId }, call);
  }

  /** `GET /verification/:id`: the latest verification, without running one. */
  latestVerification(businessTransactionId: string, call?: CallOptions): Promise<Verification> {
    return this.#http.get(`/verification/${segment(businessTransactionId)}`, call);
  }

  /** `POST /receipt`: a new receipt. */
  issueReceipt(businessTransactionId: string, call?: CallOptions): Promise<Receipt> {
    return this.#http.post("/receipt", { businessTransactionId }, call);
  }

  /** `GET /receipt/latest/:id`: the latest receipt, without issuing one. */
  latestReceipt(businessTransactionId: string, call?: CallOptions): Promise<Receipt> {
    return this.#http.get(`/receipt/latest/${segment(businessTransactionId)}`, call);
  }

  /** `POST /replay`: re-checks the record's signature only; nothing is reconstructed or re-executed. */
  replay(businessTransactionId: string, call?: CallOptions): Promise<ReplayResult> {
    return this.#http.post("/replay", { businessTransactionId }, call);
  }

  /** `POST /policies/validate`: `valid` false (the service's 404) when the policy version does not load. */
  async validatePolicy(policyId: string, policyVersion: string, call?: CallOptions): Promise<PolicyValidation> {
    return (
      await this.#http.send({ method: "POST", path: "/policies/validate", body: { policyId, policyVersion }, result: isValidation }, call)
    ).body as PolicyValidation;
  }

  /** Closes the connection pool (unless it was given in the options). */
  close(): Promise<void> {
    return this.#http.close();
  }
}
