/**
 * The MCP SDK's OAuth schemas, imported once with their real types, and its error classes
 * (imported by domain/accounts, whose OAuth records throw them).
 *
 * The SDK's `exports` map sends `./*` types to `dist/esm/*.d.ts`, so a deep `.js`
 * import would otherwise type-check as `any`; `@ts-types` points each at its `.d.ts`.
 */
// @ts-types="@modelcontextprotocol/sdk/shared/auth"
export {
  type OAuthClientInformationFull,
  type OAuthClientMetadata,
  OAuthClientMetadataSchema,
  type OAuthMetadata,
  OAuthMetadataSchema,
  type OAuthProtectedResourceMetadata,
  OAuthProtectedResourceMetadataSchema,
  type OAuthTokens,
  OAuthTokensSchema,
} from "@modelcontextprotocol/sdk/shared/auth.js";
export {
  InsufficientScopeError,
  InvalidClientError,
  InvalidClientMetadataError,
  InvalidGrantError,
  InvalidRequestError,
  InvalidScopeError,
  InvalidTargetError,
  InvalidTokenError,
  OAuthError,
  ServerError,
  TemporarilyUnavailableError,
  TooManyRequestsError,
  UnsupportedGrantTypeError,
  UnsupportedResponseTypeError,
} from "../domain/accounts/mod.ts";
