/**
 * The website's error pages (site layout, site security headers), and the choice between
 * an HTML page and the JSON error object for a path no route serves.
 */
import type { Context } from "hono";
import { BoardError } from "../../domain/errors.ts";
import { TxConflictError } from "../../kv/tx.ts";
import { answersWithPage } from "../accept.ts";
import type { AppEnv } from "../env.ts";
import { errorResponse, storeCannotWrite } from "../http.ts";
import { Layout } from "./layout.tsx";
import { setSiteHeaders } from "./security.ts";

/** An HTML error page in the site layout; `back` is a way back offered before the others. */
export function errorPage(
  c: Context<AppEnv>,
  status: number,
  title: string,
  message: string,
  back?: { href: string; label: string },
) {
  const headers: Record<string, string> = {};
  if (status === 429 || status === 503) headers["Retry-After"] = "1";
  return c.html(
    <Layout title={title}>
      <section class="error-page" aria-labelledby="error-title">
        <h1 id="error-title">{title}</h1>
        <p>{message}</p>
        <p>
          {back
            ? (
              <>
                <a href={back.href}>{back.label}</a> ·{" "}
              </>
            )
            : null}
          <a href="/articles">Back to the articles</a> · <a href="/">Home</a> ·{" "}
          <a href="/docs">Documentation</a>
        </p>
      </section>
    </Layout>,
    status as 200,
    headers,
  );
}

/** What a page says of a handler's error: its status, a title and a message. */
export interface PageFailure {
  status: number;
  title: string;
  message: string;
}

/**
 * What a person is told of a page handler's error, where an agent gets the JSON error object:
 * a board refusal keeps its status and message, a busy store is 503, anything else is 500
 * (logged, its details kept from the page).
 */
export function pageFailure(err: unknown): PageFailure {
  if (err instanceof BoardError) {
    return {
      status: err.status,
      title: err.status === 429 ? "Please wait" : "That did not work",
      message: err.message,
    };
  }
  if (err instanceof TxConflictError) {
    return { status: 503, title: "The site is busy", message: "Please try again in a moment." };
  }
  if (storeCannotWrite(err)) {
    return {
      status: 503,
      title: "The site cannot save right now",
      message: "Reading works; please try again later.",
    };
  }
  console.error("website error", err);
  return {
    status: 500,
    title: "Something went wrong",
    message: "Something went wrong on our side; try again later.",
  };
}

/**
 * A 503 refusal that reached the app's error handler — most made before any page ran (memory
 * load shedding, a stop under way) — as a browser is shown it: a short page in the site layout
 * with `Retry-After`, where an agent gets the error object. Null for any other error or client.
 */
export function refusedBeforePage(
  err: unknown,
  c: Context<AppEnv>,
): Response | Promise<Response> | null {
  if (!(err instanceof BoardError) || err.status !== 503) return null;
  if (!answersWithPage(c)) return null;
  setSiteHeaders(c);
  return errorPage(c, 503, "The site is busy", "Please try again in a moment.");
}

/** A page handler's error as an HTML page in the site layout (`pageFailure`). */
export function sitePageError(err: unknown, c: Context<AppEnv>): Response | Promise<Response> {
  const { status, title, message } = pageFailure(err);
  return errorPage(c, status, title, message);
}

const NO_PAGE = "There is no page at this address. The link may be mistyped or out of date.";

/**
 * A 404: an HTML page for browsers (`page`, or a general message; a link to
 * `details.did_you_mean` when there is one), the error object with `message` for agents.
 */
export function notFound(
  c: Context<AppEnv>,
  message: string,
  page = NO_PAGE,
  details?: Record<string, unknown>,
): Response | Promise<Response> {
  if (answersWithPage(c)) {
    setSiteHeaders(c);
    // The address an agent is told it likely meant (a trailing slash, capitals), as a link.
    const meant = details?.did_you_mean;
    const back = typeof meant === "string" && meant.startsWith("/") && !meant.startsWith("//")
      ? { href: meant, label: `Did you mean ${meant}?` }
      : undefined;
    return errorPage(c, 404, "Page not found", page, back);
  }
  return errorResponse(c, new BoardError("NOT_FOUND", message, details));
}
