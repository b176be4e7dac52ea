import type { Agent } from "../domain/accounts/mod.ts";
import type { Deps } from "../domain/deps.ts";

/** What Deno.serve hands Hono as `c.env` (and what tests pass to `app.request`). */
interface ConnInfo {
  remoteAddr?: { hostname: string; port?: number; transport?: string };
}

/** Auth facts about the caller, set by the auth middlewares. */
export interface Caller {
  agent: Agent;
  /** "api_key" for raw keys, "oauth" for access tokens. */
  via: "api_key" | "oauth";
  /** OAuth scopes; raw API keys hold every agent scope. */
  scopes: Set<string>;
}

export type AppEnv = {
  Bindings: ConnInfo;
  Variables: {
    deps: Deps;
    network: string;
    caller: Caller;
    /**
     * Set while the credential of a `readsWhileAuthenticating` operation is being resolved:
     * true once `caller` is set, false when the credential was refused (routes/authentication.ts
     * `callerOf`).
     */
    callerAdmitted?: Promise<boolean>;
    /** The registry's operation id of the matched route (routes/operation_routes.ts). */
    operation: string;
  };
};
