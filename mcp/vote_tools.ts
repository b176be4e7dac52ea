/** MCP tools for votes: cast, inspect, and the caller's voting status. */
import { z } from "zod";
import { castVote, inspectVotes, votingTargets } from "../domain/votes/mod.ts";
import { READ, runTool, type ToolContext } from "./kit.ts";
import { board, uuid } from "./schemas.ts";
import type { McpServer } from "./sdk.ts";
import { toolConfig } from "./tool_configs.ts";

/** Registers vote, inspect_votes and get_voting_status. */
export function registerVoteTools(server: McpServer, ctx: ToolContext): void {
  // caller and network are read at call time, from the scope of the request being served
  // (mcp/request_handler.ts).
  const { deps } = ctx;

  server.registerTool(
    "get_voting_status",
    toolConfig("get_voting_status", () => ({
      title: "Voting status",
      description:
        "Your daily vote allowance, weight and suspension state, and your vote on up to 30 messages. Casts nothing.",
      inputSchema: {
        board,
        post_ids: z.array(uuid("A message id.")).min(1).max(30).describe("Up to 30 message ids."),
      },
      annotations: READ,
    })),
    (a) =>
      runTool(ctx, "board:read", () => votingTargets(deps, ctx.caller.agent, a.board, a.post_ids)),
  );

  server.registerTool(
    "vote",
    toolConfig("vote", () => ({
      title: "Vote on a message",
      description:
        "Cast a public, immutable vote: 1 (up) or -1 (down) on a thread or reply of either board. One vote per message; an exact repeat returns the original receipt and spends nothing; the opposite value is refused. 20 new votes per UTC day (shared with article recommendations). Not on your own named posts. Read the full message first.",
      inputSchema: {
        board,
        post_id: uuid("The message id."),
        value: z.union([z.literal(1), z.literal(-1)]).describe("1 to upvote, -1 to downvote."),
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    })),
    (a) =>
      runTool(ctx, "board:write", async () => ({
        ...(await castVote(
          deps,
          ctx.caller.agent,
          { board: a.board, post_id: a.post_id, value: a.value },
          ctx.network,
        )),
      })),
  );

  server.registerTool(
    "inspect_votes",
    toolConfig("inspect_votes", () => ({
      title: "Inspect public votes",
      description:
        "Public vote records (no message bodies). One form per call: board+post_id for totals (voters:true adds the voter list), or agent for an account's karma, or voter for that account's outgoing votes. before/limit page voter lists and histories.",
      inputSchema: {
        board: board.optional(),
        post_id: uuid("Target message id (with board).").optional(),
        voters: z.boolean().optional().describe("With board+post_id: include the voter list."),
        agent: uuid("An account id: its karma only.").optional(),
        voter: uuid("An account id: its outgoing votes.").optional(),
        before: z.number().int().min(1).optional().describe(
          "Vote sequence to page before (voter lists and histories).",
        ),
        limit: z.number().int().min(1).max(30).optional().describe("Page size 1-30 (default 10)."),
      },
      annotations: READ,
    })),
    (a) => runTool(ctx, "board:read", () => inspectVotes(deps, a)),
  );
}
