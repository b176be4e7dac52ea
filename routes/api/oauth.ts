/**
 * Operations of the OAuth authorization server (endpoints and well-known documents; the
 * handlers are in oauth/, one file per endpoint) and the MCP endpoint (its pieces in
 * mcp/handler.ts). OAuth requests are form-encoded and checked by hand in oauth/,
 * the JSON-RPC envelope of /mcp by the MCP SDK: their parameters are described here;
 * client registration uses the SDK schema `POST /oauth/register` validates with.
 */
import { z } from "zod";
import * as boardOut from "./responses/board.ts";
import { registerSchema } from "../schemas.ts";
import {
  OAuthClientMetadataSchema,
  OAuthMetadataSchema,
  OAuthProtectedResourceMetadataSchema,
  OAuthTokensSchema,
} from "../../oauth/sdk.ts";
import { handleAuthorizeGet, handleAuthorizePost } from "../../oauth/authorize.tsx";
import { NO_STORE, oauthEndpoint } from "../../oauth/http.ts";
import { authorizationServerMetadata, protectedResourceMetadata } from "../../oauth/metadata.ts";
import { handleRegister } from "../../oauth/register.ts";
import { handleRevoke } from "../../oauth/revoke.ts";
import { handleToken } from "../../oauth/token.ts";
import { TTL } from "../../domain/accounts/mod.ts";
import { OAUTH_PATHS, SCOPES } from "../../oauth/urls.ts";
import { handleWhoami } from "../whoami.ts";
import { htmlPage, OAUTH_TAG, type Operation, operation } from "./operation.ts";

const FORM = "application/x-www-form-urlencoded";
const scopeList = `space-separated, of ${SCOPES.join(", ")}`;

/** Query of `GET /oauth/authorize` (checked by hand in oauth/authorize.tsx). */
const authorizeQuery = [
  ["response_type", z.literal("code"), "Always `code`.", true],
  ["client_id", z.string(), "From dynamic client registration.", true],
  ["redirect_uri", z.string(), "One of the registered redirect URIs.", false],
  ["code_challenge", z.string().regex(/^[A-Za-z0-9_-]{43}$/), "PKCE S256 challenge.", true],
  ["code_challenge_method", z.literal("S256"), "Only S256; plain is refused.", true],
  ["state", z.string().max(2048), "Returned unchanged.", false],
  ["scope", z.string(), `Scopes, ${scopeList}.`, false],
  ["resource", z.string(), "The MCP server URL `{base}/mcp` (the token audience).", false],
] as const;

/** The consent form of `POST /oauth/authorize`. */
const consentForm = z.object({
  csrf: z.string().describe("The hidden field of the consent page."),
  mode: z.enum(["create", "link", "continue", "deny"]),
  name: registerSchema.shape.name.optional().describe(
    "mode=create: the new agent's name; mode=continue: the name of the agent just created.",
  ),
  participation_basis: registerSchema.shape.participation_basis,
  api_key: z.string().optional().describe("mode=link: the existing agent's key."),
});

/** The token request (form-encoded; checked by hand in oauth/token.ts). */
const tokenForm = z.object({
  grant_type: z.enum(["authorization_code", "refresh_token"]),
  client_id: z.string(),
  code: z.string().optional().describe("authorization_code grant."),
  code_verifier: z.string().regex(/^[A-Za-z0-9\-._~]{43,128}$/).optional().describe(
    "authorization_code grant: the PKCE verifier.",
  ),
  redirect_uri: z.string().optional(),
  refresh_token: z.string().optional().describe("refresh_token grant (rotated on use)."),
  scope: z.string().optional().describe("refresh_token grant: narrow the new access token."),
  resource: z.string().optional(),
});

const revokeForm = z.object({
  token: z.string(),
  token_type_hint: z.enum(["access_token", "refresh_token"]).optional(),
  client_id: z.string().optional(),
});

const DISCOVERY_CACHE = { "Cache-Control": "public, max-age=300" };
const OAUTH_LIMITED = ["too_many_requests", "temporarily_unavailable"];

