/**
 * Accounts: the account record, registration, API keys and their rotation, revocation (whose
 * effects on higher areas are handed in: domain/writes/revocation.ts), registration limits,
 * OAuth connections and the sealed credentials they hold, and OAuth's stored records (clients,
 * authorization requests and consent, codes, grants, tokens, their rate limits). The account
 * state of /v1/me is a read model in domain/reads. The entry module of this area: the edges
 * (routes/, mcp/, oauth/, cli/) and the other areas import it only here.
 */
// ---- exports
export { participationBases } from "./agent_record.ts";
export type { Agent } from "./agent_record.ts";
export {
  activeInCommit,
  AGENT_NAME,
  agentInstructions,
  agentNameSuggestion,
  findAgentByKey,
  getAgent,
  getAgentByName,
  registerAgent,
  revokeAgent,
  stillActive,
} from "./agents.ts";
export type { Revocation } from "./agents.ts";
export {
  agentIdOfKey,
  API_KEY_PATTERN,
  API_KEY_PREFIX,
  base64,
  base64url,
  CREDENTIAL_PATTERN,
  credentialShaped,
  fromBase64url,
  generateApiKey,
  hashApiKey,
  redactCredentials,
} from "./api_keys.ts";
export { releaseEndedClients } from "./client_releases.ts";
export {
  CONNECTION_PAGE_LIMIT,
  connectionCursor,
  type ConnectionPageParams,
  listConnections,
} from "./connection_list.ts";
export {
  endConnection,
  GRANTS_ENDED_IN_COMMIT,
  markAccountsOverCap,
  MAX_CONNECTIONS_PER_ACCOUNT,
  resumeConnectionTeardowns,
  TEARDOWN_RUN_ENTRIES,
} from "./connections.ts";
export { rotateKeyOnce, ROTATION_REPLAY_SECONDS, rotationReplayed } from "./key_rotation.ts";
export { indexAgentNameSkeletons } from "./name_index.ts";
export {
  confusableFold,
  nameSkeleton,
  SKELETON_VERSION,
  wordRunSkeletons,
} from "./name_skeleton.ts";
export {
  CLIENT_LIMITS,
  clientInformation,
  getClientEntry,
  InvalidRedirectUriError,
  redirectUriMatches,
  redirectUriProblem,
  registerClient,
} from "./oauth_clients.ts";
export {
  type AuthRequestRecord,
  consentFormToken,
  type ConsumedForm,
  consumeForm,
  openAuthRequest,
} from "./oauth_consent.ts";
export {
  type ConsentAgent,
  submitContinueForm,
  submitCreateForm,
  submitDenyForm,
  submitLinkForm,
} from "./oauth_consent_modes.ts";
export * from "./oauth_errors.ts";
export { CODE_VERIFIER_PATTERN, exchangeCode, refreshGrant } from "./oauth_grants.ts";
export {
  admitOAuthRequest,
  OAUTH_NETWORKS_COUNTED,
  OAuthRateLimited,
} from "./oauth_rate_limits.ts";
export { ROTATED_HASHES_KEPT } from "./oauth_records.ts";
export { checkAccessToken, revokeToken } from "./oauth_token_checks.ts";
export {
  ACCESS_TOKEN_PREFIX,
  API_KEY_SCOPES,
  looksLikeAccessToken,
  newNamedToken,
  newSecret,
  OAUTH_TOKEN_PATTERN,
  parseScopes,
  REFRESH_TOKEN_PREFIX,
  type Scope,
  SCOPES,
  secretHash,
  tokenNames,
  TTL,
} from "./oauth_tokens.ts";
export type { ClientRecord, GrantRecord, RefreshRecord } from "./oauth_records.ts";
export { chargeRegistrationAttempt, registerFromNetwork } from "./registration_limits.ts";
export {
  BOARD_SECRET_MIN_LENGTH,
  boardSecret,
  boardSecretProblem,
  holdsCredential,
  openCredential,
  type OperatorSecrets,
  purposeMac,
  refuseCredentialAsKey,
  refuseCredentialInContent,
  sealCredential,
  type SealedCredential,
  secretMac,
  secretValueProblem,
} from "./secret.ts";
export { registerOnce } from "./registration_replays.ts";
