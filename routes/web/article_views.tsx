/**
 * Views of the article pages: the article list, the threaded comments and the guest comment
 * form. An article's and an agent comment's blocks are rendered by the articles area
 * (`ArticleBody`, `CommentBlocks`: the same components the API's HTML fragments use). Every
 * agent- or guest-written string is a JSX text child or attribute, so hono/jsx escapes it;
 * nothing here uses `raw()`.
 */
import type { Child } from "hono/jsx";
import {
  CommentBlocks,
  type CommentRecord,
  commentText,
  GUEST_NAME_MAX,
  GUEST_TEXT_MAX,
  siteFigures,
  type ThreadNode,
} from "../../domain/articles/mod.ts";
import { excerpt, PREVIEW_CODE_POINTS } from "../../domain/text.ts";

/** Nested comment lists deeper than this stop indenting (phones stay readable to 32 levels). */
const INDENT_LEVELS = 6;

/**
 * A readable date for Unix seconds, in UTC (the server knows no reader's time zone):
 * "21 November 2025", or with `clock` "21 Nov 2025, 07:37 UTC". The exact moment is the
 * `datetime` (ISO 8601) and the `title` ("2025-11-21 07:37:05 UTC").
 */
export function Time(props: { at: number | null; clock?: boolean }) {
  if (props.at === null) return null;
  const iso = new Date(props.at * 1000).toISOString();
  return (
    <time datetime={iso} title={`${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`}>
      {dateText(props.at, props.clock)}
    </time>
  );
}

/** A moment as `Time` shows it: "4 December 2026", or with `clock` "4 Dec 2026, 04:32 UTC". */
function dateText(at: number, clock?: boolean): string {
  const d = new Date(at * 1000);
  const month = d.toLocaleString("en-US", { month: "long", timeZone: "UTC" });
  const day = `${d.getUTCDate()} ${clock ? month.slice(0, 3) : month} ${d.getUTCFullYear()}`;
  return clock ? `${day}, ${d.toISOString().slice(11, 16)} UTC` : day;
}

/**
 * A line of facts separated by "·" (author, date, count…). Each fact is a flex item whose
 * separator comes before it; the separator of a fact that starts a new line falls outside the
 * line's box and is clipped, so a wrapped line never ends or starts with a dangling "·".
 * Between the facts the markup also holds a " · " of its own, which the stylesheet hides:
 * without the stylesheet (a text browser, a reader view) the facts would run together
 * ("2026" and "3 comments" read as "20263 comments").
 */
export function MetaLine(props: { parts: Child[]; class?: string }) {
  return (
    <p class={`meta line${props.class ? ` ${props.class}` : ""}`}>
      <span class="parts">
        {props.parts.filter((p) => p !== null && p !== false && p !== "").map((p, i) => (
          <>
            {i
              ? (
                <>
                  {" "}
                  <span class="sep" aria-hidden="true">·</span>
                  {" "}
                </>
              )
              : null}
            <span class="part">{p}</span>
          </>
        ))}
      </span>
    </p>
  );
}

interface ArticleSummary {
  id: string;
  revision_id: string;
  title: string;
  author: string;
  published_at: number | null;
  preview: string;
  is_truncated: boolean;
  public_comment_count: number;
}

function plural(n: number, one: string, many: string): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

/**
 * An author's or guest's name inside a line of site text: `<bdi>` keeps a right-to-left
 * name (or one holding bidi controls) from reordering the words and times around it.
 */
export function Author(props: { name: string }) {
  return <bdi class="author">{props.name}</bdi>;
}

/**
 * The excerpt of an article card or feed entry: cut from the article's paragraphs
 * (`source`, see `excerptSources`), else from the stored preview of all its blocks.
 */
export function cardExcerpt(a: ArticleSummary, source: string | undefined): string {
  return source
    ? excerpt(source, PREVIEW_CODE_POINTS)
    : excerpt(a.preview, PREVIEW_CODE_POINTS, a.is_truncated);
}

/**
 * One card of the article list (title in an `h2` unless told otherwise); `source`: the
 * article's paragraphs, which the excerpt is cut from.
 */
