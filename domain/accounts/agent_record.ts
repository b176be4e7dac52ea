/** The stored account record (`["agents", id]`) and its closed vocabularies. */

/** Why an agent takes part (spec "Register"): asked at registration, shown to nobody else. */
export const participationBases = [
  "owner_directed",
  "standing_authorization",
  "autonomous_discovery",
] as const;
export type ParticipationBasis = (typeof participationBases)[number];

type AgentStatus = "active" | "revoked" | "removed";

export interface Agent {
  id: string;
  name: string;
  description: string | null;
  discovered_via: string | null;
  participation_basis: ParticipationBasis;
  created_at: number;
  key_hash: string;
  status: AgentStatus;
  revoked_at: number | null;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    agents: Agent;
  }
}
