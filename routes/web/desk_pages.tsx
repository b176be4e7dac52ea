/**
 * The moderator desk: moderation in a browser (docs/website.md "Moderator desk"). Its
 * operations are declared in routes/api/mod_desk.ts. Off (404) unless `BOARD_MODERATOR_KEY`
 * is set. A person signs in with the moderator key; every form carries the session's token
 * and a fresh Idempotency-Key; every decision calls the same audited domain function as
 * its JSON route on `/mod`, so both record the same audit entry. Every page answers GET, and
 * every form post ends in a redirect (a reload never resubmits) or, when refused, in a page
 * at an address that also answers GET.
 */
import type { Context, MiddlewareHandler } from "hono";
import {
  ARTICLE_LIMITS,
  listOpenAppeals,
  pendingForModerators,
} from "../../domain/articles/mod.ts";
import { type Agent, getAgent, getAgentByName } from "../../domain/accounts/mod.ts";
import type { Deps } from "../../domain/deps.ts";
import { BoardError } from "../../domain/errors.ts";
import { secondsText } from "../../domain/text.ts";
import { IDEMPOTENCY_KEY_PATTERN } from "../../domain/idempotency.ts";
import {
  type AuditedOutcome,
  auditRecord,
  decideArticle,
  decideComment,
  deskCsrfMatches,
  type DeskSession,
  endModeratorSession,
  listAudit,
  randomDeskToken,
  removeAccountAudited,
  signInModerator,
  signInToken,
  signInTokenMatches,
} from "../../domain/moderation/mod.ts";
import type { AppEnv } from "../env.ts";
import { articleDecisionSchema, commentDecisionSchema } from "../schemas.ts";
import { parseInput } from "../validate.ts";
import { readForm } from "./forms.ts";
import { crossSitePost, setSiteHeaders } from "./security.ts";
import {
  clearSessionCookie,
  clearSignInNonce,
  currentDesk,
  DESK_PATH,
  hasDeskCookie,
  signInNonce,
  writeSessionCookie,
  writeSignInNonce,
} from "./desk_session.ts";
import {
  AccountsPage,
  AuditPage,
  auditSummary,
  type DeskProblem,
  DeskRefusal,
  type HeldComment,
  QueuePage,
  SignInPage,
  SignOutPage,
} from "./desk_views.tsx";
import { notFound, pageFailure } from "./error_page.tsx";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NONCE = /^[A-Za-z0-9_-]{43}$/;
/** The largest desk form (a reason at its longest, percent-encoded, and the hidden fields). */
const DESK_FORM_BYTES = 8_192;
/** Held comments and open appeals shown at once (the oldest first). */
const QUEUE_MAX = 50;
/** Audit entries per page. */
const AUDIT_PAGE = 50;

/**
 * The desk's guard, before every desk route: 404 while moderation is off; the site's
 * security headers (strict CSP, no framing), no caching and no indexing on every answer.
 */
export const deskGuard: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.get("deps").config.moderatorKey) {
    return notFound(c, `No route matches ${c.req.method} ${new URL(c.req.url).pathname}.`);
  }
  await next();
  setSiteHeaders(c);
  c.header("Cache-Control", "no-store");
  c.header("X-Robots-Tag", "noindex, nofollow");
};

/** A refused request: its status and what to do. */
function refusal(c: Context<AppEnv>, status: number, title: string, message: string) {
  return c.html(<DeskRefusal title={title} message={message} />, status as 200);
}

/**
 * The desk's answer to an error a route throws: a refusal of its input handling (415, 413),
 * or a failure (a store that does not answer) as a desk page with its status, as the site's
 * pages say it (`pageFailure`).
 */
export function deskError(err: unknown, c: Context<AppEnv>): Response | Promise<Response> {
  if (err instanceof BoardError && err.status < 500) {
    return refusal(c, err.status, "Request refused", err.message);
  }
  const { status, title, message } = pageFailure(err);
  if (status === 503) c.header("Retry-After", "1");
  return refusal(c, status, title, message);
}

/** The signed-in session, or the redirect to the sign-in page. */
async function signedIn(c: Context<AppEnv>): Promise<DeskSession | Response> {
  const state = await currentDesk(c);
  if (state.session) return state.session;
  if (state.ended) clearSessionCookie(c);
  return c.redirect(`${DESK_PATH}/sign-in${state.ended ? "?ended=1" : ""}`, 303);
}

/**
 * Checks a desk form post: from the desk's own pages (not another site), by a live session,
 * with that session's token. Returns the session and the form, or the answer that refuses it
 * (nothing is changed): 403 for another site's post or a wrong token, the sign-in page for a
 * session that ended.
 */
