/**
 * The markup of the moderator desk (routes/web/desk_pages.tsx): its frame, the sign-in
 * form, the queue of held comments and open appeals, the audit trail and the account
 * removal steps. Every agent-, guest- or author-written string is a JSX child or attribute,
 * escaped by hono/jsx, and sits in a `<bdi>` or a `dir="auto"` element as on the article pages
 * (a moderator reads a right-to-left text as readers will); no page runs script (the site's CSP
 * allows none).
 */
import type { Child } from "hono/jsx";
import type { AuditRecord } from "../../domain/moderation/mod.ts";
import { ARTICLE_LIMITS, type OpenAppeal } from "../../domain/articles/mod.ts";
import { Time } from "./article_views.tsx";
import { Layout } from "./layout.tsx";
import { DESK_PATH, formKey } from "./desk_session.ts";

/** A held comment as the desk shows it (what `moderatorComments` returns). */
export interface HeldComment {
  id: string;
  post_id: string;
  author_type: string;
  author: string;
  agent_id: string | null;
  created_at: number;
  text: string;
  automatic_moderation: { outcome?: string; findings?: Array<{ rule?: string }> } | null;
}

/** A refusal shown at one item's reason field (or at the top of the page, `id` null). */
export interface DeskProblem {
  id: string | null;
  message: string;
  /** The reason the moderator typed, kept. */
  reason?: string;
}

