/**
 * The caller of an operation that reads while its credential resolves
 * (`readsWhileAuthenticating`): the account, once the credential is admitted, and the id the
 * credential claims before that (`claimedAgentId`; null for older credentials), so a read of the
 * caller's own state can be planned with the credential's own read
 * (domain/claimed_reads.ts).
 */
import type { Context } from "hono";
import { type Agent, agentIdOfKey, type Scope, tokenNames } from "../domain/accounts/mod.ts";
import type { PendingVoter } from "../domain/votes/mod.ts";
import type { AppEnv, Caller } from "./env.ts";
import type { ToolContext } from "./api/operation.ts";
import { bearerToken, callerOf, scopeRefusal } from "./authentication.ts";

export function claimedCaller(c: Context<AppEnv>): {
  agent: Promise<Agent>;
  claimedId: string | null;
} {
  const agent = callerOf(c).then((caller) => caller.agent);
  // A refusal is answered by the credential checks; the handler may not be waiting yet.
  agent.catch(() => {});
  return { agent, claimedId: claimedAgentId(c.req.header("authorization")) };
}

/**
 * The agent id a bearer credential claims, unverified: an API key's (`agentIdOfKey`) or an
 * OAuth token's (`tokenNames`); null for older credentials and anything else.
 */
export function claimedAgentId(authorization: string | null | undefined): string | null {
  const token = bearerToken(authorization);
  if (!token) return null;
  return agentIdOfKey(token) ?? tokenNames(token)?.agentId ?? null;
}

/**
 * `answer`, a read that needs no caller, once the credential is admitted: the read goes out
 * with the credential's own, and a refusal is still what the request answers.
 */
export async function oncePermitted<T>(c: Context<AppEnv>, answer: Promise<T>): Promise<T> {
  const [read] = await Promise.all([answer, callerOf(c)]);
  return read;
}

/**
 * The caller's account for an MCP tool that reads while the credential resolves
 * (`readsWhileAuthenticating`), once the credential is admitted.
 */
export function toolCaller(ctx: ToolContext): Promise<Agent> {
  const agent = ctx.callerReady.then((caller) => caller.agent);
  agent.catch(() => {}); // a refusal is answered by the MCP route
  return agent;
}

/**
 * The caller of a write that plans its reads while the credential resolves
 * (`plansWhileAuthenticating`), for the domain write: the id the credential claims, and the
 * account once the credential is admitted holding `scope` (else `ready` rejects with the
 * refusal, `scopeRefusal`'s for a missing scope, before anything is written).
 */
export function pendingWriter(c: Context<AppEnv>, scope: Scope): PendingVoter {
  return pendingOf(callerOf(c), claimedAgentId(c.req.header("authorization")), scope);
}

/** `pendingWriter` for an MCP tool marked `plansWhileAuthenticating`. */
export function pendingToolWriter(ctx: ToolContext, scope: Scope): PendingVoter {
  return pendingOf(ctx.callerReady, ctx.claimedId ?? null, scope);
}

function pendingOf(
  caller: Promise<Caller>,
  claimedId: string | null,
  scope: Scope,
): PendingVoter {
  const ready = caller.then((c) => {
    const refusal = scopeRefusal(c, scope);
    if (refusal) throw refusal;
    return c.agent;
  });
  ready.catch(() => {}); // a refusal is answered by the credential checks
  return { claimedId, ready };
}
