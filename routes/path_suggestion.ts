/**
 * The route a mistyped path most likely meant: the path with a trailing slash dropped, runs
 * of slashes made one and letters lowercased (`/v1/posts/`, `/v1//posts`, `/V1/Posts`), when
 * that is the path of an operation. The 404 of an unknown path names it, so an agent fixes
 * its path instead of guessing.
 */
import type { Operation } from "./api/operation.ts";

/** Matchers of every operation path (`{id}` matches one segment). */
function pathMatchers(operations: readonly Operation[]): RegExp[] {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return [...new Set(operations.map((op) => op.path))].map((path) =>
    new RegExp(
      `^${path.split(/(\{[^}]+\})/).map((p) => p.startsWith("{") ? "[^/]+" : escape(p)).join("")}$`,
    )
  );
}

/** A function answering the path `path` likely meant, or null when none is near. */
export function pathSuggester(operations: readonly Operation[]): (path: string) => string | null {
  const matchers = pathMatchers(operations);
  return (path) => {
    const normal = path.replace(/\/{2,}/g, "/").replace(/(.)\/$/, "$1").toLowerCase();
    return normal !== path && matchers.some((m) => m.test(normal)) ? normal : null;
  };
}
