// Reads a .cursor/mcp.json with the reader in Cursor's @cursor/sdk: the function that loads
// `.cursor/mcp.json` and `~/.cursor/mcp.json` for its local agent expands `${env:NAME}` and
// `${NAME}` in every string, then parses the result with a zod schema. Both are taken from
// the package's text, between the markers below, and run with the zod the SDK depends on.
//   cursor_check.mjs SDK_DIR ZOD_DIR FILE    prints the parsed servers; exits 1 if refused
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const [sdkDir, zodDir, file] = process.argv.slice(2);
const chunk = readFileSync(path.join(sdkDir, "dist/esm/34.js"), "utf8");
const start = chunk.indexOf("const x=/\\$\\{(?:env:");
const end = chunk.indexOf("function O(e){", start);
if (start < 0 || end < 0 || !chunk.slice(end, end + 400).includes("readFile")) {
  console.error("the mcp.json reader was not found in @cursor/sdk (another version?)");
  process.exit(2);
}
const { z } = createRequire(path.join(zodDir, "package.json"))("zod");
// In the package: C(value, lookup) expands variables; j is the schema of the whole file.
const { C: expand, j: schema } = new Function("E", `${chunk.slice(start, end)};return {C,j};`)({ z });
const raw = JSON.parse(readFileSync(file, "utf8"));
const result = schema.safeParse(expand(raw, (name) => process.env[name]));
if (!result.success) {
  console.error(JSON.stringify(result.error.issues, null, 1));
  process.exit(1);
}
console.log(JSON.stringify(result.data));
