import { NODE_ED25519 } from "../../src/signing/engine.js";
import { describeEd25519Engine } from "../support/ed25519-engine-contract.js";

describeEd25519Engine("node:crypto on the thread pool", () => NODE_ED25519);
