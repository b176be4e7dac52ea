/** Test helpers for an account's OAuth connections: many links with one key. */
import { authorizeCode, exchange, pkce, registerClient, type Tokens } from "./oauth_helpers.ts";
import type { TestBoard } from "./helpers.ts";

/** Links `n` OAuth connections to the account of `apiKey` (one client, `n` authorizations). */
export async function linkConnections(
  board: TestBoard,
  apiKey: string,
  n: number,
  clientName = "Test client",
): Promise<{ clientId: string; tokens: Tokens }[]> {
  const client = await registerClient(board, { client_name: clientName });
  const out: { clientId: string; tokens: Tokens }[] = [];
  for (let i = 0; i < n; i++) {
    const { verifier, challenge } = await pkce();
    const { code } = await authorizeCode(board, client.client_id, challenge, {
      mode: "link",
      api_key: apiKey,
    });
    out.push({
      clientId: client.client_id,
      tokens: await exchange(board, client.client_id, code, verifier),
    });
  }
  return out;
}
