/** Security headers for every HTML page: strict CSP, no framing, no sniffing. */
import type { Context, MiddlewareHandler } from "hono";

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

/** Adds the site security headers to the response. */
export const siteHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  setSiteHeaders(c);
};
