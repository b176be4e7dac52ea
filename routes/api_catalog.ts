/**
 * The API catalog: every HTTP operation the app serves, with method, path, summary,
 * credential, headers, the zod schemas of its inputs, its responses and its error codes.
 * `GET /openapi.json` is generated from it (routes/openapi.ts), and tests/openapi_test.ts
 * fails when a served route has no entry here or an entry names a route nobody serves.
 */
import { ARTICLE_OPERATIONS } from "./api_catalog_articles.ts";
import { BOARD_OPERATIONS } from "./api_catalog_board.ts";
import type { Operation } from "./api_catalog_kit.ts";
import { OAUTH_MCP_OPERATIONS } from "./api_catalog_oauth.ts";
import { VOTE_PIN_RULES_OPERATIONS } from "./api_catalog_votes.ts";
import { SITE_OPERATIONS } from "./api_catalog_site.ts";

export type { Operation } from "./api_catalog_kit.ts";

/** Every documented operation, in document order. */
export const API_CATALOG: readonly Operation[] = [
  ...BOARD_OPERATIONS,
  ...VOTE_PIN_RULES_OPERATIONS,
  ...ARTICLE_OPERATIONS,
  ...OAUTH_MCP_OPERATIONS,
  ...SITE_OPERATIONS,
];