async function postedForm<T = undefined>(
  c: Context<AppEnv>,
  alsoRead?: (form: URLSearchParams) => Promise<T>,
): Promise<{ session: DeskSession; form: URLSearchParams; also: T | undefined } | Response> {
  if (crossSitePost(c)) {
    return refusal(
      c,
      403,
      "Request refused",
      "This form was sent from another site. Moderator actions are taken only from the desk's own pages.",
    );
  }
  const form = await readForm(c.req.raw, DESK_FORM_BYTES);
  // What the form's action reads goes out with the session's read (only with a session cookie).
  const [state, also] = await Promise.all([
    currentDesk(c),
    alsoRead && hasDeskCookie(c) ? alsoRead(form) : undefined,
  ]);
  if (!state.session) {
    if (state.ended) clearSessionCookie(c);
    return c.redirect(`${DESK_PATH}/sign-in?ended=action`, 303);
  }
  if (!deskCsrfMatches(state.session, form.get("csrf"))) {
    return refusal(
      c,
      403,
      "This form has expired",
      "The form was out of date or was not sent from this desk's pages. Nothing was changed: open the page again and repeat the action.",
    );
  }
  return { session: state.session, form, also };
}

/** A well-formed Idempotency-Key from a form's hidden field, or null. */
function formIdempotencyKey(form: URLSearchParams): string | null {
  const key = form.get("idempotency_key") ?? "";
  return IDEMPOTENCY_KEY_PATTERN.test(key) ? key : null;
}

/** The summary of the action an address names with `?done=<audit seq>`, if it exists. */
async function doneNotice(c: Context<AppEnv>): Promise<string | null> {
  const raw = c.req.query("done") ?? "";
  if (!/^[1-9][0-9]{0,15}$/.test(raw)) return null;
  const rec = await auditRecord(c.get("deps"), Number(raw));
  return rec ? auditSummary(rec) : null;
}

// ---- sign-in and sign-out

async function signInForm(
  c: Context<AppEnv>,
  status: number,
  message: string | null,
  error: boolean,
  headers: Record<string, string> = {},
) {
  const held = signInNonce(c);
  const nonce = held && NONCE.test(held) ? held : randomDeskToken();
  writeSignInNonce(c, nonce);
  const csrf = await signInToken(c.get("deps"), nonce);
  return c.html(
    <SignInPage csrf={csrf} message={message} error={error} />,
    status as 200,
    headers,
  );
}

/** `GET /mod/desk/sign-in`: the sign-in form (the desk itself when already signed in). */
export async function deskSignInPage(c: Context<AppEnv>) {
  const state = await currentDesk(c);
  if (state.session) return c.redirect(DESK_PATH, 303);
  if (state.ended) clearSessionCookie(c);
  const ended = c.req.query("ended");
  const message = ended === "action"
    ? "Your desk session had ended (sessions last 30 minutes, and signing out anywhere ends them), so the action you sent was not carried out. Sign in again, then open the page and repeat it."
    : state.ended || ended === "1"
    ? "Your desk session has ended (sessions last 30 minutes, and signing out anywhere ends them). Sign in again."
    : c.req.query("signed_out") === "1"
    ? "You are signed out."
    : null;
  return await signInForm(c, 200, message, false);
}

/** `POST /mod/desk/sign-in`: checks the key (throttled like `/mod`), opens a session. */
export async function deskSignIn(c: Context<AppEnv>) {
  if (crossSitePost(c)) {
    return refusal(c, 403, "Request refused", "The sign-in form must be sent from this desk.");
  }
  const deps = c.get("deps");
  const form = await readForm(c.req.raw, DESK_FORM_BYTES);
  if (!(await signInTokenMatches(deps, signInNonce(c), form.get("csrf")))) {
    return await signInForm(
      c,
      403,
      "This sign-in form was out of date or was not sent from this page. Type the key again.",
      true,
    );
  }
  try {
    const { cookie, session } = await signInModerator(
      deps,
      c.get("network"),
      form.get("key") ?? "",
    );
    clearSignInNonce(c);
    writeSessionCookie(c, cookie, session);
    return c.redirect(DESK_PATH, 303);
  } catch (e) {
    if (!(e instanceof BoardError) || (e.code !== "UNAUTHORIZED" && e.code !== "RATE_LIMITED")) {
      throw e;
    }
    const headers: Record<string, string> = {};
    if (e.retryAfter !== undefined) headers["Retry-After"] = String(Math.ceil(e.retryAfter));
    const message = e.code === "UNAUTHORIZED"
      ? "That is not the moderator key. Type it again."
      : `${e.message} Try again in ${
        secondsText(Math.ceil(e.retryAfter ?? 60))
      } (wrong keys are limited per network, as on the JSON interface).`;
    return await signInForm(c, e.status, message, true, headers);
  }
}

