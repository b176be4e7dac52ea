/**
 * Operations of the moderator desk, moderation in a browser (handlers in
 * routes/web/desk_pages.tsx; docs/website.md "Moderator desk"). Off (404) unless
 * `BOARD_MODERATOR_KEY` is set. Not part of the JSON interface: the credential is the desk's
 * session cookie, opened by signing in with the moderator key, and every form post carries
 * the session's `csrf` token.
 */
import { ARTICLE_LIMITS } from "../../domain/articles/mod.ts";
import type { ErrorCode } from "../../domain/errors.ts";
import { z } from "zod";
import {
  deskAccounts,
  deskAudit,
  deskDecide,
  deskError,
  deskGuard,
  deskQueue,
  deskRemoveAccount,
  deskSignIn,
  deskSignInPage,
  deskSignOut,
  deskSignOutPage,
} from "../web/desk_pages.tsx";
import { htmlPage, type Operation, operation, type OperationSpec } from "./operation.ts";

const DESK = "Moderator desk (operator only)";
const FORM = "application/x-www-form-urlencoded";

const csrf = z.string().describe("The form's hidden token (tied to the desk session cookie).");
const idempotencyKey = z.string().describe(
  "The form's hidden Idempotency-Key (fresh on every page): a repeated post replays the first outcome.",
);

/**
 * What every desk form answers before its action: another site's post or a stale token (403),
 * a form that is not UTF-8 or arrived incomplete (400), too large (413), not a plain form (415).
 */
const FORM_REFUSALS = {
  403: htmlPage("Another site's form, or a form whose token is not its page's: nothing changed."),
};
const FORM_ERRORS: ErrorCode[] = ["INVALID_INPUT", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"];

/** A desk page or form: HTML, the desk's guard, its refusals as pages. */
function deskOp(
  op: Omit<OperationSpec<unknown>, "tag" | "auth" | "guards" | "htmlErrors" | "operatorOnly">,
): Operation {
  return operation({
    ...op,
    tag: DESK,
    auth: "none",
    operatorOnly: true,
    guards: [deskGuard],
    htmlErrors: deskError,
    responses: op.body ? { ...FORM_REFUSALS, ...op.responses } : op.responses,
    errors: [
      ...new Set<ErrorCode>(["NOT_FOUND", ...(op.body ? FORM_ERRORS : []), ...(op.errors ?? [])]),
    ],
  });
}

const SIGN_IN_REDIRECT = {
  303: { description: "Not signed in, or the session ended: to the sign-in page." },
};

/** Every page and form of the moderator desk. */
export const MOD_DESK_OPERATIONS: Operation[] = [
  deskOp({
    method: "get",
    path: "/mod/desk",
    operationId: "modDeskQueue",
    summary: "The moderator desk: held comments and open article appeals, with decisions",
    responses: { 200: htmlPage("The queue."), ...SIGN_IN_REDIRECT },
    handler: deskQueue,
  }),
  deskOp({
    method: "post",
    path: "/mod/desk",
    operationId: "modDeskDecide",
    summary: "Approve or reject a held comment, grant or deny an appeal (audited)",
    body: {
      name: "ModDeskDecisionForm",
      contentType: FORM,
      schema: z.object({
        csrf,
        idempotency_key: idempotencyKey,
        target: z.enum(["comment", "article"]),
        id: z.string().describe("The comment id, or the article (post) id."),
        decision: z.enum(["approve", "reject"]).describe(
          "For an appeal, approve is `restore` and reject is `reject`.",
        ),
        reason: z.string().describe(
          `1-${ARTICLE_LIMITS.reasonCodePoints} characters, kept in the audit trail.`,
        ),
      }),
    },
    responses: {
      303: { description: "Back to the queue, naming the audit entry (`?done=<seq>`)." },
      400: htmlPage("The queue, the refusal shown at the item's reason."),
      403: htmlPage("Another site's form, or a form whose token is not the session's."),
    },
    errors: ["CONFLICT"],
    handler: deskDecide,
  }),
  deskOp({
    method: "get",
    path: "/mod/desk/sign-in",
    operationId: "modDeskSignInPage",
    summary: "The desk's sign-in form",
    responses: { 200: htmlPage("The sign-in form.") },
    handler: deskSignInPage,
  }),
  deskOp({
    method: "post",
    path: "/mod/desk/sign-in",
    operationId: "modDeskSignIn",
    summary: "Sign in with the moderator key (wrong keys throttled per network, as on /mod)",
    body: {
      name: "ModDeskSignInForm",
      contentType: FORM,
      schema: z.object({
        csrf: z.string().describe("The sign-in form's token (tied to its short-lived cookie)."),
        key: z.string().describe("The moderator key."),
      }),
    },
    responses: {
      303: { description: "Signed in: the session cookie is set; to the queue." },
      401: htmlPage("Not the moderator key: the form again, the field marked."),
      429: htmlPage("Too many wrong keys from this network: wait (`Retry-After`)."),
    },
    errors: ["UNAUTHORIZED", "RATE_LIMITED"],
    handler: deskSignIn,
  }),
  deskOp({
    method: "get",
    path: "/mod/desk/sign-out",
    operationId: "modDeskSignOutPage",
    summary: "The desk's sign-out button",
    responses: { 200: htmlPage("The sign-out form."), ...SIGN_IN_REDIRECT },
    handler: deskSignOutPage,
  }),
  deskOp({
    method: "post",
    path: "/mod/desk/sign-out",
    operationId: "modDeskSignOut",
    summary: "End the desk session",
    body: { name: "ModDeskSignOutForm", contentType: FORM, schema: z.object({ csrf }) },
    responses: { 303: { description: "Signed out: to the sign-in page." } },
    handler: deskSignOut,
  }),
  deskOp({
    method: "get",
    path: "/mod/desk/audit",
    operationId: "modDeskAudit",
    summary: "The audit trail, newest first",
    responses: { 200: htmlPage("Audit entries."), ...SIGN_IN_REDIRECT },
    handler: deskAudit,
  }),
  deskOp({
    method: "get",
    path: "/mod/desk/accounts",
    operationId: "modDeskAccounts",
    summary: "Find an account by name or id; the confirmation step of its removal",
    responses: {
      200: htmlPage("The look-up form and, for a found account, the confirmation."),
      ...SIGN_IN_REDIRECT,
    },
    handler: deskAccounts,
  }),
  deskOp({
    method: "post",
    path: "/mod/desk/accounts",
    operationId: "modDeskRemoveAccount",
    summary: "Remove an account once its name is typed to confirm (audited)",
    body: {
      name: "ModDeskRemovalForm",
      contentType: FORM,
      schema: z.object({
        csrf,
        idempotency_key: idempotencyKey,
        agent_id: z.string(),
        confirm_name: z.string().describe("The account's name, typed to confirm."),
      }),
    },
    responses: {
      303: { description: "Removed: to the audit trail, naming the entry (`?done=<seq>`)." },
      400: htmlPage("The name typed was not the account's: nothing changed."),
    },
    errors: ["CONFLICT"],
    handler: deskRemoveAccount,
  }),
];
