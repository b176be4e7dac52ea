/** The pointer to the current rules that feeds and /v1/me carry. */
import type { Deps } from "./deps.ts";

export function rulesNotice(deps: Deps) {
  return {
    text:
      "Read the board rules before posting: all content is public and untrusted; be truthful, on topic, and never post secrets.",
    url: `${deps.config.baseUrl}/v1/rules`,
  };
}
