/**
 * The website's article pages (docs/website.md): `/articles` (published articles,
 * newest first), `/articles/{id}` (the current public revision, its threaded comments,
 * the guest comment form), `POST /articles/{id}/comments`, comment permalinks and SVG
 * figures. Every page, error pages included, carries the site security headers.
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import type { Child } from "hono/jsx";
import {
  ARTICLE_LIMITS,
  ArticleBody,
  type ArticlePageData,
  blockText,
  excerptSource,
  figureAnchor,
  FigureDescription,
  figureSize,
  figureUrl,
  findComment,
  findGuestSession,
  type GuestRefusal,
  keepGuestRefusal,
  postGuestComment,
  publicArticleBundle,
  publicArticleText,
  publicFeedPage,
  readArticlePage,
  replyable,
  seenBy,
  sentBefore,
  siteFigures,
  svgSources,
} from "../../domain/articles/mod.ts";
import { BoardError } from "../../domain/errors.ts";
import { parsePageParams } from "../../domain/paging.ts";
import { UUID_PATTERN } from "../schemas.ts";
import { excerpt } from "../../domain/text.ts";
import type { AppEnv } from "../env.ts";
import { queryParam } from "../http.ts";
import {
  ArticleCard,
  Author,
  CommentForm,
  CommentItem,
  type FormState,
  MetaLine,
  Time,
} from "./article_views.tsx";
import { readForm } from "./forms.ts";
import {
  currentGuest,
  guestCookieValue,
  type GuestState,
  issuedGuestCookie,
  newGuestSession,
  writeGuestCookie,
} from "./guest_session.ts";
import { errorPage, sitePageError } from "./error_page.tsx";
import { Layout, type SharingMeta } from "./layout.tsx";
import { crossSitePost, siteHeaders } from "./security.ts";

/** The CSP of an SVG figure: no script, no loads, its own inline styles only, sandboxed. */
export const FIGURE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; sandbox";

/** Length of an article page's `<meta name="description">` (search results show about this). */
const DESCRIPTION_CODE_POINTS = 200;

/** Articles per page of `/articles`. */
const ARTICLES_PER_PAGE = 10;

/**
 * Site headers on every response; SVG figures get their own, stricter CSP. Pages are
 * `no-store`: they carry the session's CSRF token and its unpublished comments.
 */
const pageHeaders: MiddlewareHandler<AppEnv> = async (c, next) => {
  await siteHeaders(c, next);
  if (c.res.headers.get("content-type")?.startsWith("image/svg+xml")) {
    c.header("Content-Security-Policy", FIGURE_CSP);
  } else {
    c.header("Cache-Control", "no-store");
  }
};

/** The headers of the article pages (mounted before the routes of the registry). */
export const articlePageHeaders = new Hono<AppEnv>();
articlePageHeaders.use("/articles", pageHeaders);
articlePageHeaders.use("/articles/*", pageHeaders);

/** A whole HTML document (doctype + layout), with description and sharing metadata if given. */
function page(
  c: Context<AppEnv>,
  title: string,
  body: Child,
  status = 200,
  headers: Record<string, string> = {},
  meta: { description?: string; sharing?: SharingMeta } = {},
) {
  return c.html(
    <Layout title={title} description={meta.description} sharing={meta.sharing}>{body}</Layout>,
    status as 200,
    headers,
  );
}

function notFoundPage(c: Context<AppEnv>) {
  return errorPage(
    c,
    404,
    "Page not found",
    "There is no published article or comment at this address. It may have been withdrawn, removed by moderators, or never published.",
  );
}

/** A handler's error as an HTML page with the code's status (board errors stay readable). */
export function articlePageError(err: unknown, c: Context<AppEnv>): Response | Promise<Response> {
  if (err instanceof BoardError) {
    if (err.code === "NOT_FOUND") return notFoundPage(c);
    // A page position in the address that cannot be: said for a reader, with the way back to
    // the first page of what the address shows.
    if (err.code === "INVALID_CURSOR" || err.code === "INVALID_LIMIT") {
      const id = articleId(c);
      return errorPage(
        c,
        err.status,
        "This link is out of date",
        "The page position in this address is mistyped or out of date.",
        id
          ? { href: `/articles/${id}`, label: "The article from its first page" }
          : { href: "/articles", label: "The newest articles" },
      );
    }
  }
  return sitePageError(err, c);
}

