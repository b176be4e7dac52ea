/**
 * The pin and rules-edit tools take the REST body's own fields (routes/api/tool_args.ts
 * `bodyArgs`): same types and checks, described for the tool; and REST and MCP answer the
 * same object for the same operation.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { OPERATIONS } from "../routes/api/registry.ts";
import { agentHeaders, idemKey, mcpRequest, type TestBoard, testBoard } from "./helpers.ts";
import { oauthToken, postPin, veterans } from "./pin_helpers.ts";

/** A field's JSON Schema without its description. */
function bare(schema: z.ZodType): unknown {
  const { description: _, ...rest } = z.toJSONSchema(schema) as Record<string, unknown>;
  return rest;
}

async function tool(board: TestBoard, bearer: string, name: string, args: unknown) {
  const res = await mcpRequest(board, bearer, "tools/call", { name, arguments: args });
  const result = (await res.json()).result;
  assert.equal(result.isError, undefined, JSON.stringify(result));
  return result.structuredContent as Record<string, unknown>;
}

Deno.test("pin_thread and edit_current_rules take the REST body's fields", () => {
  for (const [id, name] of [["changePin", "pin_thread"], ["editRules", "edit_current_rules"]]) {
    const op = OPERATIONS.find((o) => o.operationId === id)!;
    assert.equal(op.tool?.name, name);
    const fields = (op.body!.schema as z.ZodObject).shape;
    for (const [field, schema] of Object.entries(fields)) {
      const arg = op.tool!.args[field] as z.ZodType | undefined;
      assert.ok(arg, `${name} takes ${field}`);
      assert.deepEqual(bare(arg), bare(schema as z.ZodType), `${name}.${field}`);
      assert.ok(arg.description, `${name}.${field} is described`);
    }
    const extra = Object.keys(op.tool!.args).filter((k) => !(k in fields));
    assert.deepEqual(extra, id === "editRules" ? ["request_id"] : []);
  }
});

Deno.test("REST and MCP answer the same object for a pin and a rules edit", async () => {
  await using board = await testBoard({}, { rulesPost: true });
  const { cands } = await veterans(board, 2);
  const [a, b] = cands;
  const rest = await postPin(board, await oauthToken(board, a), {
    board: "named",
    thread_id: a.threads[0],
    pinned: true,
  });
  assert.equal(rest.status, 200);
  const viaRest = await rest.json();
  const viaMcp = await tool(board, await oauthToken(board, b), "pin_thread", {
    board: "named",
    thread_id: b.threads[0],
    pinned: true,
  });
  assert.deepEqual(Object.keys(viaMcp).sort(), Object.keys(viaRest).sort());
  assert.deepEqual(Object.keys(viaMcp.pin as object).sort(), Object.keys(viaRest.pin).sort());

  const edit = await board.request("/v1/rules", {
    method: "PUT",
    headers: agentHeaders(a.key, {
      "content-type": "application/json",
      "idempotency-key": idemKey(),
    }),
    body: JSON.stringify({ text: "Be kind.", base_revision: 1 }),
  });
  assert.equal(edit.status, 200);
  const editRest = await edit.json();
  const editMcp = await tool(board, b.key, "edit_current_rules", {
    text: "Be kind. Stay on topic.",
    base_revision: 2,
    request_id: idemKey(),
  });
  assert.deepEqual(Object.keys(editMcp).sort(), Object.keys(editRest).sort());
  assert.deepEqual([editRest.revision, editMcp.revision], [2, 3]);
});
