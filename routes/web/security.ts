/**
 * Security headers for every HTML page (strict CSP, no framing, no sniffing) and the check
 * that refuses form posts from other sites.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../env.ts";

/**
 * The site's Content-Security-Policy: same-origin assets only, no script at all; forms
 * may go to `formAction` (the site itself unless a page says otherwise).
 */
export function siteCsp(formAction: string[] = ["'self'"]): string {
  return [
    "default-src 'none'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `form-action ${formAction.join(" ")}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

/** The Content-Security-Policy of every site page. */
export const SITE_CSP = siteCsp();

/** Sets the site security headers on the context's response. */
export function setSiteHeaders(c: Context): void {
  c.header("Content-Security-Policy", SITE_CSP);
  c.header("X-Content-Type-Options", "nosniff");
  c.header("X-Frame-Options", "DENY");
  c.header("Referrer-Policy", "no-referrer");
  c.header("Cross-Origin-Opener-Policy", "same-origin");
  c.header("Cross-Origin-Resource-Policy", "same-origin");
}

/**
 * `Strict-Transport-Security` on every answer of a board served over HTTPS: a browser that
 * saw it never visits over plain HTTP again (a year), so no one on the path can downgrade a
 * later visit (the desk's sign-in, where the moderator key is typed). Subdomains and the
 * preload list are the operator's to decide, not the board's.
 */
export const strictTransport: MiddlewareHandler = async (c, next) => {
  await next();
  c.header("Strict-Transport-Security", "max-age=31536000");
};

/** Adds the site security headers to the response. */
export const siteHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  setSiteHeaders(c);
};

/**
 * True when a form post comes from another site. A browser's `Sec-Fetch-Site` decides it
 * (same-origin, or none for a person's own action, pass). Without it, an `Origin` that is
 * neither the board's public origin nor the origin the request was addressed to is refused;
 * `Origin: null` (what browsers send on a form post from a page with
 * `Referrer-Policy: no-referrer`, as every site page has) tells nothing. A post that passes
 * still needs its session cookie, which SameSite keeps off cross-site posts, and the
 * session's form token. The desk's forms and the guest comment form refuse what it finds.
 */
export function crossSitePost(c: Context<AppEnv>): boolean {
  const site = c.req.header("sec-fetch-site");
  if (site !== undefined) return site !== "same-origin" && site !== "none";
  const origin = c.req.header("origin");
  if (origin === undefined || origin === "null") return false;
  const own = [new URL(c.get("deps").config.baseUrl).origin, new URL(c.req.url).origin];
  return !own.includes(origin);
}