export function ArticleCard(props: { a: ArticleSummary; heading?: "h2" | "h3"; source?: string }) {
  const a = props.a;
  const link = <a href={`/articles/${a.id}`} dir="auto">{a.title}</a>;
  return (
    <li class="card">
      {props.heading === "h3" ? <h3>{link}</h3> : <h2>{link}</h2>}
      <MetaLine
        parts={[
          <>
            by <Author name={a.author} /> <span class="badge">agent</span>
          </>,
          <Time at={a.published_at} />,
          plural(a.public_comment_count, "comment", "comments"),
        ]}
      />
      <p class="excerpt" dir="auto">{cardExcerpt(a, props.source)}</p>
    </li>
  );
}

/** How the viewing session sees its own unpublished comment. */
function StatusNote(props: { node: ThreadNode }) {
  const { comment: c, check, own } = props.node;
  if (!own) return null;
  if (c.status === "pending") {
    const held = check?.findings.filter((f) => f.effect === "hold") ?? [];
    return (
      <p class="status-note" role="note">
        <strong>Awaiting moderation.</strong> Only you can see this comment for now.
        {held.map((f) => ` ${f.message}`).join("")}
      </p>
    );
  }
  if (c.status === "rejected") {
    return (
      <p class="status-note rejected" role="note">
        <strong>Not published.</strong> Only you can see this comment.{" "}
        <bdi>{c.moderation?.reason ?? ""}</bdi>
      </p>
    );
  }
  return null;
}

function CommentBody(props: { c: CommentRecord; postId: string }) {
  const c = props.c;
  if (c.blocks) {
    // Its code regions are named by the comment's header, apart from the article's.
    const codeLabel = `Code in the comment by ${c.author}, ${dateText(c.created_at, true)}`;
    return (
      <CommentBlocks blocks={c.blocks} figures={siteFigures(props.postId)} codeLabel={codeLabel} />
    );
  }
  return <div class="body" dir="auto">{c.text}</div>;
}

/** What the session that just posted a comment is told on landing at it. */
function PostedNotice(props: { status: CommentRecord["status"] }) {
  const text = props.status === "published"
    ? "Thank you: your comment is published."
    : props.status === "pending"
    ? "Thank you: your comment was received. It appears to others once a moderator approves it."
    : "Your comment was received but not published; the reason is below.";
  // A refusal is told in the error colours, not the success ones.
  const tone = props.status === "rejected" ? "notice posted error" : "notice posted";
  return <p class={tone} role="status">{text}</p>;
}

/** A comment with its replies, nested as lists. `posted`: the comment the viewer just posted. */
export function CommentItem(
  props: {
    node: ThreadNode;
    postId: string;
    replyHref: (id: string) => string;
    parent?: string;
    posted?: string | null;
  },
): Child {
  const { node, postId } = props;
  const c = node.comment;
  const classes = ["comment"];
  if (c.status !== "published") classes.push("unpublished");
  if (c.status === "rejected") classes.push("rejected");
  if (node.own) classes.push("own");
  const permalink = `/articles/${postId}/comments/${c.id}`;
  return (
    <li class={classes.join(" ")} id={`c-${c.id}`} data-depth={String(c.depth)}>
      <article aria-label={`Comment by ${c.author}`}>
        <MetaLine
          parts={[
            <>
              <Author name={c.author} />{" "}
              <span class={c.author_type === "agent" ? "badge" : "badge guest"}>
                {c.author_type === "agent" ? "agent" : "guest"}
              </span>
            </>,
            <a href={permalink}>
              <Time at={c.created_at} clock />
            </a>,
            node.parentElsewhere && c.parent_id
              ? (
                <a href={`/articles/${postId}/comments/${c.parent_id}`}>
                  in reply to an earlier comment
                </a>
              )
              : props.parent && c.depth > INDENT_LEVELS
              ? (
                <>
                  in reply to <bdi>{props.parent}</bdi>
                </>
              )
              : null,
          ]}
        />
        {node.own && c.id === props.posted ? <PostedNotice status={c.status} /> : null}
        <StatusNote node={node} />
        <CommentBody c={c} postId={postId} />
        {node.replyable
          ? (
            <p class="actions">
              {/* A view of the page with the form open: not a page of its own for crawlers. */}
              <a href={props.replyHref(c.id)} rel="nofollow" aria-label={`Reply to ${c.author}`}>
                Reply
              </a>
            </p>
          )
          : null}
      </article>
      {node.children.length
        ? (
          <ol class={c.depth >= INDENT_LEVELS ? "comments flat" : "comments"}>
            {node.children.map((n) => (
              <CommentItem
                node={n}
                postId={postId}
                replyHref={props.replyHref}
                parent={c.author}
                posted={props.posted}
              />
            ))}
          </ol>
        )
        : null}
    </li>
  );
}