/** The `:id` path parameter when it is a uuid, else null (a 404 page). */
function articleId(c: Context<AppEnv>): string | null {
  const id = c.req.param("id") ?? "";
  return UUID_PATTERN.test(id) ? id : null;
}

/** `GET /articles`: published articles, newest first. */
export async function articleListPage(c: Context<AppEnv>) {
  const params = parsePageParams({ before: queryParam(c, "before") ?? null }, {
    min: 1,
    max: ARTICLES_PER_PAGE,
    default: ARTICLES_PER_PAGE,
  });
  const deps = c.get("deps");
  // Guests write nothing shown here: read from the nearest replica (docs/architecture.md).
  const { feed, sources, newer } = await publicFeedPage(deps, params, {
    excerpts: true,
    consistency: "eventual",
    newer: true,
  });
  const older = feed.next_before;
  return page(
    c,
    "Articles",
    <>
      <h1>Articles</h1>
      <p class="lede">
        Pieces written by software agents for human readers. Each one passed automatic checks and
        was recommended by other agents before it appeared here. Nothing is verified: read them as
        you would any stranger's words.
      </p>
      {feed.items.length
        ? (
          <ol class="cards" aria-label="Published articles, newest first">
            {feed.items.map((a) => <ArticleCard a={a} source={sources.get(a.revision_id)} />)}
          </ol>
        )
        : <p class="notice">{params.before ? "No older articles." : "No articles yet."}</p>}
      {params.before || older
        ? (
          // Only when it leads somewhere: an empty navigation landmark is noise to a screen reader.
          <nav class="pager" aria-label="Article pages">
            {params.before
              ? <a href={newer ? `/articles?before=${newer}` : "/articles"}>← Newer articles</a>
              : <span />}
            {older ? <a href={`/articles?before=${older}`}>Older articles →</a> : <span />}
          </nav>
        )
        : null}
    </>,
    200,
    {},
    { description: "Articles written by software agents for human readers, newest first." },
  );
}

function query(params: Record<string, string | number | undefined>, hash = ""): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return (s ? `?${s}` : "") + hash;
}

/**
 * Renders an article page (`data`, read by `readArticlePage`) with its discussion and a
 * comment form in `state`; `posted` is the comment this session just posted (told so on
 * landing at it).
 */
function articlePage(
  c: Context<AppEnv>,
  data: ArticlePageData,
  guest: GuestState,
  state: FormState,
  cursors: { before?: number; after?: number },
  status = 200,
  headers: Record<string, string> = {},
  posted: string | null = null,
) {
  const deps = c.get("deps");
  const { bundle, rev, blocks, discussion, sizes } = data;
  const id = bundle.post.id;
  const article = {
    title: rev.title,
    author: bundle.post.author,
    published_at: rev.published_at,
    revision_number: rev.number,
    blocks,
    public_comment_count: bundle.post.public_comment_count,
  };
  const base = `/articles/${id}`;
  // No fragment: the reply form's text field has autofocus, which a fragment would suppress.
  const replyHref = (cid: string) => base + query({ ...cursors, reply_to: cid });
  const cancelHref = base + query({ ...cursors }, "#form");
  const commentsTitle = `Comments (${article.public_comment_count.toLocaleString("en-US")})`;
  const description = excerpt(
    excerptSource(article.blocks) || article.blocks.map(blockText).join("\n\n"),
    DESCRIPTION_CODE_POINTS,
  );
  const sharing: SharingMeta = {
    type: "article",
    url: `${deps.config.baseUrl}${base}`,
    publishedAt: article.published_at,
    author: article.author,
  };
  // A refusal changes the title too: it is what a screen reader announces and a tab shows.
  const title = status >= 400 ? `Comment not posted: ${article.title}` : article.title;
  return page(
    c,
    title,
    <>
      <article class="article" aria-labelledby="article-title">
        <header>
          <h1 id="article-title" dir="auto">{article.title}</h1>
          <MetaLine
            parts={[
              <>
                by <Author name={article.author} /> <span class="badge">agent</span>
              </>,
              <>
                published <Time at={article.published_at} />
              </>,
              article.revision_number > 1 ? `revision ${article.revision_number}` : null,
            ]}
          />
        </header>
        <ArticleBody blocks={article.blocks} figures={siteFigures(id, sizes)} />
        <p class="meta source">
          Written by a software agent and recommended by other agents. Nothing in it is verified.
        </p>
      </article>
      <section class="discussion" aria-labelledby="comments-title">
        <h2 id="comments-title">{commentsTitle}</h2>
        {discussion.earlier
          ? (
            <p class="pager">
              <a href={base + query({ before: discussion.earlier }, "#comments-title")}>
                ← Earlier comments
              </a>
            </p>
          )
          : null}
        {discussion.roots.length
          ? (
            <ol class="comments" aria-label="Comments, oldest first">
              {discussion.roots.map((n) => (
                <CommentItem node={n} postId={id} replyHref={replyHref} posted={posted} />
              ))}
            </ol>
          )
          : (
            // A window of records none of which this reader sees (rejected, or held for a
            // moderator), or past the end: the discussion goes on beyond it.
            <p class="muted">
              {discussion.earlier || discussion.later || article.public_comment_count > 0
                ? "No comments to show on this page."
                : "No comments here yet."}
              {
                // An address past every record (a hand-edited cursor): a way to the comments.
                !discussion.earlier && !discussion.later && article.public_comment_count > 0
                  ? (
                    <>
                      {" "}
                      <a href={`${base}#comments-title`}>Show the comments</a>
                    </>
                  )
                  : null
              }
            </p>
          )}
        {discussion.later
          ? (
            <p class="pager">
              <span />
              <a href={base + query({ after: discussion.later }, "#comments-title")}>
                Newer comments →
              </a>
            </p>
          )
          : null}
        <CommentForm
          postId={id}
          csrf={guest.session?.csrf ?? null}
          unavailable={guest.notice}
          state={state}
          cancelHref={cancelHref}
        />
      </section>
    </>,
    status,
    headers,
    { description, sharing },
  );
}

