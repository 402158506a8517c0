/**
 * The dependency direction of README.md ("What is here") and docs/runtime.md, checked on resolved imports:
 * runtime is the core; compiler, sidecar and sdk may import runtime; conformance talks HTTP only. wire (the JSON
 * bodies of both HTTP surfaces) is a leaf that imports nothing: sidecar, sdk and conformance may import it; runtime
 * imports its constants (`@writ/wire/constants`: the payload types, the provenance version, the policy id rule, the
 * spec's error messages) and, with `import type` only, its types (`@writ/wire/types`: the attestations, the evidence,
 * the answers), each declared there once; never its schemas, so it loads no TypeBox. Packages reach each other only
 * through their public entries.
 * compiler may import conformance: `writ conformance` is the conformance CLI behind the one `writ` binary.
 * language-server serves the compiler over LSP; the VS Code extension (editors/vscode) bundles the language server
 * and generates its grammar from the compiler's lexicon. The playground (a web page) bundles the compiler and the runtime
 * from their portable entries.
 */
const packages = ["runtime", "wire", "compiler", "language-server", "sidecar", "sdk", "conformance", "editors/vscode", "playground"];
const allowed = {
  // Only wire's constants and types entries (the rules `runtime-imports-only-wire-constants-and-types` below).
  runtime: ["wire"],
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

/**
 * The sidecar's layers, top to bottom (docs/sidecar.md, "Structure"): a file imports only its own layer and those below
 * it, and the two surfaces import nothing of each other. A new folder or top-level file of sidecar/src is placed in a
 * layer here before anything imports it (the rule `sidecar-layer-unplaced`).
 */
const sidecarLayers = [
  ["entry", "main\\.ts|index\\.ts"],
  ["process", "sidecar\\.ts|openapi-documents\\.ts"],
  ["surfaces", "surface-a/|surface-b/"],
  ["documents", "openapi/"],
  ["metrics", "metrics\\.ts"],
  ["context", "context\\.ts"],
  ["settings", "config\\.ts"],
  ["services", "storage/|bundles/|keys\\.ts|signing/|processes/"],
  ["http", "http/"],
  ["records", "audit/|trust-records/"],
  ["observability", "observability/"],
  ["ground", "env\\.ts|sodium-engine\\.ts|types/"],
].map(([name, paths]) => ({ name, path: `^sidecar/src/(${paths})` }));
/**
 * A storage engine's driver is imported only in its folder (docs/storage-engines.md): everything that knows LMDB is in
 * sidecar/src/storage/lmdb/, everything that knows PostgreSQL in sidecar/src/storage/postgres/. The runtime's LMDB
 * replay store (`@writ/runtime/lmdb`, for embedded authorizers) reaches the sidecar through the LMDB folder only. One
 * line per driver: its name, its engine's folder, and the modules an import of it resolves to.
 */
const engineDrivers = [
  ["lmdb", "lmdb", "(^|/)node_modules/lmdb/|^runtime/src/lmdb\\.ts$"],
  ["pg", "postgres", "(^|/)node_modules/pg/"],
];

const above = (index) => sidecarLayers.slice(0, index).map((layer) => layer.path);
const sidecarLayerRules = sidecarLayers.slice(1).map((layer, i) => ({
  name: `sidecar-layer-${layer.name}`,
  comment: `sidecar/src: the ${layer.name} layer imports nothing of a layer above it (docs/sidecar.md, "Structure")`,
  severity: "error",
  from: { path: layer.path },
  to: { path: above(i + 1) },
}));

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
      name: "runtime-imports-only-wire-constants-and-types",
      comment: "runtime imports nothing of wire but its constants and its types (@writ/wire/constants, /types), which load no TypeBox",
      severity: "error",
      from: { path: "^runtime/" },
      to: { path: "^wire/", pathNot: "^wire/src/(constants|types)\\.ts$" },
    },
    {
      name: "runtime-imports-wire-types-as-types",
      comment: "runtime imports @writ/wire/types with `import type` only: nothing of it runs in the runtime",
      severity: "error",
      from: { path: "^runtime/" },
      to: { path: "^wire/src/types\\.ts$", dependencyTypesNot: ["type-only"] },
    },
    ...engineDrivers.map(([driver, engine, resolved]) => ({
      name: `${driver}-only-in-storage-${engine}`,
      comment: `the sidecar imports ${driver} only in sidecar/src/storage/${engine}/`,
      severity: "error",
      from: { path: "^sidecar/src/", pathNot: `^sidecar/src/storage/${engine}/` },
      to: { path: resolved },
    })),
    {
      name: "no-pg-in-runtime",
      comment: "the runtime knows no database server: fleet stores live in the sidecar's engine folders",
      severity: "error",
      from: { path: "^runtime/" },
      to: { path: "(^|/)node_modules/pg/" },
    },
    {
      name: "through-the-public-entry",
      comment: "another package is imported by its name (@writ/x), never by a path into its sources",
      severity: "error",
      from: { path: `^(${packages.join("|")})/` },
      to: {
        path: `^(${packages.join("|")})/src/`,
        pathNot: [
          "^$1/",
          "^[a-z-]+/src/index\\.ts$",
          "^runtime/src/lmdb\\.ts$",
          "^runtime/src/replay-store\\.ts$",
          "^runtime/src/testing\\.ts$",
          "^wire/src/constants\\.ts$",
          "^wire/src/types\\.ts$",
        ],
      },
    },
    ...sidecarLayerRules,
    {
      name: "sidecar-surfaces-apart",
      comment: "Surface A and Surface B import nothing of each other: what both use is in a layer below them",
      severity: "error",
      from: { path: "^sidecar/src/surface-(a|b)/" },
      to: { path: "^sidecar/src/surface-(a|b)/", pathNot: "^sidecar/src/surface-$1/" },
    },
    {
      name: "sidecar-layer-unplaced",
      comment: "every folder and top-level file of sidecar/src that is imported is in a layer of sidecarLayers",
      severity: "error",
      from: { path: "^sidecar/src/" },
      to: { path: "^sidecar/src/", pathNot: sidecarLayers.map((layer) => layer.path) },
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