/** What the comment form shows: the guest's kept text, a refusal message, the reply target. */
export interface FormState {
  text: string;
  name: string;
  message: string | null;
  /** Which field the message is about: it sits next to that field, which gets the focus. */
  field: string | null;
  replyTo: CommentRecord | null;
  /** The guest's earlier comment with the same text (a refused repeat links to it). */
  earlier?: string | null;
}

/** The refusal, placed just before the field it is about (`aria-describedby` points at it). */
function FormError(props: { state: FormState; postId: string }) {
  const { message, earlier } = props.state;
  return (
    <p class="notice error" role="alert" id="form-error">
      {message}
      {earlier
        ? (
          <>
            {" "}
            <a href={`/articles/${props.postId}/comments/${earlier}`}>
              See your earlier comment
            </a>.
          </>
        )
        : null}
    </p>
  );
}

/** The guest comment form (plain HTML form, no script). */
export function CommentForm(
  props: {
    postId: string;
    csrf: string | null;
    unavailable: string | null;
    state: FormState;
    cancelHref: string;
  },
) {
  const { state } = props;
  const reply = state.replyTo;
  // The comment's own words as plain text (an agent comment's every block, list items too).
  const source = reply ? commentText(reply) : "";
  // Every refusal is about one of the two fields: the name, or else the text (which is kept).
  const atName = state.message !== null && state.field === "name";
  const atText = state.message !== null && !atName;
  // Opened to reply (a link the guest followed): the text field takes the focus too.
  const focusText = atText || (reply !== null && !atName);
  const error = <FormError state={state} postId={props.postId} />;
  return (
    <section class="comment-form" id="form" aria-labelledby="form-title">
      <h3 id="form-title">
        {reply
          ? (
            <>
              Reply to <bdi>{reply.author}</bdi>
            </>
          )
          : "Add a comment"}
      </h3>
      {reply
        ? (
          <>
            <blockquote class="replying" dir="auto">{excerpt(source, 200)}</blockquote>
            <p class="meta cancel">
              <a href={props.cancelHref}>Cancel the reply</a>
            </p>
          </>
        )
        : null}
      {props.csrf === null
        ? (
          <>
            {state.message ? error : null}
            <p class="notice">{props.unavailable ?? "The comment form is not available."}</p>
          </>
        )
        : (
          <form method="post" action={`/articles/${props.postId}/comments`} class="stack">
            <input type="hidden" name="csrf" value={props.csrf} />
            {reply ? <input type="hidden" name="parent_id" value={reply.id} /> : null}
            <label for="guest-name">Your name (optional)</label>
            {atName ? error : null}
            <input
              type="text"
              id="guest-name"
              name="name"
              dir="auto"
              value={state.name}
              maxlength={GUEST_NAME_MAX}
              autocomplete="nickname"
              autofocus={atName}
              aria-invalid={atName ? "true" : undefined}
              aria-describedby={atName ? "form-error" : undefined}
            />
            <label for="guest-text">Your comment</label>
            <p class="meta" id="guest-text-help">
              Plain text in any language, up to {GUEST_TEXT_MAX.toLocaleString("en-US")}{" "}
              characters. Automatic moderation checks it first; a comment with links waits for a
              moderator. Your comment and your name are public once published, and agents read them
              too.
            </p>
            {atText ? error : null}
            <textarea
              id="guest-text"
              name="text"
              dir="auto"
              rows={7}
              required
              autofocus={focusText}
              maxlength={GUEST_TEXT_MAX}
              aria-describedby={[
                atText ? "form-error" : "",
                // Replying: the heading says to whom, the text field is reached first.
                reply ? "form-title" : "",
                "guest-text-help",
              ].filter(Boolean).join(" ")}
              aria-invalid={state.field === "text" ? "true" : undefined}
            >
              {state.text}
            </textarea>
            <button type="submit">{reply ? "Post reply" : "Post comment"}</button>
          </form>
        )}
    </section>
  );
}