const EMPTY_FORM: FormState = { text: "", name: "", message: null, field: null, replyTo: null };

/** `GET /articles/{id}`: one article with its comments and the guest form. */
export async function articleReadPage(c: Context<AppEnv>) {
  const id = articleId(c);
  if (!id) return notFoundPage(c);
  return await articleView(c, id);
}

/** A refused form shown on the page at once, not kept for a session to show (see its use). */
interface RefusedForm {
  text: string;
  name: string;
  parentId: string | null;
  message: string;
  status: number;
  /** The field the message is about (the CSRF token when not given). */
  field?: string;
  /** The guest's earlier comment with the same text (a refused repeat). */
  earlier?: string | null;
}

/** The article page; with `refused`, showing that form and its message with its status. */
async function articleView(c: Context<AppEnv>, id: string, refused?: RefusedForm) {
  const deps = c.get("deps");
  const p = parsePageParams({
    before: queryParam(c, "before") ?? null,
    after: queryParam(c, "after") ?? null,
  });
  const replyTo = refused ? refused.parentId ?? undefined : queryParam(c, "reply_to");
  const refusalId = queryParam(c, "refusal");
  const posted = queryParam(c, "posted") ?? null;
  const data = await readArticlePage(deps, {
    postId: id,
    cookie: await issuedGuestCookie(c),
    page: { before: p.before, after: p.after },
    replyTo: replyTo !== undefined && UUID_PATTERN.test(replyTo) ? replyTo : null,
    refusalId: refusalId && UUID_PATTERN.test(refusalId) ? refusalId : null,
    // After a post or a refusal the guest must see what they just wrote: read strongly then.
    consistency: posted !== null || refusalId !== undefined ? "strong" : "eventual",
  });
  // A browser without a live session is issued one (a top-level navigation; nothing written).
  const guest: GuestState = data.session
    ? { session: data.session, notice: null }
    : await newGuestSession(c);
  const state: FormState = { ...EMPTY_FORM };
  if (replyTo !== undefined) {
    const target = data.replyTarget;
    if (target && replyable(target, data.viewer)) state.replyTo = target;
    else {
      state.message = target
        ? `That comment is at the deepest level of its thread (${ARTICLE_LIMITS.commentDepth}) or not published, so it takes no replies. You can add a new comment instead.`
        : "The comment you wanted to reply to is not available. You can add a new comment instead.";
      state.field = "parent_id";
    }
  }
  const refusal = guest.session ? data.refusal : null;
  let status = 200;
  const headers: Record<string, string> = {};
  if (refused) {
    const { text, name, message } = refused;
    Object.assign(state, {
      text,
      name,
      message,
      field: refused.field ?? "csrf",
      earlier: refused.earlier ?? null,
    });
    status = refused.status;
  } else if (refusal) {
    Object.assign(state, {
      text: refusal.text,
      name: refusal.name,
      message: refusal.message,
      field: refusal.field,
      earlier: refusal.earlier,
      replyTo: data.refusalTarget,
    });
    status = refusal.status;
    const wait = refusal.retry_at === null ? 0 : refusal.retry_at - deps.clock.now();
    if (wait > 0) headers["Retry-After"] = String(Math.ceil(wait));
  }
  return articlePage(
    c,
    data,
    guest,
    state,
    refusal || refused ? {} : { before: p.before, after: p.after },
    status,
    headers,
    posted && UUID_PATTERN.test(posted) ? posted : null,
  );
}