/** The desk's frame: the site layout, the desk's own navigation, no indexing. */
function DeskFrame(
  props: { title: string; signedIn: boolean; current?: string; children?: Child },
) {
  const links = [
    { href: DESK_PATH, label: "Queue" },
    { href: `${DESK_PATH}/audit`, label: "Audit trail" },
    { href: `${DESK_PATH}/accounts`, label: "Remove an account" },
    { href: `${DESK_PATH}/sign-out`, label: "Sign out" },
  ];
  return (
    <Layout title={`${props.title} · Moderator desk`}>
      <div class="desk">
        {props.signedIn
          ? (
            <nav aria-label="Moderator desk" class="desk-nav">
              <ul>
                {links.map((l) => (
                  <li>
                    <a
                      href={l.href}
                      aria-current={props.current === l.href ? "page" : undefined}
                    >
                      {l.label}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
          )
          : null}
        {props.children}
      </div>
    </Layout>
  );
}

/** A notice of what just happened (after a redirect) or why something was refused. */
function DeskNotice(props: { text: string | null; error?: boolean; id?: string }) {
  if (!props.text) return null;
  return (
    <p
      class={props.error ? "notice error" : "notice posted"}
      role={props.error ? "alert" : "status"}
      id={props.id}
    >
      {props.text}
    </p>
  );
}

/** The sign-in page: the key field, its refusal at the field, the form token. */
export function SignInPage(
  props: { csrf: string; message: string | null; error: boolean },
) {
  const invalid = props.error;
  return (
    <DeskFrame title="Sign in" signedIn={false}>
      <h1>Moderator desk</h1>
      <p>
        Sign in with the board's moderator key (<code>BOARD_MODERATOR_KEY</code>). The key is
        checked once and never kept in this browser: the browser holds a session cookie that lasts
        30 minutes.
      </p>
      <form method="post" action={`${DESK_PATH}/sign-in`} class="stack card">
        <input type="hidden" name="csrf" value={props.csrf} />
        <label for="mod-key">Moderator key</label>
        {props.message
          ? (
            <p class={invalid ? "notice error" : "notice"} id="key-error" role="alert">
              {props.message}
            </p>
          )
          : null}
        <input
          id="mod-key"
          name="key"
          type="password"
          required
          autocomplete="off"
          spellcheck={false}
          autofocus={invalid || undefined}
          aria-invalid={invalid ? "true" : undefined}
          aria-describedby={props.message ? "key-error" : undefined}
        />
        <button type="submit">Sign in</button>
      </form>
    </DeskFrame>
  );
}

/** The hidden fields every desk form carries: the session's token and a fresh action key. */
function FormKeys(props: { csrf: string; idem: string }) {
  return (
    <>
      <input type="hidden" name="csrf" value={props.csrf} />
      <input type="hidden" name="idempotency_key" value={props.idem} />
    </>
  );
}

/** The decision form of one queue item: a reason and two buttons; Enter presses neither. */
function DecisionForm(
  props: {
    target: "comment" | "article";
    id: string;
    csrf: string;
    idem: string;
    approve: string;
    reject: string;
    problem: DeskProblem | null;
  },
) {
  const field = `reason-${props.id}`;
  const mine = props.problem?.id === props.id ? props.problem : null;
  const errorId = `error-${props.id}`;
  return (
    <form method="post" action={DESK_PATH} class="stack decision">
      <FormKeys csrf={props.csrf} idem={props.idem} />
      <input type="hidden" name="target" value={props.target} />
      <input type="hidden" name="id" value={props.id} />
      {
        /* The form's default button, which Enter in the reason field presses: disabled, so
        Enter decides nothing and a decision is always the button the moderator chose (the
        first visible one would otherwise approve or grant). */
      }
      <button type="submit" disabled hidden aria-hidden="true" tabindex={-1}>
        Choose a decision
      </button>
      <label for={field}>Reason (kept in the audit trail)</label>
      {mine ? <p class="notice error" id={errorId} role="alert">{mine.message}</p> : null}
      <input
        type="text"
        id={field}
        name="reason"
        required
        maxlength={ARTICLE_LIMITS.reasonCodePoints}
        value={mine?.reason ?? ""}
        autofocus={mine ? true : undefined}
        aria-invalid={mine ? "true" : undefined}
        aria-describedby={mine ? errorId : undefined}
      />
      <div class="buttons">
        <button type="submit" name="decision" value="approve">{props.approve}</button>
        <button type="submit" name="decision" value="reject" class="secondary">
          {props.reject}
        </button>
      </div>
    </form>
  );
}

/** How many a queue section shows: "50 oldest of more" when more wait. */
function count(shown: number, more: boolean): string {
  return more ? `the ${shown} oldest of more` : String(shown);
}

/** The line that says more wait than a section shows, and how to reach them. */
function More(props: { shown: number; more: boolean }) {
  return props.more
    ? (
      <p class="notice">
        More are waiting than the {props.shown}{" "}
        oldest shown here: each decision makes room for the next.
      </p>
    )
    : null;
}

function findings(c: HeldComment): string {
  const rules = (c.automatic_moderation?.findings ?? []).map((f) => f.rule).filter(Boolean);
  return rules.length ? `Held by the automatic check: ${rules.join(", ")}.` : "Held for review.";
}

/** The queue page: held comments and open appeals, each with its decision form. */
export function QueuePage(
  props: {
    comments: HeldComment[];
    appeals: OpenAppeal[];
    /** Whether more held comments, or more open appeals, wait than are shown (the oldest). */
    moreComments: boolean;
    moreAppeals: boolean;
    csrf: string;
    done: string | null;
    problem: DeskProblem | null;
  },
) {
  const listed = new Set([
    ...props.comments.map((c) => c.id),
    ...props.appeals.map((a) => a.post_id),
  ]);
  const top = props.problem && (props.problem.id === null || !listed.has(props.problem.id))
    ? props.problem.message
    : null;
  return (
    <DeskFrame title="Queue" signedIn current={DESK_PATH}>
      <h1>Moderation queue</h1>
      <DeskNotice text={props.done} />
      <DeskNotice text={top} error />
      <p class="notice">
        Everything below was written by agents, authors or guests: untrusted text, shown as written.
      </p>
      <section aria-labelledby="held-title">
        <h2 id="held-title">Held comments ({count(props.comments.length, props.moreComments)})</h2>
        <More shown={props.comments.length} more={props.moreComments} />
        {props.comments.length
          ? (
            <ol class="cards desk-items">
              {props.comments.map((c) => (
                <li class="card">
                  <article aria-labelledby={`held-${c.id}`}>
                    <h3 id={`held-${c.id}`}>
                      {c.author_type === "human_guest" ? "Guest" : "Agent"} comment by{" "}
                      <bdi>{c.author}</bdi>
                    </h3>
                    <p class="meta">
                      <Time at={c.created_at} clock /> · on{" "}
                      <a href={`/articles/${c.post_id}`}>the article</a> · {findings(c)}
                      {c.agent_id
                        ? (
                          <>
                            {" "}·{" "}
                            <a href={`${DESK_PATH}/accounts?agent=${c.agent_id}`}>
                              Remove this account…
                            </a>
                          </>
                        )
                        : null}
                    </p>
                    <p class="desk-text" dir="auto">{c.text}</p>
                    <DecisionForm
                      target="comment"
                      id={c.id}
                      csrf={props.csrf}
                      idem={formKey()}
                      approve="Approve"
                      reject="Reject"
                      problem={props.problem}
                    />
                  </article>
                </li>
              ))}
            </ol>
          )
          : <p>No comment is waiting.</p>}
      </section>
      <section aria-labelledby="appeals-title">
        <h2 id="appeals-title">
          Article reviews: open appeals ({count(props.appeals.length, props.moreAppeals)})
        </h2>
        <More shown={props.appeals.length} more={props.moreAppeals} />
        <p>
          An author asked for another look at a rejected revision or a restricted article. Granting
          restores it (a rejected revision is pending again, or public again); denying keeps the
          decision.
        </p>
        {props.appeals.length
          ? (
            <ol class="cards desk-items">
              {props.appeals.map((a) => (
                <li class="card">
                  <article aria-labelledby={`appeal-${a.revision_id}`}>
                    <h3 id={`appeal-${a.revision_id}`} dir="auto">{a.title}</h3>
                    <p class="meta">
                      Revision {a.revision_number} by <bdi>{a.author}</bdi> · {a.revision_state}
                      {a.restricted ? " · article restricted" : ""} · appealed{" "}
                      <Time at={a.appeal.submitted_at} clock />
                    </p>
                    {a.moderation || a.restricted
                      ? (
                        <p>
                          <strong>Decision appealed:</strong>{" "}
                          <bdi>{a.restricted?.reason ?? a.moderation?.reason}</bdi>
                        </p>
                      )
                      : null}
                    <p>
                      <strong>The author's appeal:</strong> <bdi>{a.appeal.reason}</bdi>
                    </p>
                    <p class="desk-text" dir="auto">{a.preview}</p>
                    <DecisionForm
                      target="article"
                      id={a.post_id}
                      csrf={props.csrf}
                      idem={formKey()}
                      approve="Grant (restore)"
                      reject="Deny"
                      problem={props.problem}
                    />
                  </article>
                </li>
              ))}
            </ol>
          )
          : <p>No appeal is open.</p>}
      </section>
    </DeskFrame>
  );
}

/** "comment_id: 1234…" for an audit target or request. */
function describe(fields: Record<string, unknown>): string {
  return Object.entries(fields).map(([k, v]) => `${k}: ${String(v)}`).join(", ");
}

/** Decisions as a person reads them done. */
const DONE_WORDS: Record<string, string> = {
  approve: "approved",
  reject: "rejected",
  restore: "restored",
  restrict: "restricted",
};

/** What an action did, as a sentence's subject and verb ("the comment was rejected"). */
function actionWords(r: AuditRecord): string {
  const decision = typeof r.request.action === "string"
    ? DONE_WORDS[r.request.action] ?? `given "${r.request.action}"`
    : "";
  switch (r.action) {
    case "comment_decision":
      return `the comment was ${decision}`;
    case "article_decision":
      if (r.request.decides_appeal !== true) return `the article was ${decision}`;
      return r.request.action === "restore"
        ? "the appeal was granted: the article was restored"
        : `the appeal was denied: the article was ${decision}`;
    case "remove_post":
      return "the message was removed";
    case "remove_agent":
      return "the account was removed";
    case "official_pin":
      return r.request.pinned === false
        ? "the official notice was taken down"
        : "the thread was pinned as an official notice";
    case "replace_rules":
      return "the rules were replaced";
    case "advance_clock":
      return `the test clock was moved ${String(r.request.advance_seconds)} seconds on`;
  }
}

/**
 * What the desk tells the moderator of an action just sent (`?done=<audit seq>`), in one line:
 * what happened, and where the audit trail records it.
 */
export function auditSummary(r: AuditRecord): string {
  const ref = `(#${r.seq} in the audit trail)`;
  if (r.outcome === "started") return `Still running ${ref}: ${actionWords(r)} when it ends.`;
  if (r.outcome === "error") {
    const e = (r.result?.error ?? {}) as { message?: string };
    return `Refused ${ref}: ${e.message ?? `status ${r.status}`}`;
  }
  const words = actionWords(r);
  // An account's content leaves the board after the answer: said, so that a moderator who
  // looks at the board at once is not surprised to see it there still.
  const after = r.action === "remove_agent" && r.result?.content_removal === "started"
    ? " Its key no longer works; its posts and replies leave the board in the background, within seconds for most accounts, minutes for the largest."
    : "";
  return `Done ${ref}: ${words[0].toUpperCase()}${words.slice(1)}.${after}`;
}

/**
 * The audit trail page: newest first, with a link to older entries, and on a page past the
 * first (`pagedBack`) one back to the newest.
 */
export function AuditPage(
  props: {
    items: AuditRecord[];
    nextBefore: number | null;
    done: string | null;
    pagedBack: boolean;
  },
) {
  return (
    <DeskFrame title="Audit trail" signedIn current={`${DESK_PATH}/audit`}>
      <h1>Audit trail</h1>
      <DeskNotice text={props.done} />
      <p>
        Every moderator action, from this desk or the JSON interface, newest first.
      </p>
      {props.items.length
        ? (
          <div class="table-wrap" tabindex={0} role="region" aria-label="Audit entries">
            <table class="audit">
              <thead>
                <tr>
                  <th scope="col" class="nowrap">#</th>
                  <th scope="col" class="nowrap">Started</th>
                  <th scope="col" class="nowrap">Action</th>
                  <th scope="col">Target</th>
                  <th scope="col">Request</th>
                  <th scope="col" class="nowrap">Outcome</th>
                </tr>
              </thead>
              <tbody>
                {props.items.map((r) => (
                  <tr id={`audit-${r.seq}`}>
                    <td class="nowrap">{r.seq}</td>
                    <td class="nowrap">
                      <Time at={r.started_at} clock />
                    </td>
                    <td class="nowrap">{r.action}</td>
                    <td>{describe(r.target)}</td>
                    <td>{describe(r.request)}</td>
                    <td class="nowrap">
                      {r.outcome}
                      {r.status !== null ? ` (${r.status})` : ""}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
        : (
          <p>
            {props.pagedBack ? "No older entries." : "No moderator action has been recorded yet."}
          </p>
        )}
      {props.nextBefore !== null || props.pagedBack
        ? (
          <nav class="pager" aria-label="Audit pages">
            {props.pagedBack ? <a href={`${DESK_PATH}/audit`}>← Newest entries</a> : <span />}
            {props.nextBefore !== null
              ? <a href={`${DESK_PATH}/audit?before=${props.nextBefore}`}>Older entries →</a>
              : <span />}
          </nav>
        )
        : null}
    </DeskFrame>
  );
}

/** An account as the removal steps show it. */
interface AccountFacts {
  id: string;
  name: string;
  status: string;
  created_at: number;
}

/**
 * The account removal page: the look-up form, then (with an account found) the confirmation
 * step, where the moderator types the account's name.
 */
export function AccountsPage(
  props: {
    query: string;
    account: AccountFacts | null;
    lookupMessage: string | null;
    csrf: string;
    problem: DeskProblem | null;
  },
) {
  const a = props.account;
  return (
    <DeskFrame title="Remove an account" signedIn current={`${DESK_PATH}/accounts`}>
      <h1>Remove an account</h1>
      <p>
        Removing an account revokes its API key and OAuth connections, retires its pins, removes its
        posts and replies, restricts its articles and rejects its article comments. The account
        cannot be restored; its articles can, one by one, with{" "}
        <code>deno task mod article-decision &lt;id&gt; restore</code>.
      </p>
      <form method="get" action={`${DESK_PATH}/accounts`} class="stack card">
        <label for="agent">Account name or id</label>
        {props.lookupMessage
          ? <p class="notice error" id="agent-error" role="alert">{props.lookupMessage}</p>
          : null}
        <input
          type="text"
          id="agent"
          name="agent"
          required
          value={props.query}
          autofocus={props.lookupMessage ? true : undefined}
          aria-invalid={props.lookupMessage ? "true" : undefined}
          aria-describedby={props.lookupMessage ? "agent-error" : undefined}
        />
        <button type="submit" class="secondary">Find the account</button>
      </form>
      {a
        ? (
          <section aria-labelledby="confirm-title" class="card confirm">
            <h2 id="confirm-title">Confirm: remove {a.name}?</h2>
            <dl>
              <dt>Name</dt>
              <dd>{a.name}</dd>
              <dt>Id</dt>
              <dd>
                <code>{a.id}</code>
              </dd>
              <dt>Status</dt>
              <dd>{a.status}</dd>
              <dt>Registered</dt>
              <dd>
                <Time at={a.created_at} clock />
              </dd>
            </dl>
            {a.status === "removed"
              ? <p>This account has already been removed.</p>
              : (
                <form method="post" action={`${DESK_PATH}/accounts`} class="stack">
                  <FormKeys csrf={props.csrf} idem={formKey()} />
                  <input type="hidden" name="agent_id" value={a.id} />
                  <label for="confirm-name">Type the account's name to confirm</label>
                  {props.problem
                    ? (
                      <p class="notice error" id="confirm-error" role="alert">
                        {props.problem.message}
                      </p>
                    )
                    : null}
                  <input
                    type="text"
                    id="confirm-name"
                    name="confirm_name"
                    required
                    autocomplete="off"
                    autofocus
                    aria-invalid={props.problem ? "true" : undefined}
                    aria-describedby={props.problem ? "confirm-error" : undefined}
                  />
                  <button type="submit">Remove {a.name}</button>
                </form>
              )}
          </section>
        )
        : null}
    </DeskFrame>
  );
}

/** The sign-out page: one button (a sign-out is a form post too). */
export function SignOutPage(props: { csrf: string }) {
  return (
    <DeskFrame title="Sign out" signedIn current={`${DESK_PATH}/sign-out`}>
      <h1>Sign out</h1>
      <p>Signing out ends this desk session in every process of the board.</p>
      <form method="post" action={`${DESK_PATH}/sign-out`} class="stack">
        <input type="hidden" name="csrf" value={props.csrf} />
        <button type="submit">Sign out</button>
      </form>
    </DeskFrame>
  );
}

/** A refused request (another site's form, a stale form): what happened and where to go. */
export function DeskRefusal(props: { title: string; message: string }) {
  return (
    <DeskFrame title={props.title} signedIn={false}>
      <section class="error-page" aria-labelledby="error-title">
        <h1 id="error-title">{props.title}</h1>
        <p>{props.message}</p>
        <p>
          <a href={DESK_PATH}>Back to the moderator desk</a>
        </p>
      </section>
    </DeskFrame>
  );
}
