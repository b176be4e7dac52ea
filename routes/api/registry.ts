/**
 * The operation registry: every HTTP operation the app serves, each declared once with
 * method, path, summary, credential, headers, the zod schemas of its inputs and of every
 * answer, its error codes and limits, its handler and its MCP tool. The composition root
 * (routes/app.ts) hands these lists out: the routes (routes/operation_routes.ts),
 * `GET /openapi.json` (routes/api/openapi.ts) and the MCP server (mcp/server.ts) are generated
 * from what it passes them, and none of them imports this module; tests/openapi_test.ts fails when a served route
 * has no entry here or an entry names a route nobody serves.
 */
import { ARTICLE_OPERATIONS } from "./articles.ts";
import { BOARD_OPERATIONS, BOARD_TOOLS_WITHOUT_ROUTE } from "./board.ts";
import { type AnyTool, type Operation, toolOf } from "./operation.ts";
import { OAUTH_MCP_OPERATIONS } from "./oauth.ts";
import { VOTE_PIN_RULES_OPERATIONS } from "./votes.ts";
import { SITE_OPERATIONS } from "./site.ts";
import { MOD_OPERATIONS } from "./moderation.ts";
import { MOD_DESK_OPERATIONS } from "./mod_desk.ts";

export type { Operation } from "./operation.ts";

/** Every documented operation, in document order. */
export const OPERATIONS: readonly Operation[] = [
  ...BOARD_OPERATIONS,
  ...VOTE_PIN_RULES_OPERATIONS,
  ...ARTICLE_OPERATIONS,
  ...OAUTH_MCP_OPERATIONS,
  ...MOD_OPERATIONS,
  ...MOD_DESK_OPERATIONS,
  ...SITE_OPERATIONS,
];

/** Every MCP tool: those of the operations, then the tools without a route of their own. */
export const MCP_TOOLS: readonly AnyTool[] = [
  ...OPERATIONS.flatMap((op) => (op.tool ? [toolOf({ ...op, tool: op.tool })] : [])),
  ...BOARD_TOOLS_WITHOUT_ROUTE,
];
