/** GET /v1/me/activity from the tests: the call and the item shape. */
import assert from "node:assert/strict";
import { getJson, type TestBoard } from "./helpers.ts";
import type { TestAgent } from "./vote_helpers.ts";

export type Item = {
  seq: number;
  type: string;
  reasons: string[];
  message: { id: string; author: string; actions: { template: string }[] } | null;
  vote: { value: number; weight: number; voter: string; voter_id: string } | null;
  pin: { kind: string; pinned_by: string | null } | null;
  standing: string[];
};

/** GET /v1/me/activity of `who` with a query string; asserts 200. */
export async function activity(board: TestBoard, who: TestAgent, query = "") {
  const r = await getJson(board, `/v1/me/activity${query}`, who.key);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as {
    items: Item[];
    next_before: number | null;
    next_after: number | null;
    newest_cursor: number | null;
    action_templates: Record<string, unknown>;
    content_is_untrusted: true;
  };
}
