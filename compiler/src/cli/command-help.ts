/**
 * Per-command help (`writ compile --help`, `writ bundle pack -h`, `writ help verify`), cut from the one usage text so
 * the two never disagree. `writ conformance --help` is the suite's own: it parses its options itself.
 */

/** The command `argv` asks help for (`writ <command> [<subcommand>] ... --help`), or null when it asks none. */
export function helpRequest(argv: readonly string[]): string | null {
  const [command, ...rest] = argv;
  if (command === undefined || command === "conformance" || command.startsWith("-")) return null;
  const options = rest.includes("--") ? rest.slice(0, rest.indexOf("--")) : rest;
  if (!options.includes("--help") && !options.includes("-h")) return null;
  return command === "bundle" && rest[0] !== undefined && !rest[0].startsWith("-") ? `bundle ${rest[0]}` : command;
}

/**
 * The entries of `usage` about `topic` ("compile"; "bundle" for all its subcommands; "bundle pack"), each with its
 * options, or null when no command has that name. An entry is a line indented by two spaces and the lines indented
 * deeper that follow it.
 */
export function commandUsage(usage: string, topic: string): string | null {
  const entries: string[][] = [];
  let entry: string[] | null = null;
  for (const line of usage.split("\n")) {
    if (/^ {2}\S/.test(line)) entries.push((entry = [line]));
    else if (/^ {3,}\S/.test(line)) entry?.push(line);
    else entry = null;
  }
  const matching = entries.filter(([heading]) => {
    const name = heading!.slice(2);
    return name.startsWith(topic) && (name.length === topic.length || name[topic.length] === " ");
  });
  if (matching.length === 0) return null;
  const text = matching.map(([heading, ...options]) => [`usage: writ ${heading!.trim()}`, ...options].join("\n"));
  return `${text.join("\n")}\n\nevery command and the exit codes: \`writ help\``;
}
