/**
 * A signed bundle source (README.md, "Policies for a fleet"; docs/bundles.md, "Publishing a source" and "A remote
 * source"): the blocks publish site/, a static server on 127.0.0.1 serves it where the docs say
 * https://bundles.example.com, and the sidecar the block starts must serve `payments.transfer@stable` as 1.2.0.
 */
import { join } from "node:path";
import { expect } from "vitest";
import { withClone, type Clone } from "../clone.js";
import { approved, evaluateRequest } from "../evaluate.js";
import { sidecarPorts } from "../ports.js";
import { serveDirectory } from "../static-server.js";
import type { Scenario, Service, Substitution } from "../types.js";

const README_SOURCE = { file: "README.md", opens: "node compiler/dist/cli.js keygen --out release" };
const PUBLISH = { file: "docs/bundles.md", opens: "npx writ keygen --out release" };
const REMOTE = { file: "docs/bundles.md", opens: "export SERVICE_API_KEY=… SERVICE_DATA_DIR=/var/lib/writ" };
const API_KEY = "docs-bundle-source-key-0123456789";

/** The substitutions of a block that starts a sidecar on the source `origin` serves, its data dir under `host`. */
function hostTable(origin: string, host: string): Substitution[] {
  return [
    { from: "SERVICE_API_KEY=…", to: `SERVICE_API_KEY=${API_KEY}`, why: "the placeholder: the test's key" },
    { from: "/var/lib/writ", to: join(host, "var/lib/writ"), why: "the host's data dir, in the test's temporary directory" },
    {
      from: "https://bundles.example.com/",
      to: `${origin}/`,
      why: "the source: the test's static server on 127.0.0.1, serving the clone's site/",
    },
  ];
}

const sidecar = (port: number): Service => ({ command: "node sidecar/dist/main.js", ready: `http://127.0.0.1:${port}/health?probe=ready` });

/** The alias the index names decides, and the attestation names the version behind it (README.md, bundles.md). */
async function servesStable(what: string, clone: Clone, port: number): Promise<void> {
  const attestation = await approved(what, `http://127.0.0.1:${port}`, API_KEY, evaluateRequest(clone.dir, { policyVersion: "stable" }));
  expect(attestation.policyVersion, `${what}: the attestation names the concrete version`).toBe("1.2.0");
}

export const readmeBundleSource: Scenario = {
  title: "README.md, Policies for a fleet: publish a signed source, and a sidecar serves it",
  blocks: [README_SOURCE],
  run: () =>
    withClone(async (clone) => {
      const source = await serveDirectory("/site/", join(clone.dir, "site"));
      try {
        const ports = await sidecarPorts();
        const { where } = await clone.block(README_SOURCE, {
          substitutions: hostTable(source.origin, clone.beside("host")),
          env: ports.env,
          services: [sidecar(ports.a)],
        });
        await servesStable(where, clone, ports.a);
      } finally {
        await source.close();
      }
    }),
};

export const bundlesSource: Scenario = {
  title: "docs/bundles.md: publish a source with writ bundle, and a sidecar serves it",
  blocks: [PUBLISH, REMOTE],
  run: () =>
    withClone(async (clone) => {
      const source = await serveDirectory("/payments/", join(clone.dir, "site"));
      try {
        await clone.block(PUBLISH, { substitutions: [] });
        const ports = await sidecarPorts();
        const { where } = await clone.block(REMOTE, {
          substitutions: [
            ...hostTable(source.origin, clone.beside("host")),
            { from: "/etc/writ/release.pub", to: "release.pub", why: "the key the publishing block above wrote (pinned on the host)" },
          ],
          env: ports.env,
          services: [sidecar(ports.a)],
        });
        await servesStable(where, clone, ports.a);
      } finally {
        await source.close();
      }
    }),
};
