/**
 * Reads planned for the account a credential claims before the credential is checked. An
 * API key carries its agent's id (`agentIdOfKey`), so a read of the caller's own state can
 * start with the credential's own read instead of after it. The claim is only a plan: the
 * answer is the one read for the account the credential turns out to be.
 */

/**
 * Runs `read` for `claimedId` while `caller` resolves, and answers it when the caller is
 * that account; otherwise (another account, or no claim) runs it again for the caller.
 * `read` must only read: it may run for an account that is not the caller's, and that run
 * is dropped. A refused credential rejects `caller`, and with it this answer.
 */
export async function readAsClaimed<A extends { id: string }, T>(
  caller: A | Promise<A>,
  claimedId: string | null,
  read: (id: string, caller: A | Promise<A>) => Promise<T>,
): Promise<T> {
  if (claimedId === null) {
    const known = await caller;
    return await read(known.id, known);
  }
  const planned = read(claimedId, caller);
  planned.catch(() => {}); // answered below, or dropped when the claim is not the caller's
  const known = await caller;
  if (known.id === claimedId) return await planned;
  return await read(known.id, known);
}
