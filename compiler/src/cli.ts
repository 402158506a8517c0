#!/usr/bin/env node
import { main } from "./cli/main.js";
import { processIo } from "./cli/io.js";

process.exitCode = await main(process.argv.slice(2), processIo(process.cwd()));
