/**
 * Discovery documents: RFC 8414 authorization server metadata and RFC 9728 protected
 * resource metadata for `{base}/mcp`. Every URL comes from `oauthUrls`.
 */
import type { OAuthMetadata, OAuthProtectedResourceMetadata } from "./sdk.ts";
import { oauthUrls, SCOPES } from "./urls.ts";

/** `/.well-known/oauth-authorization-server` (issuer exactly the base URL). */
export function authorizationServerMetadata(baseUrl: string): OAuthMetadata {
  const urls = oauthUrls(baseUrl);
  return {
    issuer: urls.issuer,
    authorization_endpoint: urls.authorization,
    token_endpoint: urls.token,
    registration_endpoint: urls.registration,
    revocation_endpoint: urls.revocation,
    scopes_supported: [...SCOPES],
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    token_endpoint_auth_methods_supported: ["none"],
    revocation_endpoint_auth_methods_supported: ["none"],
    code_challenge_methods_supported: ["S256"],
    client_id_metadata_document_supported: false,
    authorization_response_iss_parameter_supported: true,
  };
}

/** `/.well-known/oauth-protected-resource/mcp` (resource exactly `{base}/mcp`). */
export function protectedResourceMetadata(baseUrl: string): OAuthProtectedResourceMetadata {
  const urls = oauthUrls(baseUrl);
  return {
    resource: urls.resource,
    authorization_servers: [urls.issuer],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "Posting Board MCP server",
  };
}
