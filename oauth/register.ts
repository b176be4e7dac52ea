/** `POST /oauth/register`: RFC 7591 dynamic client registration (public clients only). */
import type { Context } from "hono";
import type { AppEnv } from "../routes/env.ts";
import {
  clientInformation,
  InvalidRedirectUriError,
  registerClient,
} from "../domain/accounts/mod.ts";
import { readOAuthText } from "./http.ts";
import { callBucket } from "../routes/http.ts";
import { OAuthClientMetadataSchema } from "./sdk.ts";
import { repeatedMemberName } from "../routes/json_keys.ts";
import { InvalidClientMetadataError, InvalidRequestError } from "../domain/accounts/mod.ts";

/**
 * The body as text. A body that cannot be read (too large, compressed, not UTF-8, cut short)
 * is refused as every other bad registration is: RFC 7591 (§3.2.2) answers a registration
 * with its own codes, and `invalid_request` is none of them.
 */
async function readBody(req: Request): Promise<string> {
  try {
    return await readOAuthText(req);
  } catch (e) {
    if (e instanceof InvalidRequestError) throw new InvalidClientMetadataError(e.message);
    throw e;
  }
}

/** Registers a client: 201 with its information; `token_endpoint_auth_method` is always `none`. */
export async function handleRegister(c: Context<AppEnv>): Promise<Response> {
  const deps = c.get("deps");
  if (!/^application\/json\s*(;|$)/i.test(c.req.header("content-type") ?? "")) {
    throw new InvalidClientMetadataError(
      'Send the metadata as JSON ("Content-Type: application/json").',
    );
  }
  let body: unknown;
  const text = await readBody(c.req.raw);
  try {
    body = JSON.parse(text);
  } catch (e) {
    if (e instanceof SyntaxError) {
      throw new InvalidClientMetadataError("The request body is not valid JSON.");
    }
    throw e;
  }
  const repeated = repeatedMemberName(text);
  if (repeated !== null) {
    throw new InvalidClientMetadataError(
      `The metadata names "${repeated.slice(0, 60)}" twice; send each field once.`,
    );
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new InvalidClientMetadataError("The request body must be a JSON object.");
  }
  const parsed = OAuthClientMetadataSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.join(".") || "(body)";
    const message = `Field "${field}" is invalid: ${issue.message}.`;
    throw issue.path[0] === "redirect_uris"
      ? new InvalidRedirectUriError(message)
      : new InvalidClientMetadataError(message);
  }
  // The redirect URIs as sent: the schema trims them, but a client sends its URI as it
  // registered it, and one with whitespace around it would never match what was kept.
  const sent = (body as { redirect_uris: string[] }).redirect_uris;
  const network = callBucket(c);
  const client = await registerClient(deps, { ...parsed.data, redirect_uris: sent }, {
    network,
    crossOrigin: network !== c.get("network"),
  });
  return c.json(clientInformation(client), 201, { "Cache-Control": "no-store" });
}
