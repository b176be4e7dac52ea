/**
 * An id that names nothing, sent where a message is asked for (docs/read_plans.md): the 404
 * looks the id up elsewhere once (the other board, the articles), in the round trip after the
 * operation's own batch, and never twice.
 */
import assert from "node:assert/strict";
import {
  agentHeaders,
  freshNetwork,
  idemKey,
  jsonInit,
  mcpRequest,
  metered,
  register,
  testBoard,
} from "./helpers.ts";
import { MOD_KEY, modRequest } from "./pin_helpers.ts";

Deno.test("a vote on an unknown id: the 404 in two round trips, REST and MCP", async () => {
  await using board = await testBoard();
  const voter = await register(board);
  const unknown = crypto.randomUUID();
  const rest = await metered(() =>
    board.request(
      "/votes",
      jsonInit("POST", { board: "named", post_id: unknown, value: 1 }, voter.key),
      freshNetwork(),
    )
  );
  const body = await rest.res.json();
  assert.equal(rest.res.status, 404, JSON.stringify(body));
  assert.equal(body.error.code, "NOT_FOUND");
  assert.equal(rest.depth, 2, "the vote's batch with the credential, then the id looked up");
  const tool = await metered(() =>
    mcpRequest(board, voter.key, "tools/call", {
      name: "vote",
      arguments: { board: "named", post_id: unknown, value: 1 },
    })
  );
  const text = await tool.res.text();
  assert.match(text, /NOT_FOUND/);
  assert.equal(tool.depth, 2, "the tool's batch with the credential, then the id looked up");
});

Deno.test("inspect_votes on an unknown id: the 404 in two round trips", async () => {
  await using board = await testBoard();
  const reader = await register(board);
  const { res, depth } = await metered(() =>
    mcpRequest(board, reader.key, "tools/call", {
      name: "inspect_votes",
      arguments: { board: "named", post_id: crypto.randomUUID() },
    })
  );
  assert.match(await res.text(), /NOT_FOUND/);
  assert.equal(depth, 2, "the message with the credential, then the id looked up");
});

Deno.test("deleting an unknown id: the 404 in three round trips", async () => {
  await using board = await testBoard();
  const author = await register(board);
  const { res, depth } = await metered(() =>
    board.request(`/v1/posts/${crypto.randomUUID()}`, {
      method: "DELETE",
      headers: agentHeaders(author.key),
    })
  );
  const body = await res.json();
  assert.equal(res.status, 404, JSON.stringify(body));
  assert.equal(body.error.details.deleted, undefined);
  assert.equal(
    depth,
    3,
    "authentication, the removal's batch with the deletion mark, then the id looked up",
  );
});

Deno.test("a moderator action refused for an unknown id: its audit record in the commit after the batch", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const unknown = crypto.randomUUID();
  // The refusal is recorded (audit record and Idempotency-Key claim) from the claim and the
  // counter the action's own batch read: one commit, no read of them again.
  const decision = await metered(() =>
    modRequest(board, "POST", `/mod/articles/${unknown}/decision`, {
      action: "restrict",
      reason: "Budget check.",
    }, idemKey())
  );
  assert.equal(decision.res.status, 404, await decision.res.text());
  assert.equal(decision.depth, 2, "the action's batch with the key's window, the commit");
  const removal = await metered(() =>
    modRequest(board, "DELETE", `/mod/posts/${unknown}?board=named`, undefined, idemKey())
  );
  const body = await removal.res.json();
  assert.equal(removal.res.status, 404, JSON.stringify(body));
  assert.equal(
    removal.depth,
    3,
    "the removal's batch with the key's window, the id looked up on the other board, the commit",
  );
  const audit = await (await modRequest(board, "GET", "/mod/audit")).json();
  assert.deepEqual(audit.items.map((r: { outcome: string }) => r.outcome), ["error", "error"]);
});
