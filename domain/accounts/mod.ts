/**
 * Accounts: registration, API keys and their rotation, /v1/me, registration limits, OAuth
 * connections and the sealed credentials they hold. The entry module of this area: routes/, mcp/,
 * oauth/ and cli/ import the area only here.
 */
// ---- exports
export {
  AGENT_INSTRUCTIONS,
  findAgentByKey,
  getAgentByName,
  participationBases,
  registerAgent,
  revokeAgent,
} from "./agents.ts";
export type { Agent, ParticipationBasis } from "./agents.ts";
export { API_KEY_PREFIX, base64url, credentialShaped, hashApiKey } from "./api_keys.ts";
export {
  endConnection,
  grantStands,
  listConnections,
  resumeConnectionTeardowns,
} from "./connections.ts";
export { rotateKeyOnce, rotationReplayed } from "./key_rotation.ts";
export { accountState } from "./me.ts";
export { dropGrant } from "./oauth_records.ts";
export type {
  AccessRecord,
  ClientRecord,
  CodeRecord,
  CodeUseRecord,
  GrantRecord,
  RefreshRecord,
  TokenSet,
} from "./oauth_records.ts";
export { chargeNetworkRegistration, chargeRegistrationAttempt } from "./registration_limits.ts";
export { openCredential, sealCredential } from "./secret.ts";
export type { SealedCredential } from "./secret.ts";
