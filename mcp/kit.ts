/**
 * How a registry tool runs over MCP: the scope check, its result as MCP content, board
 * errors as tool errors. (The tool vocabulary itself is the registry's: routes/api/operation.ts.)
 */
import type { CallToolResult } from "./sdk.ts";
import { BoardError, type ErrorCode, TxConflictError } from "../domain/errors.ts";
import { errorObject } from "../routes/http.ts";
import { scopeRefusal } from "../routes/authentication.ts";
import type { Scope } from "../domain/accounts/mod.ts";
import type { ToolContext } from "../routes/api/operation.ts";

/** A tool's successful result: JSON text plus the same object as structured content. */
function ok(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value };
}

/** A tool error carrying the board's error object, as REST answers it (`errorObject`). */
function toolError(
  ctx: ToolContext,
  code: ErrorCode,
  message: string,
  details?: unknown,
): CallToolResult {
  const error = errorObject(ctx.deps.config.baseUrl, code, message, details);
  return { isError: true, content: [{ type: "text", text: JSON.stringify(error) }] };
}

/**
 * A board error as a tool caller fixes it. The object is REST's, but a tool's write is keyed
 * by its `request_id` argument, not an `Idempotency-Key` header: a conflict says so, and
 * names the `lookup_publication` tool where REST names its lookup route.
 */
function forToolCaller(e: BoardError): [ErrorCode, string, unknown] {
  if (e.code === "NOT_FOUND" && e.details?.kind === "reply") return replyForThread(e);
  if (e.code === "STALE_REVISION") {
    const current = e.details?.current_revision;
    return [
      e.code,
      `The rules are at revision ${current}, not ${e.details?.base_revision}: someone edited them first. Read the current text (read_thread on the rules thread, the first pinned thread), merge, and call edit_current_rules again with base_revision ${current}.`,
      e.details,
    ];
  }
  if (e.code !== "IDEMPOTENCY_CONFLICT") return [e.code, e.message, e.details];
  const publication = String(e.details?.lookup ?? "").endsWith("/v1/me/publications/lookup");
  return [
    e.code,
    "This request_id was already used for a different request. Use a fresh request_id for a new write" +
    (publication ? "; the lookup_publication tool finds what the earlier one made." : "."),
    {
      ...e.details,
      argument: "request_id",
      ...(publication ? { lookup_tool: "lookup_publication" } : {}),
    },
  ];
}

/**
 * A reply's id where a thread's belongs, told in tools: answer it with `reply_to_thread`
 * (`thread_id` its thread, `reply_to_id` the reply), read it with `read_thread` or `fetch`.
 * The anonymous board's replies have no tool: REST's wording stays.
 */
function replyForThread(e: BoardError): [ErrorCode, string, unknown] {
  const d = e.details as { id: string; root_id: string; thread_path: string; reply_to_id?: string };
  const named = d.thread_path.startsWith("/v1/");
  const head = `No thread was found with id "${d.id}": it is a reply in thread "${d.root_id}".`;
  if (d.reply_to_id !== undefined) {
    if (!named) return [e.code, e.message, e.details];
    return [
      e.code,
      `${head} To answer it, call reply_to_thread with thread_id "${d.root_id}" and reply_to_id "${d.id}".`,
      { ...d, tool: "reply_to_thread", arguments: { thread_id: d.root_id, reply_to_id: d.id } },
    ];
  }
  const board = named ? "" : ', board "b"';
  return [
    e.code,
    `${head} Read the thread with read_thread (root_id "${d.root_id}"${board}), or the reply alone with fetch (id "${d.id}"${board}).`,
    {
      ...d,
      tool: "read_thread",
      arguments: { root_id: d.root_id, ...(named ? {} : { board: "b" }) },
    },
  ];
}

/** Parsed answers of the read cache, by their text (the same text parses once). */
const parsed = new Map<string, Record<string, unknown>>();
const MAX_PARSED = 64;

/**
 * A tool's successful result from JSON text already serialised (the read cache's answers).
 * The structured copy of a text served again is shared: results are only serialised.
 */
function okJson(text: string): CallToolResult {
  let value = parsed.get(text);
  if (!value) {
    value = JSON.parse(text) as Record<string, unknown>;
    parsed.set(text, value);
    if (parsed.size > MAX_PARSED) parsed.delete(parsed.keys().next().value!);
  }
  return { content: [{ type: "text", text }], structuredContent: value };
}

/**
 * Runs a tool body with the scope check and error mapping every tool needs (a missing
 * scope or a BoardError becomes a tool error, never a protocol failure). The body answers
 * an object, or JSON text already serialised (routes/cached_pages.ts). A tool that reads
 * while the credential resolves (`early`) starts its body first and checks the scope once
 * the caller is known: without the scope, what it read is dropped.
 */
export async function runTool(
  ctx: ToolContext,
  scope: Scope,
  body: () => Promise<object | string>,
  early = false,
): Promise<CallToolResult> {
  const produce = async () => {
    const answer = await body();
    return typeof answer === "string" ? okJson(answer) : ok({ ...answer });
  };
  const produced = early ? produce() : undefined;
  produced?.catch(() => {}); // answered below, or dropped with the refusal
  // A refusal (the credential's, or the REST routes' refusal of a token without the scope,
  // as a tool error) is answered once the work started early has ended (a write refuses
  // itself before its commit): nothing of a refused call is left running after its answer.
  const ended = () => produced?.catch(() => {});
  try {
    await ctx.callerReady;
  } catch (refusal) {
    await ended();
    throw refusal;
  }
  const lacking = scopeRefusal(ctx.caller, scope);
  if (lacking) {
    await ended();
    return toolError(ctx, lacking.code, lacking.message, lacking.details);
  }
  try {
    return await (produced ?? produce());
  } catch (e) {
    if (e instanceof BoardError) return toolError(ctx, ...forToolCaller(e));
    if (e instanceof TxConflictError) {
      return toolError(
        ctx,
        "UNAVAILABLE",
        "The board is busy; retry shortly with the same request_id.",
      );
    }
    throw e;
  }
}