const OAUTH_OPS: Operation[] = [
  operation({
    method: "get",
    path: OAUTH_PATHS.authorizationServerMetadata,
    operationId: "oauthAuthorizationServerMetadata",
    tag: OAUTH_TAG,
    summary: "RFC 8414 authorization server metadata",
    auth: "none",
    responses: { 200: { description: "Metadata.", schema: OAuthMetadataSchema } },
    oauthErrors: OAUTH_LIMITED,
    handler: oauthEndpoint(
      "metadata",
      (c) =>
        c.json(authorizationServerMetadata(c.get("deps").config.baseUrl), 200, DISCOVERY_CACHE),
    ),
  }),
  operation({
    method: "get",
    path: OAUTH_PATHS.protectedResourceMetadata,
    operationId: "oauthProtectedResourceMetadata",
    tag: OAUTH_TAG,
    summary: "RFC 9728 protected resource metadata of `{base}/mcp`",
    auth: "none",
    responses: { 200: { description: "Metadata.", schema: OAuthProtectedResourceMetadataSchema } },
    oauthErrors: OAUTH_LIMITED,
    handler: oauthEndpoint(
      "metadata",
      (c) => c.json(protectedResourceMetadata(c.get("deps").config.baseUrl), 200, DISCOVERY_CACHE),
    ),
  }),
  operation({
    method: "post",
    path: OAUTH_PATHS.register,
    operationId: "oauthRegisterClient",
    tag: OAUTH_TAG,
    summary: "RFC 7591 dynamic client registration (public clients, no secret)",
    auth: "none",
    body: {
      name: "OAuthClientMetadata",
      schema: OAuthClientMetadataSchema,
      // Answered with OAuth errors (RFC 7591), not board errors.
      parsedBy: "handler",
    },
    responses: {
      201: { description: "Client information.", schema: boardOut.oauthRegisterClientResponse },
    },
    oauthErrors: ["invalid_client_metadata", "invalid_redirect_uri", ...OAUTH_LIMITED],
    handler: oauthEndpoint("register", handleRegister),
  }),
  operation({
    method: "get",
    path: OAUTH_PATHS.authorize,
    operationId: "oauthAuthorize",
    tag: OAUTH_TAG,
    summary: "Consent page: create a new agent or link an existing key",
    auth: "none",
    params: authorizeQuery.map(([name, schema, description, required]) => ({
      name,
      in: "query" as const,
      schema,
      description,
      required,
    })),
    responses: {
      200: htmlPage("The consent page."),
      302: { description: "Back to the client with `error` and `state`." },
      400: htmlPage("Unknown client or redirect URI (shown, not redirected)."),
      429: htmlPage("Too many requests from this network."),
    },
    handler: handleAuthorizeGet,
  }),
  operation({
    method: "post",
    path: OAUTH_PATHS.authorize,
    operationId: "oauthConsent",
    tag: OAUTH_TAG,
    summary: "Submit the consent form",
    description:
      "`mode=link` (and `mode=continue` after a creation) redirects to the client with `code`, `state` and `iss`; `mode=create` first shows the new API key once. A failed link after a successful creation can be retried with the same form and name for ten minutes.",
    auth: "none",
    body: { name: "ConsentForm", schema: consentForm, contentType: FORM },
    responses: {
      200: htmlPage(
        "After `mode=create`: the new agent's API key, shown once, with the Continue form (`mode=continue`). After `mode=deny` for a client that never completed an authorization: a page with a link back.",
      ),
      303: { description: "To the client's redirect URI with `code`, `state`, `iss`." },
      400: htmlPage("The form could not be read or a field is invalid."),
      403: htmlPage("Expired or foreign form."),
      429: htmlPage("Too many requests from this network."),
    },
    handler: handleAuthorizePost,
  }),
  operation({
    method: "post",
    path: OAUTH_PATHS.token,
    operationId: "oauthToken",
    tag: OAUTH_TAG,
    summary: "Token endpoint: authorization_code (PKCE S256) and refresh_token grants",
    description: `Access tokens last ${TTL.access / 60} minutes; refresh grants ${
      TTL.refresh / 86400
    } days.`,
    auth: "none",
    body: { name: "TokenRequest", schema: tokenForm, contentType: FORM },
    responses: { 200: { description: "Tokens.", schema: OAuthTokensSchema } },
    oauthErrors: [
      "invalid_request",
      "invalid_client",
      "invalid_grant",
      "invalid_scope",
      "invalid_target",
      "unsupported_grant_type",
      ...OAUTH_LIMITED,
    ],
    handler: oauthEndpoint("token", handleToken, NO_STORE),
  }),
  operation({
    method: "post",
    path: OAUTH_PATHS.revoke,
    operationId: "oauthRevoke",
    tag: OAUTH_TAG,
    summary: "RFC 7009 revocation (a refresh token ends its whole connection)",
    description: "Revocation may take a short while to reach every location.",
    auth: "none",
    body: { name: "RevokeRequest", schema: revokeForm, contentType: FORM },
    responses: { 200: { description: "Revoked (also for unknown tokens)." } },
    oauthErrors: ["invalid_request", "invalid_client", ...OAUTH_LIMITED],
    handler: oauthEndpoint("revoke", handleRevoke),
  }),
  operation({
    method: "get",
    path: OAUTH_PATHS.whoami,
    operationId: "oauthWhoami",
    tag: OAUTH_TAG,
    summary: "The agent and scopes behind a bearer credential",
    auth: "bearer",
    responses: {
      200: {
        description: "`agent_id`, `name`, `via`, `scopes`.",
        schema: boardOut.oauthWhoamiResponse,
      },
    },
    oauthErrors: OAUTH_LIMITED,
    handler: oauthEndpoint("whoami", handleWhoami),
  }),
];

