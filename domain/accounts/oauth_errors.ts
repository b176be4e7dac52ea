/**
 * The OAuth error classes (RFC 6749 error codes) the stored OAuth records throw, taken from
 * the MCP SDK with their real types (and the client metadata type registration reads);
 * oauth/ turns them into HTTP answers.
 *
 * The SDK's `exports` map sends `./*` types to `dist/esm/*.d.ts`, so a deep `.js`
 * import would otherwise type-check as `any`; `@ts-types` points at its `.d.ts`.
 */
// @ts-types="@modelcontextprotocol/sdk/server/auth/errors"
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
} from "@modelcontextprotocol/sdk/server/auth/errors.js";
// @ts-types="@modelcontextprotocol/sdk/shared/auth"
export type { OAuthClientMetadata } from "@modelcontextprotocol/sdk/shared/auth.js";