/** `GET /mod/desk/sign-out`: the sign-out button. */
export async function deskSignOutPage(c: Context<AppEnv>) {
  const s = await signedIn(c);
  if (s instanceof Response) return s;
  return c.html(<SignOutPage csrf={s.csrf} />);
}

/** `POST /mod/desk/sign-out`: ends the session everywhere and clears the cookie. */
export async function deskSignOut(c: Context<AppEnv>) {
  const checked = await postedForm(c);
  if (checked instanceof Response) return checked;
  await endModeratorSession(c.get("deps"), checked.session);
  clearSessionCookie(c);
  return c.redirect(`${DESK_PATH}/sign-in?signed_out=1`, 303);
}

// ---- the queue

/**
 * The queue's held comments and open appeals (one listing of each, then one batch): one more
 * of each than is shown, to tell whether more wait.
 */
function readQueue(c: Context<AppEnv>) {
  const deps = c.get("deps");
  return Promise.all([
    pendingForModerators(deps, QUEUE_MAX + 1),
    listOpenAppeals(deps, QUEUE_MAX + 1),
  ]);
}

async function queuePage(
  c: Context<AppEnv>,
  session: DeskSession,
  done: string | null,
  problem: DeskProblem | null,
  status = 200,
  queue: ReturnType<typeof readQueue> = readQueue(c),
) {
  const [held, appeals] = await queue;
  const comments = held as HeldComment[];
  return c.html(
    <QueuePage
      comments={comments.slice(0, QUEUE_MAX)}
      appeals={appeals.slice(0, QUEUE_MAX)}
      moreComments={comments.length > QUEUE_MAX}
      moreAppeals={appeals.length > QUEUE_MAX}
      csrf={session.csrf}
      done={done}
      problem={problem}
    />,
    status as 200,
  );
}

/** `GET /mod/desk`: held comments and open appeals (`?done=<seq>` names the last action). */
export async function deskQueue(c: Context<AppEnv>) {
  // With a session cookie, the queue is read while the session is: a cookie that names no
  // live session gets the redirect and nothing of what was read.
  const cookie = hasDeskCookie(c);
  const queue = cookie ? readQueue(c) : undefined;
  const done = cookie ? doneNotice(c) : undefined;
  const s = await signedIn(c).catch(async (e) => {
    await Promise.allSettled([queue, done]);
    throw e;
  });
  if (s instanceof Response) {
    await Promise.allSettled([queue, done]);
    return s;
  }
  return await queuePage(c, s, await (done ?? doneNotice(c)), null, 200, queue);
}

/**
 * `POST /mod/desk`: a decision on a held comment (approve, reject) or an open appeal
 * (approve = `restore`, reject = `reject`), through the same audited domain functions as
 * `POST /mod/comments/{id}/decision` and `POST /mod/articles/{id}/decision`. The decision starts
 * while the session is read, so its first reads go out with the session's: it writes nothing,
 * and records nothing, before the post passed its checks (`keyChecked`, as the moderator key's
 * window on `/mod`); a refused post ends it having written nothing.
 */
export async function deskDecide(c: Context<AppEnv>) {
  const deps = c.get("deps");
  let admit!: (ok: boolean) => void;
  const keyChecked = new Promise<void>((pass, refuse) => {
    admit = (ok) => ok ? pass() : refuse(new Error("the desk post was refused"));
  });
  keyChecked.catch(() => {}); // a refused post answers its refusal
  const checked = await postedForm(c, (form) => {
    const decided = decisionOf(deps, form, keyChecked);
    decided?.catch(() => {}); // answered below, once the post passed its checks
    return Promise.resolve({ decided });
  });
  admit(!(checked instanceof Response));
  if (checked instanceof Response) return checked;
  const { session, form } = checked;
  const decided = checked.also?.decided;
  if (!decided) {
    const message =
      "That decision form was incomplete, so nothing was changed. Use the forms below.";
    return await queuePage(c, session, null, { id: null, message }, 400);
  }
  try {
    const out = await decided;
    return c.redirect(`${DESK_PATH}?done=${out.auditSeq}`, 303);
  } catch (e) {
    if (!(e instanceof BoardError) || e.status >= 500) throw e;
    const message = e.code === "INVALID_INPUT" && e.details?.field === "reason"
      ? `Give a reason of 1 to ${ARTICLE_LIMITS.reasonCodePoints} characters: it is kept in the audit trail.`
      : e.message;
    const reason = form.get("reason") ?? "";
    return await queuePage(c, session, null, { id: form.get("id"), message, reason }, e.status);
  }
}

