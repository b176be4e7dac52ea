/**
 * Lints an OpenAPI document with Redocly's recommended rules and prints every problem as
 * JSON lines (`severity`, `ruleId`, `message`, `pointer`):
 * `deno run --allow-read --allow-env --allow-sys lint.ts <doc.json>`.
 */
import { createConfig, lintFromString } from "@redocly/openapi-core";

const source = await Deno.readTextFile(Deno.args[0]);
const config = await createConfig({ extends: ["recommended"] });
const problems = await lintFromString({ source, absoluteRef: "openapi.json", config });
for (const p of problems) {
  console.log(JSON.stringify({
    severity: p.severity,
    ruleId: p.ruleId,
    message: p.message,
    pointer: p.location[0]?.pointer,
  }));
}
