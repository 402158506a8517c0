/**
 * The `curl` that `npm start` prints (scripts/lib/first-decision.ts): it names the key the sidecar uses without
 * printing it, and its paths work from where the user typed `npm start`.
 */
import { describe, expect, it } from "vitest";
import { firstDecisionCurl } from "../../scripts/lib/first-decision.js";

const root = "/home/me/writ";
const curl = (env: Record<string, string>, cwd = root) => firstDecisionCurl({ url: "http://127.0.0.1:8080", root, cwd, env });
const BODY = "-H 'content-type: application/json' -d @examples/evaluate-request.json";

describe("the first decision's curl", () => {
  it("reads the development key from the default data dir", () => {
    expect(curl({})).toBe(`curl -s http://127.0.0.1:8080/evaluate -H "authorization: Bearer $(cat .writ/data/api-key)" ${BODY}`);
  });

  it("reads it from SERVICE_DATA_DIR, relative to the repository or absolute", () => {
    expect(curl({ SERVICE_DATA_DIR: "tmp/data" })).toContain("$(cat tmp/data/api-key)");
    expect(curl({ SERVICE_DATA_DIR: "/var/lib/writ" })).toContain("$(cat ../../../var/lib/writ/api-key)");
  });

  it("names the variable or the file of a key set in the environment, never its value", () => {
    expect(curl({ SERVICE_API_KEY: "secret-0123456789abcdefghij" })).toContain('-H "authorization: Bearer $SERVICE_API_KEY"');
    expect(curl({ SERVICE_DECIDE_KEY: "secret-0123456789abcdefghij", SERVICE_READ_KEY: "other" })).toContain("Bearer $SERVICE_DECIDE_KEY");
    expect(curl({ SERVICE_API_KEY_FILE: "/run/secrets/writ key" })).toContain("$(cat '../../../run/secrets/writ key')");
    for (const env of [{ SERVICE_API_KEY: "secret-0123456789abcdefghij" }, { SERVICE_DECIDE_KEY: "secret-0123456789abcdefghij" }])
      expect(curl(env)).not.toContain("secret");
  });

  it("gives paths relative to the directory npm start was typed in", () => {
    expect(curl({}, `${root}/sidecar`)).toBe(
      `curl -s http://127.0.0.1:8080/evaluate -H "authorization: Bearer $(cat ../.writ/data/api-key)" -H 'content-type: application/json' -d @../examples/evaluate-request.json`,
    );
  });
});
