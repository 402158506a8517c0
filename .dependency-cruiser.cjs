/**
 * The dependency direction of DESIGN.md section 2, checked on resolved imports:
 * runtime is the core and imports no other writ package; compiler, sidecar and sdk may import runtime;
 * conformance talks HTTP only. Packages reach each other only through their public entry.
 */
const packages = ["runtime", "compiler", "sidecar", "sdk", "conformance"];
const allowed = { runtime: [], compiler: ["runtime"], sidecar: ["runtime"], sdk: ["runtime"], conformance: [] };

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
      from: { path: "^(runtime|compiler|sidecar|sdk|conformance)/" },
      to: { path: "^(runtime|compiler|sidecar|sdk|conformance)/src/", pathNot: ["^$1/", "^[a-z]+/src/index\\.ts$", "^runtime/src/lmdb\\.ts$"] },
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