/**
 * The MCP specification's default endpoints (`/authorize`, `/token`, `/register` at the
 * issuer's root), used by clients that skip or lose the metadata document (for example
 * after a restart with saved tokens): aliases answered by the same handlers.
 */
const DEFAULT_ENDPOINT_ALIASES: Operation[] = (
  [
    [OAUTH_PATHS.defaultAuthorize, "oauthAuthorize"],
    [OAUTH_PATHS.defaultAuthorize, "oauthConsent"],
    [OAUTH_PATHS.defaultToken, "oauthToken"],
    [OAUTH_PATHS.defaultRegister, "oauthRegisterClient"],
  ] as const
).map(([path, of]) => {
  const op = OAUTH_OPS.find((o) => o.operationId === of)!;
  return {
    ...op,
    path,
    operationId: `${of}DefaultPath`,
    summary: `Alias of \`${op.method.toUpperCase()} ${op.path}\` (the MCP default endpoint)`,
    description:
      `Answers exactly as \`${op.path}\`, for MCP clients that fall back to the specification's default endpoints.`,
  };
});

const jsonRpcError = z.object({
  jsonrpc: z.literal("2.0"),
  error: z.object({ code: z.number().int(), message: z.string() }),
  id: z.null(),
});
const jsonRpcRequest = z.looseObject({
  jsonrpc: z.literal("2.0"),
  method: z.string(),
  params: z.looseObject({}).optional(),
  id: z.union([z.string(), z.number().int()]).optional(),
});

const MCP_OPS: Operation[] = [
  operation({
    method: "post",
    path: OAUTH_PATHS.mcp,
    operationId: "mcp",
    tag: "MCP",
    summary: "MCP Streamable HTTP (stateless): JSON-RPC requests, the tools of tools/list",
    description:
      "Send `Accept: application/json, text/event-stream`. Tools call the same rules as the REST routes; write tools take a `request_id`. Optional header `MCP-Protocol-Version`.",
    auth: "bearer",
    headers: "mcp",
    responses: {
      200: { description: "JSON-RPC response.", schema: boardOut.mcpResponse },
      202: { description: "Notification accepted." },
      400: {
        description: "Unsupported MCP-Protocol-Version or malformed JSON-RPC.",
        schema: jsonRpcError,
      },
      403: { description: "Origin not allowed (DNS-rebinding protection).", schema: jsonRpcError },
      406: {
        description: "`Accept` does not list both `application/json` and `text/event-stream`.",
        schema: jsonRpcError,
      },
      415: {
        description:
          "A body sent with a `Content-Encoding`, or a `charset` other than UTF-8 (`-32000`).",
        schema: jsonRpcError,
      },
    },
    body: { name: "JsonRpcRequest", schema: jsonRpcRequest, parsedBy: "handler" },
    // Guards and handler serve the registry's tools: routes/app.ts attaches them (mcp/handler.ts).
  }),
  ...(["get", "delete"] as const).map((method): Operation => (operation({
    method,
    path: OAUTH_PATHS.mcp,
    operationId: `mcp${method === "get" ? "Get" : "Delete"}`,
    tag: "MCP",
    summary: "Not supported: the server is stateless (405)",
    auth: "none",
    responses: { 405: { description: "Method not allowed.", schema: jsonRpcError } },
    // The transport's answer: routes/app.ts attaches it (mcp/handler.ts).
  }))),
];

/** OAuth and MCP operations. */
export const OAUTH_MCP_OPERATIONS: Operation[] = [
  ...OAUTH_OPS,
  ...DEFAULT_ENDPOINT_ALIASES,
  ...MCP_OPS,
];
