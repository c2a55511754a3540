// Checks VS Code files with VS Code's own code, from @codingame/monaco-vscode-api (VS Code's
// source, built as ES modules):
//   vscode_check.mjs API_DIR mcp FILE        mcp.json against mcpServerSchema (ajv, from AJV_DIR)
//   vscode_check.mjs API_DIR agent FILE      prints the `tools` of an .agent.md file, one a line
// Exits 1 when the file does not pass.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const [apiDir, kind, file] = process.argv.slice(2);
const src = (p) => path.join(apiDir, "vscode/src/vs", p);
const text = readFileSync(file, "utf8");

if (kind === "mcp") {
  const { mcpServerSchema } = await import(src("workbench/contrib/mcp/common/mcpConfiguration.js"));
  const require = createRequire(path.join(process.env.AJV_DIR, "package.json"));
  const Ajv = require("ajv");
  // VS Code's schemas carry editor keywords (markdownDescription, patternErrorMessage...).
  const ajv = new Ajv({ strict: false, allErrors: true });
  const { id, ...schema } = mcpServerSchema;
  const validate = ajv.compile(schema);
  if (!validate(JSON.parse(text))) {
    console.error(JSON.stringify(validate.errors, null, 1));
    process.exit(1);
  }
  console.log("valid");
} else if (kind === "agent") {
  const { PromptFileParser } = await import(
    src("workbench/contrib/chat/common/promptSyntax/promptFileParser.js")
  );
  const { URI } = await import(src("base/common/uri.js"));
  const parsed = new PromptFileParser().parse(URI.file(path.resolve(file)), text);
  const tools = parsed.header?.tools;
  if (!Array.isArray(tools)) {
    console.error("no tools list in the file's header");
    process.exit(1);
  }
  for (const tool of tools) console.log(tool);
} else {
  console.error(`unknown kind ${kind}`);
  process.exit(2);
}
