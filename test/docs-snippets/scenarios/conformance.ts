/**
 * The conformance suite against writ (docs/conformance.md, "Running it against writ"), then README.md's one-line run
 * of Surface A against a sidecar set up the same way (a fresh one: a Surface A run spends the minute's rate limit).
 */
import { withClone } from "../clone.js";
import { sidecarPorts } from "../ports.js";
import type { Scenario } from "../types.js";

const AGAINST_WRIT = { file: "docs/conformance.md", opens: "npm install && npm run build" };
const README_RUN = {
  file: "README.md",
  opens: "npx writ conformance --surface a --base-url http://127.0.0.1:8080 --api-key KEY --public-key signing.pub",
};
/** The key docs/conformance.md exports. */
const API_KEY = "conformance-key-0123456789abcdef";
const READY = (port: number): string => `http://127.0.0.1:${port}/health?probe=ready`;

/** A sidecar on the fixtures docs/conformance.md's block compiled and signed, as that block starts one. */
const FIXTURE_SIDECAR = `SERVICE_API_KEY=${API_KEY} SERVICE_POLICIES_ROOT=.writ/conformance/policies SERVICE_BUNDLE_KEYS=.writ/conformance/bundle.pub \\
SERVICE_SIGNING_KEY_FILE=.writ/conformance/signing.key SERVICE_DATA_DIR=$(mktemp -d) node sidecar/dist/main.js
`;

export const conformance: Scenario = {
  title: "docs/conformance.md and README.md: the conformance suite passes against writ's sidecar, both surfaces",
  blocks: [AGAINST_WRIT, README_RUN],
  run: () =>
    withClone(async (clone) => {
      const ports = await sidecarPorts();
      // Exit 0: every case of both surfaces passed.
      const documented = await clone.block(AGAINST_WRIT, {
        substitutions: [
          { from: "npm install && npm run build", to: ":", why: "installed and built: CI installs, and npm test builds before it tests" },
          {
            from: "http://127.0.0.1:8080",
            to: `http://127.0.0.1:${ports.a}`,
            why: "Surface A listens on a free port: 8080 may be taken on a test machine",
          },
          {
            from: "http://127.0.0.1:8081",
            to: `http://127.0.0.1:${ports.b}`,
            why: "Surface B listens on a free port: 8081 may be taken on a test machine",
          },
        ],
        env: ports.env,
        services: [{ command: "node sidecar/dist/main.js &", ready: READY(ports.a) }],
      });
      await documented.stop();

      const fresh = await sidecarPorts();
      await clone.script("a sidecar set up as docs/conformance.md says", FIXTURE_SIDECAR, {
        env: fresh.env,
        services: [{ command: "node sidecar/dist/main.js", ready: READY(fresh.a) }],
      });
      await clone.block(README_RUN, {
        substitutions: [
          {
            from: "http://127.0.0.1:8080",
            to: `http://127.0.0.1:${fresh.a}`,
            why: "Surface A listens on a free port: 8080 may be taken on a test machine",
          },
          { from: "--api-key KEY", to: `--api-key ${API_KEY}`, why: "the placeholder: the server's key" },
          {
            from: "--public-key signing.pub",
            to: "--public-key .writ/conformance/signing.pub",
            why: "the server's public key, where docs/conformance.md's block wrote it",
          },
        ],
      });
    }),
};
