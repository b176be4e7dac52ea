/** The whole answer of `GET /v1/me/activity` and its MCP twin. */
import type { Agent } from "../accounts/mod.ts";
import { messageActionTemplates } from "../board/mod.ts";
import type { Deps } from "../deps.ts";
import type { PageParams } from "../paging.ts";
import { resolveItems } from "./items.ts";
import { scanPage } from "./log_scan.ts";

/**
 * One page of `viewer`'s activity. A poll that finds nothing after its checkpoint reads the
 * log once and nothing else; items read their messages, authors and vote state in batches.
 * The log names no account, so its first list goes out while `caller` still resolves.
 */
export async function myActivityPage(
  deps: Deps,
  caller: Agent | Promise<Agent>,
  params: PageParams,
) {
  const page = await scanPage(
    deps.kv,
    params,
    async (entries) => resolveItems(deps, await caller, entries),
  );
  const viewer = await caller;
  return {
    items: page.items,
    next_before: page.next_before,
    next_after: page.next_after,
    newest_cursor: page.newest_cursor,
    content_is_untrusted: true as const,
    action_templates: messageActionTemplates("named"),
    viewer: { agent_id: viewer.id, name: viewer.name },
  };
}
