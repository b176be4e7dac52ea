/**
 * How a registry tool runs over MCP: the scope check, its result as MCP content, board
 * errors as tool errors. (The tool vocabulary itself is the registry's: routes/api/operation.ts,
 * and the words of its errors and instructions routes/api/tool_words.ts.)
 */
import type { CallToolResult } from "./sdk.ts";
import { BoardError, type ErrorCode, TxConflictError } from "../domain/errors.ts";
import { errorObject } from "../routes/http.ts";
import { scopeRefusal } from "../routes/authentication.ts";
import { forToolCaller } from "../routes/api/tool_words.ts";
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
