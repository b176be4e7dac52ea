/**
 * Writes TypeScript types for an OpenAPI document with openapi-typescript:
 * `deno run --allow-read --allow-write --allow-env --allow-sys generate_types.ts <doc.json> <out.ts>`.
 */
import openapiTS, { astToString } from "openapi-typescript";

const [input, output] = Deno.args;
const doc = JSON.parse(await Deno.readTextFile(input));
const ast = await openapiTS(doc);
await Deno.writeTextFile(output, astToString(ast));
