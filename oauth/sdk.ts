/**
 * The MCP SDK's OAuth schemas, imported once with their real types. Its error classes are
 * in domain/accounts (oauth_errors.ts), whose OAuth records throw them.
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
