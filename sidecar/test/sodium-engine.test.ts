import { describe, expect, it } from "vitest";
import { describeEd25519Engine } from "../../runtime/test/support/ed25519-engine-contract.js";
import { loadSodiumEngine } from "../src/sodium-engine.js";

const loaded = loadSodiumEngine();

describe("libsodium engine", () => {
  it("loads on this platform (linux-x64 has a prebuilt sodium-native), so the sidecar signs with it", () => {
    expect(loaded).toMatchObject({ engine: { name: "libsodium" } });
  });
});

describeEd25519Engine("libsodium (sodium-native)", () => {
  if (loaded.engine === null) throw new Error(`sodium-native does not load: ${loaded.reason}`);
  return loaded.engine;
});
