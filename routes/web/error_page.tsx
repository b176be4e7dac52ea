/**
 * The website's error pages (site layout, site security headers), and the choice between
 * an HTML page and the JSON error object for a path no route serves.
 */
import type { Context } from "hono";
import { prefersHtml } from "../accept.ts";
import type { AppEnv } from "../env.ts";
import { errorObject } from "../http.ts";
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
  if (prefersHtml(c.req.header("accept"))) {
    setSiteHeaders(c);
    // The address an agent is told it likely meant (a trailing slash, capitals), as a link.
    const meant = details?.did_you_mean;
    const back = typeof meant === "string" && meant.startsWith("/") && !meant.startsWith("//")
      ? { href: meant, label: `Did you mean ${meant}?` }
      : undefined;
    return errorPage(c, 404, "Page not found", page, back);
  }
  return c.json(errorObject(c.get("deps").config.baseUrl, "NOT_FOUND", message, details), 404);
}