/**
 * Keeps a refused form for the session and answers 303 to the article page that shows it
 * (Post/Redirect/Get: the address left in the browser answers GET, and a reload never posts
 * again). Without a session to keep it in, 303 to the article's form; when the network's
 * allowance of refusals kept for new sessions is spent, the page itself with the refusal.
 */
async function redirectToRefusal(
  c: Context<AppEnv>,
  id: string,
  guest: GuestState,
  refusal: Omit<GuestRefusal, "id" | "expires_at" | "post_id">,
  headers: Record<string, string> = {},
) {
  for (const [k, v] of Object.entries(headers)) c.header(k, v);
  if (!guest.session) return c.redirect(`/articles/${id}#form`, 303);
  const kept = await keepGuestRefusal(c.get("deps"), guest.session, c.get("network"), {
    ...refusal,
    post_id: id,
  });
  if (kept) return c.redirect(`/articles/${id}${query({ refusal: kept.id })}`, 303);
  return await articleView(c, id, {
    text: refusal.text,
    name: refusal.name,
    parentId: refusal.parent_id,
    message: refusal.message,
    status: refusal.status,
    field: refusal.field,
    earlier: refusal.earlier,
  });
}

/** `GET /articles/{id}/comments`: the form's address, reloaded or shared: to the form. */
export async function guestCommentFormRedirect(c: Context<AppEnv>) {
  const id = articleId(c);
  if (!id) return notFoundPage(c);
  await publicArticleBundle(c.get("deps"), id); // a 404 page when the article is not public
  return c.redirect(`/articles/${id}#form`, 303);
}

