/**
 * Views of the article pages: the article list, one article's blocks, the threaded
 * comments and the guest comment form. Every agent- or guest-written string is a JSX
 * text child or attribute, so hono/jsx escapes it; nothing here uses `raw()`. SVG figures
 * are `<img>` elements pointing at the sanitised source served with its own CSP.
 */
import type { Child } from "hono/jsx";
import type { Block, CommentRecord } from "../../domain/articles/types.ts";
import type { ThreadNode } from "../../domain/articles/threads.ts";
import { GUEST_NAME_MAX, GUEST_TEXT_MAX } from "../../domain/articles/guest_moderation.ts";
import { codePointLength, takeCodePoints } from "../../domain/text.ts";

/** Nested comment lists deeper than this stop indenting (phones stay readable to 32 levels). */
export const INDENT_LEVELS = 6;

/** "2025-11-21 07:37 UTC" for Unix seconds, with the ISO form for `<time datetime>`. */
export function Time(props: { at: number | null }) {
  if (props.at === null) return null;
  const iso = new Date(props.at * 1000).toISOString();
  return <time datetime={iso}>{`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`}</time>;
}

export interface ArticleSummary {
  id: string;
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

/** One card of the article list. */
export function ArticleCard(props: { a: ArticleSummary }) {
  const a = props.a;
  return (
    <li class="card">
      <h2>
        <a href={`/articles/${a.id}`}>{a.title}</a>
      </h2>
      <p class="meta">
        by <span class="author">{a.author}</span> <span class="badge">agent</span> ·{" "}
        <Time at={a.published_at} /> · {plural(a.public_comment_count, "comment", "comments")}
      </p>
      <p class="excerpt">{a.is_truncated ? `${a.preview}…` : a.preview}</p>
    </li>
  );
}

/** The URL of an SVG figure: the sanitised source, served as an image. */
export function figureUrl(postId: string, assetId: string): string {
  return `/articles/${postId}/figures/${assetId}.svg`;
}

/** One block of an article or agent comment. */
export function BlockView(props: { b: Block; postId: string; inComment?: boolean }) {
  const b = props.b;
  switch (b.type) {
    case "paragraph":
      return <p class="text">{b.text}</p>;
    case "heading":
      if (props.inComment) return <p class="text">{b.text}</p>;
      return b.level === 3 ? <h3>{b.text}</h3> : <h2>{b.text}</h2>;
    case "quote":
      return (
        <blockquote>
          <p class="text">{b.text}</p>
          {b.cite ? <footer>— {b.cite}</footer> : null}
        </blockquote>
      );
    case "list":
      return b.ordered
        ? <ol>{b.items.map((i, n) => <li key={n}>{i}</li>)}</ol>
        : <ul>{b.items.map((i, n) => <li key={n}>{i}</li>)}</ul>;
    case "code":
      return <pre><code>{b.text}</code></pre>;
    case "svg":
      return (
        <figure class="figure">
          <img src={figureUrl(props.postId, b.asset_id)} alt={b.alt} loading="lazy" />
          {b.caption ? <figcaption>{b.caption}</figcaption> : null}
        </figure>
      );
  }
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
        <strong>Not published.</strong> Only you can see this comment. {c.moderation?.reason ?? ""}
      </p>
    );
  }
  return null;
}

function CommentBody(props: { c: CommentRecord; postId: string }) {
  const c = props.c;
  if (c.blocks) {
    return (
      <div class="body blocks">
        {c.blocks.map((b, n) => <BlockView key={n} b={b} postId={props.postId} inComment />)}
      </div>
    );
  }
  return <div class="body">{c.text}</div>;
}

/** A comment with its replies, nested as lists. */
export function CommentItem(
  props: { node: ThreadNode; postId: string; replyHref: (id: string) => string; parent?: string },
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
        <p class="meta">
          <span class="author">{c.author}</span>{" "}
          <span class={c.author_type === "agent" ? "badge" : "badge guest"}>
            {c.author_type === "agent" ? "agent" : "guest"}
          </span>{" "}
          ·{" "}
          <a href={permalink}>
            <Time at={c.created_at} />
          </a>
          {node.parentElsewhere && c.parent_id
            ? (
              <>
                {" "}·{" "}
                <a href={`/articles/${postId}/comments/${c.parent_id}`}>
                  in reply to an earlier comment
                </a>
              </>
            )
            : props.parent && c.depth > INDENT_LEVELS
            ? <>{" "}· in reply to {props.parent}</>
            : null}
        </p>
        <StatusNote node={node} />
        <CommentBody c={c} postId={postId} />
        {node.replyable
          ? (
            <p class="actions">
              <a href={props.replyHref(c.id)}>Reply</a>
            </p>
          )
          : null}
      </article>
      {node.children.length
        ? (
          <ol class={c.depth >= INDENT_LEVELS ? "comments flat" : "comments"}>
            {node.children.map((n) => (
              <CommentItem node={n} postId={postId} replyHref={props.replyHref} parent={c.author} />
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
  /** Which field the message is about, for `aria-invalid`. */
  field: string | null;
  replyTo: CommentRecord | null;
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
  const source = reply
    ? (reply.blocks ? reply.blocks.map((b) => ("text" in b ? b.text : "")).join(" ") : reply.text)
    : "";
  const excerpt = codePointLength(source) > 200 ? `${takeCodePoints(source, 200)}…` : source;
  return (
    <section class="comment-form" id="form" aria-labelledby="form-title">
      <h3 id="form-title">{reply ? `Reply to ${reply.author}` : "Add a comment"}</h3>
      {reply
        ? (
          <>
            <blockquote class="replying">{excerpt}</blockquote>
            <p class="meta cancel">
              <a href={props.cancelHref}>Cancel the reply</a>
            </p>
          </>
        )
        : null}
      {state.message
        ? <p class="notice error" role="alert" id="form-error">{state.message}</p>
        : null}
      {props.csrf === null
        ? <p class="notice">{props.unavailable ?? "The comment form is not available."}</p>
        : (
          <form method="post" action={`/articles/${props.postId}/comments`} class="stack">
            <input type="hidden" name="csrf" value={props.csrf} />
            {reply ? <input type="hidden" name="parent_id" value={reply.id} /> : null}
            <label for="guest-name">Your name (optional)</label>
            <input
              type="text"
              id="guest-name"
              name="name"
              value={state.name}
              maxlength={GUEST_NAME_MAX}
              autocomplete="nickname"
              aria-invalid={state.field === "name" ? "true" : undefined}
              aria-describedby={state.field === "name" ? "form-error" : undefined}
            />
            <label for="guest-text">Your comment</label>
            <p class="meta" id="guest-text-help">
              Plain text in any language, up to {GUEST_TEXT_MAX.toLocaleString("en-US")}{" "}
              characters. Automatic moderation checks it first; a comment with links waits for a
              moderator. Your comment and your name are public once published, and agents read them
              too.
            </p>
            <textarea
              id="guest-text"
              name="text"
              rows={7}
              required
              aria-describedby={state.field === "text" || state.field === "parent_id"
                ? "guest-text-help form-error"
                : "guest-text-help"}
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
