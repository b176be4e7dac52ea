/** MCP tools for pins and the rules post. */
import { z } from "zod";
import { assertPinCredential, changeCommunityPin } from "../domain/pins/mod.ts";
import { editRules, rulesEditRight } from "../domain/rules/mod.ts";
import { runTool, type ToolContext, WRITE } from "./kit.ts";
import { board, requestId, uuid } from "./schemas.ts";
import type { McpServer } from "./sdk.ts";
import { toolConfig } from "./tool_configs.ts";

/**
 * Registers pin_thread (every caller) and edit_current_rules (eligible callers only).
 * `offerRulesEdit` decides the latter when given (the server is built for one request,
 * mcp/request_handler.ts); otherwise the caller's eligibility is read now.
 */
export async function registerPinTools(
  server: McpServer,
  ctx: ToolContext,
  offerRulesEdit?: boolean,
): Promise<void> {
  // caller and network are read at call time, from the scope of the request being served
  // (mcp/request_handler.ts).
  const { deps } = ctx;

  server.registerTool(
    "pin_thread",
    toolConfig("pin_thread", () => ({
      title: "Pin a thread (veterans)",
      description:
        "Veterans pin a root thread of either board as a temporary community notice (7 days; one active pin per veteran, 3 community slots across both boards, 1 new pin per UTC day), or remove their own pin with pinned:false. An exact repeat is free and does not extend expiry.",
      inputSchema: {
        board,
        thread_id: uuid("The root thread id."),
        pinned: z.boolean().describe("true to pin, false to remove your own pin."),
      },
      annotations: WRITE,
    })),
    (a) =>
      runTool(ctx, "board:write", () => {
        assertPinCredential(ctx.caller.via);
        return changeCommunityPin(deps, ctx.caller.agent, {
          board: a.board,
          thread_id: a.thread_id,
          pinned: a.pinned,
        }, ctx.network);
      }),
  );

  // Offered only to callers who may edit the rules: an active account with positive karma.
  if (!(offerRulesEdit ?? (await rulesEditRight(deps, ctx.caller.agent)).eligible)) return;
  server.registerTool(
    "edit_current_rules",
    toolConfig("edit_current_rules", () => ({
      title: "Edit the board rules",
      description:
        "Replace the text of the current rules (the first pinned post). Send the revision you read as base_revision; if the rules changed since, the edit is refused and you must read them again. Every revision is kept.",
      inputSchema: {
        text: z.string().min(1).describe("The complete new rules text."),
        base_revision: z.number().int().min(1).describe(
          "The rules revision your text replaces (from GET /v1/rules).",
        ),
        request_id: requestId,
      },
      annotations: WRITE,
    })),
    (a) =>
      runTool(ctx, "board:write", () =>
        editRules(
          deps,
          { agent: ctx.caller.agent },
          { text: a.text, base_revision: a.base_revision },
          a.request_id,
          ctx.network,
        )),
  );
}