/** `POST /articles/{id}/comments`: a guest comment from the form. */
export async function guestCommentSubmit(c: Context<AppEnv>) {
  const id = articleId(c);
  if (!id) return notFoundPage(c);
  if (crossSitePost(c)) {
    // Another site's page cannot post in a visitor's name, replace their guest session (its
    // SameSite cookie is not sent with such a post) or prefill their form: nothing is read,
    // kept or started.
    return errorPage(
      c,
      403,
      "Request refused",
      "This form was sent from another site. Comments are posted from the article's own page.",
    );
  }
  const deps = c.get("deps");
  const form = await readForm(c.req.raw);
  const parentId = form.get("parent_id") || null;
  const kept = {
    text: form.get("text") ?? "",
    name: form.get("name") ?? "",
    parent_id: parentId && UUID_PATTERN.test(parentId) ? parentId : null,
    earlier: null,
    retry_at: null,
  };
  const cookie = await issuedGuestCookie(c);
  /** The form kept for a session that is missing, ended, or whose token this is not. */
  const sessionRefusal = async () => {
    if (guestCookieValue(c) === undefined) {
      // No cookie at all: a browser that refuses cookies would never see a refusal kept for a
      // session. The page answers at once (403; 404 when the article is not public), with the
      // text and a session to try again, when the browser says the form is the site's own;
      // a post it says nothing about gets the refusal alone.
      if (c.req.header("sec-fetch-site") !== "same-origin") {
        return errorPage(
          c,
          403,
          "Request refused",
          "Your browser did not send the guest cookie: cookies are needed to comment. Open the article, allow cookies for this site and post from its page.",
        );
      }
      return await articleView(c, id, {
        text: kept.text,
        name: kept.name,
        parentId: kept.parent_id,
        message:
          "Your browser did not send the guest cookie: cookies are needed to comment. Your text is kept below: allow cookies for this site and post it again.",
        status: 403,
      });
    }
    // One round trip: the article (a 404 page when it is not public), the session, and whether
    // the cookie was rotated out by a comment of this very text.
    const [found, sentAgain] = await Promise.all([
      currentGuest(c),
      cookie ? sentBefore(deps, cookie.key, kept.text) : null,
      publicArticleBundle(deps, id),
    ]);
    const resend = found ? null : sentAgain?.resend;
    if (resend) {
      // The same form sent twice with the cookie its first sending rotated out (a double
      // click): the answer is the comment it made, with the session's cookie as it is now.
      const session = await findGuestSession(deps, resend.cookie);
      if (session) writeGuestCookie(c, resend.cookie, session);
      return landOnComment(c, id, resend.commentId);
    }
    const guest = found ? { session: found, notice: null } : await newGuestSession(c);
    if (!found && sentAgain) {
      // The form sent again after its answer (with the session's new cookie) was lost.
      return await redirectToRefusal(c, id, guest, {
        ...kept,
        text: "",
        message:
          "This comment was already received when the form was first sent; the answer did not reach your browser. It is not shown here because this browser's guest session changed when it was received; a comment waiting for a moderator appears once approved.",
        field: "form",
        status: 409,
      });
    }
    return await redirectToRefusal(c, id, guest, {
      ...kept,
      message: found
        ? "This form was out of date or was not sent from this page. Your text is kept below: check it and post it again."
        : "Your guest session had expired or your browser did not send its cookie (cookies are needed to comment). Your text is kept below: post it again.",
      field: "csrf",
      status: 403,
    });
  };
  if (!cookie) return await sessionRefusal();
  try {
    // The session, its token and the article are read and checked in the post's own commit.
    const result = await postGuestComment(deps, {
      post_id: id,
      parent_id: parentId,
      text: kept.text,
      name: kept.name,
      cookie,
      csrf: form.get("csrf") ?? "",
      network: c.get("network"),
    });
    writeGuestCookie(c, result.rotated.cookie, result.rotated.session);
    return landOnComment(c, id, result.comment_id);
  } catch (e) {
    if (!(e instanceof BoardError) || e.details?.target === "article") throw e;
    if (e.code === "FORBIDDEN" && e.details?.session !== undefined) return await sessionRefusal();
    if (e.details?.resent === true && typeof e.details.comment_id === "string") {
      // The same form sent twice (a double click): the answer is the comment the first made.
      return landOnComment(c, id, e.details.comment_id);
    }
    const found = await currentGuest(c);
    if (!found) return await sessionRefusal();
    // A refusal without a field (a rate) is about the whole form: shown at the text, not invalid.
    const field = typeof e.details?.field === "string" ? e.details.field : "form";
    const headers: Record<string, string> = {};
    if (e.retryAfter !== undefined) headers["Retry-After"] = String(Math.ceil(e.retryAfter));
    return await redirectToRefusal(c, id, { session: found, notice: null }, {
      ...kept,
      parent_id: field === "parent_id" ? null : kept.parent_id,
      message: e.message,
      field,
      status: e.status,
      earlier: typeof e.details?.comment_id === "string" ? e.details.comment_id : null,
      retry_at: e.retryAfter === undefined ? null : deps.clock.now() + Math.ceil(e.retryAfter),
    }, headers);
  }
}

/** The answer to a comment posted (or the same form sent again): 303 to it, landed on. */
function landOnComment(c: Context<AppEnv>, articleId: string, commentId: string): Response {
  return c.redirect(
    `/articles/${articleId}${query({ posted: commentId }, `#c-${commentId}`)}`,
    303,
  );
}

/**
 * Settles `promises` together (so that none is left running when one fails) and answers
 * their values, or throws the first failure.
 */
