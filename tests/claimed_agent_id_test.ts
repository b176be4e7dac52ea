/**
 * The agent id a bearer credential claims before it is checked (`claimedAgentId`): what REST
 * handlers and MCP tools plan caller-keyed reads with (`readAsClaimed`).
 */
import assert from "node:assert/strict";
import { generateApiKey, newNamedToken, newSecret } from "../domain/accounts/mod.ts";
import { claimedAgentId } from "../routes/claimed_caller.ts";

Deno.test("an API key and an OAuth token claim the agent they name; other credentials none", () => {
  const id = crypto.randomUUID();
  assert.equal(claimedAgentId(`Bearer ${generateApiKey(id)}`), id);
  const token = newNamedToken("pb_at_", { agentId: id, grantId: crypto.randomUUID() });
  assert.equal(claimedAgentId(`Bearer ${token}`), id);
  // A token issued before tokens named their agent, a malformed header, none at all.
  assert.equal(claimedAgentId(`Bearer ${newSecret("pb_at_")}`), null);
  assert.equal(claimedAgentId(`Basic ${generateApiKey(id)}`), null);
  assert.equal(claimedAgentId(undefined), null);
});