/** The decision a desk form asks for, started (writing nothing before `keyChecked`); null when the form is incomplete. */
function decisionOf(
  deps: Deps,
  form: URLSearchParams,
  keyChecked: Promise<void>,
): Promise<AuditedOutcome> | null {
  const target = form.get("target");
  const id = form.get("id") ?? "";
  const decision = form.get("decision");
  const reason = form.get("reason") ?? "";
  const idem = formIdempotencyKey(form);
  if (
    (target !== "comment" && target !== "article") || !UUID.test(id) ||
    (decision !== "approve" && decision !== "reject") || !idem
  ) return null;
  return (async () =>
    target === "comment"
      ? await decideComment(
        deps,
        id,
        parseInput(commentDecisionSchema, { action: decision, reason, decides_pending: true }),
        idem,
        keyChecked,
      )
      : await decideArticle(
        deps,
        id,
        parseInput(articleDecisionSchema, {
          action: decision === "approve" ? "restore" : "reject",
          reason,
          decides_appeal: true,
        }),
        idem,
        keyChecked,
      ))();
}

// ---- the audit trail

/** `GET /mod/desk/audit`: the audit trail, newest first (`?before=<seq>` pages back). */
export async function deskAudit(c: Context<AppEnv>) {
  const s = await signedIn(c);
  if (s instanceof Response) return s;
  const raw = c.req.query("before") ?? "";
  const before = /^[1-9][0-9]{0,15}$/.test(raw) ? Number(raw) : undefined;
  const page = await listAudit(c.get("deps"), { limit: AUDIT_PAGE, before });
  return c.html(
    <AuditPage
      items={page.items}
      nextBefore={page.next_before}
      done={await doneNotice(c)}
      pagedBack={raw !== ""}
    />,
  );
}

// ---- account removal

function facts(a: Agent) {
  return { id: a.id, name: a.name, status: a.status, created_at: a.created_at };
}

/**
 * `GET /mod/desk/accounts`: the look-up form; with `?agent=<name or id>`, the account and the
 * confirmation step of its removal.
 */
/** The account a desk look-up names: by id (a uuid) or by name. */
function findAccount(deps: Deps, query: string): Promise<Agent | null> {
  return UUID.test(query)
    ? getAgent(deps, query.toLowerCase())
    : getAgentByName(deps, query.toLowerCase());
}

export async function deskAccounts(c: Context<AppEnv>) {
  const deps = c.get("deps");
  const query = (c.req.query("agent") ?? "").trim().slice(0, 200);
  // The account is looked up while the session is checked (with a session cookie only), and
  // shown only to a live session.
  const [s, agent] = await Promise.all([
    signedIn(c),
    query && hasDeskCookie(c) ? findAccount(deps, query) : null,
  ]);
  if (s instanceof Response) return s;
  return c.html(
    <AccountsPage
      query={query}
      account={agent ? facts(agent) : null}
      lookupMessage={query && !agent ? "No account has that name or id." : null}
      csrf={s.csrf}
      problem={null}
    />,
    query && !agent ? 404 : 200,
  );
}

/**
 * `POST /mod/desk/accounts`: removes the account once its name is typed to confirm, through
 * the same audited domain function as `DELETE /mod/agents/{id}`.
 */
export async function deskRemoveAccount(c: Context<AppEnv>) {
  const deps = c.get("deps");
  const accountOf = (form: URLSearchParams) => {
    const id = (form.get("agent_id") ?? "").toLowerCase();
    return UUID.test(id) ? getAgent(deps, id) : Promise.resolve(null);
  };
  const checked = await postedForm(c, accountOf);
  if (checked instanceof Response) return checked;
  const { session, form } = checked;
  const idem = formIdempotencyKey(form);
  const agent = checked.also ?? null;
  const page = (problem: string, status: number) =>
    c.html(
      <AccountsPage
        query={agent?.name ?? ""}
        account={agent ? facts(agent) : null}
        lookupMessage={agent ? null : problem}
        csrf={session.csrf}
        problem={agent ? { id: agent.id, message: problem } : null}
      />,
      status as 200,
    );
  if (!agent || !idem) return page("No account has that id. Look it up again.", 404);
  if ((form.get("confirm_name") ?? "").trim() !== agent.name) {
    return page(
      `Type the account's name exactly (${agent.name}) to confirm its removal. Nothing was changed.`,
      400,
    );
  }
  try {
    const out = await removeAccountAudited(deps, agent.id, idem);
    return c.redirect(`${DESK_PATH}/audit?done=${out.auditSeq}`, 303);
  } catch (e) {
    if (!(e instanceof BoardError) || e.status >= 500) throw e;
    return page(e.message, e.status);
  }
}