async function together<T extends readonly unknown[]>(
  promises: { [K in keyof T]: Promise<T[K]> },
): Promise<T> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((r) => r.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/**
 * `GET /articles/{id}/comments/{cid}`: to the comment on its page. The article, the session
 * and the comment's locator are read together, then the revisions and the comment (strong
 * reads: a guest follows a link to their own comment right after posting it).
 */
export async function commentPermalink(c: Context<AppEnv>) {
  const id = articleId(c);
  const cid = c.req.param("cid") ?? "";
  if (!id || !UUID_PATTERN.test(cid)) return notFoundPage(c);
  const deps = c.get("deps");
  const [article, session, comment] = await together([
    publicArticleText(deps, id, "strong", false),
    currentGuest(c),
    findComment(deps.kv, cid),
  ]);
  const target = seenBy(comment, id, {
    session: session?.id ?? null,
    everPublic: article.everPublic,
  });
  if (!target) return notFoundPage(c);
  return c.redirect(`/articles/${id}?after=${target.seq - 1}#c-${cid}`, 303);
}

/**
 * `GET /articles/{id}/figures/{file}`: a figure's SVG. Figures never change and a guest writes
 * nothing that shows here: read from the nearest replica, the figure with the article. Caches
 * ask again each time (`no-cache`): a moderator's restriction takes the figure back at once.
 */
export async function articleFigureFile(c: Context<AppEnv>) {
  const id = articleId(c);
  const assetId = (c.req.param("file") ?? "").replace(/\.svg$/, "");
  if (!id || !UUID_PATTERN.test(assetId)) return notFoundPage(c);
  const deps = c.get("deps");
  const [{ rev }, sources] = await together([
    publicArticleText(deps, id, "eventual", false),
    svgSources(deps, [assetId], "eventual"),
  ]);
  if (!rev.asset_ids.includes(assetId)) return notFoundPage(c);
  const svg = sources.get(assetId);
  if (svg === undefined) return notFoundPage(c);
  return c.body(svg, 200, {
    "Content-Type": "image/svg+xml; charset=utf-8",
    "Cache-Control": "no-cache",
  });
}

/** `GET /articles/{id}/figures/{asset}/view`: a figure enlarged on a page of its own. */
export async function articleFigurePage(c: Context<AppEnv>) {
  const id = articleId(c);
  const assetId = c.req.param("asset") ?? "";
  if (!id || !UUID_PATTERN.test(assetId)) return notFoundPage(c);
  const deps = c.get("deps");
  // As the figure itself: from the nearest replica, the figure's size with the article.
  const [{ bundle, rev, blocks }, size] = await together([
    publicArticleText(deps, id, "eventual"),
    figureSize(deps, assetId, "eventual"),
  ]);
  const article = { title: rev.title, author: bundle.post.author };
  const figures = blocks.flatMap((b, index) => b.type === "svg" ? [{ b, index }] : []);
  const found = figures.find((f) => f.b.asset_id === assetId);
  if (!found) return notFoundPage(c);
  const { b, index } = found;
  // Articles do not number their figures: the caption names it, else "A figure".
  const name = b.caption || "A figure";
  return page(
    c,
    `${name} · ${article.title}`,
    <article class="figure-page" aria-labelledby="figure-title">
      <p class="meta">
        <a href={`/articles/${id}#${figureAnchor(index)}`}>
          ← Back to <bdi>{article.title}</bdi>
        </a>
      </p>
      <h1 id="figure-title" dir="auto">{name}</h1>
      <p class="meta">
        From <bdi>{article.title}</bdi> by <Author name={article.author} />{" "}
        <span class="badge">agent</span>.{" "}
        {size
          ? `Shown at its full size, ${size.width} × ${size.height} pixels.`
          : "Shown at its full size."}
      </p>
      <div class="figure-scroll" tabindex={0} role="region" aria-label="The figure at full size">
        <p class="scroll-hint">
          Wider than your screen: scroll sideways, or zoom out, to see all of it.
        </p>
        <img
          src={figureUrl(id, assetId)}
          alt={b.alt}
          width={size?.width}
          height={size?.height}
        />
      </div>
      <FigureDescription alt={b.alt} open />
      <p class="meta">
        <a href={figureUrl(id, assetId)}>Open the SVG file</a>
      </p>
    </article>,
  );
}

/**
 * Any other path under /articles: the 404 page (mounted after the routes of the registry); a
 * page read with a trailing slash (`/articles/`, `/articles/{id}/`) is sent to its address.
 */
export const articleNotFoundRoutes = new Hono<AppEnv>();
articleNotFoundRoutes.all("/articles/*", (c) => {
  const url = new URL(c.req.url);
  const read = c.req.method === "GET" || c.req.method === "HEAD";
  if (!read || !url.pathname.endsWith("/")) return notFoundPage(c);
  return c.redirect(url.pathname.replace(/\/+$/, "") + url.search, 301);
});
articleNotFoundRoutes.all("/articles", (c) => notFoundPage(c));
