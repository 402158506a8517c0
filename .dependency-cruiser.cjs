/**
 * The dependency direction of README.md ("What is here") and docs/runtime.md, checked on resolved imports:
 * runtime is the core and imports no other writ package; compiler, sidecar and sdk may import runtime;
 * conformance talks HTTP only. wire (the JSON bodies of both HTTP surfaces) is a leaf that imports nothing: sidecar,
 * sdk and conformance may import it; runtime does not (it keeps its own attestation types, checked against wire's
 * in sdk/test/wire-types.test.ts). Packages reach each other only through their public entry.
 * compiler may import conformance: `writ conformance` is the conformance CLI behind the one `writ` binary.
 * language-server serves the compiler over LSP; the VS Code extension (editors/vscode) bundles the language server
 * and generates its grammar from the compiler's lexicon. The playground (a web page) bundles the compiler and the runtime
 * from their portable entries.
 */
const packages = ["runtime", "wire", "compiler", "language-server", "sidecar", "sdk", "conformance", "editors/vscode", "playground"];
const allowed = {
  runtime: [],
  wire: [],
  compiler: ["runtime", "conformance"],
  "language-server": ["compiler"],
  "editors/vscode": ["language-server", "compiler"],
  playground: ["compiler", "runtime"],
  sidecar: ["runtime", "wire"],
  sdk: ["runtime", "wire"],
  // The suite talks HTTP only and imports nothing of ours: an implementation under test is judged by what it says
  // on the wire, never by writ's own code. The shared wire types are the one exception: they describe the wire.
  conformance: ["wire"],
};

module.exports = {
  forbidden: [
    ...packages.map((from) => ({
      name: `${from}-dependency-direction`,
      comment: `${from} may import only: ${allowed[from].join(", ") || "no other writ package"}`,
      severity: "error",
      from: { path: `^${from}/` },
      to: { path: `^(${packages.filter((p) => p !== from && !allowed[from].includes(p)).join("|")})/` },
    })),
    {
      name: "through-the-public-entry",
      comment: "another package is imported by its name (@writ/x), never by a path into its sources",
      severity: "error",
      from: { path: `^(${packages.join("|")})/` },
      to: {
        path: `^(${packages.join("|")})/src/`,
        pathNot: ["^$1/", "^[a-z-]+/src/index\\.ts$", "^runtime/src/lmdb\\.ts$", "^runtime/src/postgres\\.ts$"],
      },
    },
    {
      name: "no-circular",
      severity: "error",
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    combinedDependencies: true,
  },
};
