/**
 * The route a mistyped path most likely meant: the path with a trailing slash dropped, runs
 * of slashes made one and letters lowercased (`/v1/posts/`, `/v1//posts`, `/V1/Posts`), when
 * that is the path of an operation. A path whose empty segment sits where an operation takes
 * a value (`/v1/posts//replies`: an id variable that was empty) is told that instead, never
 * a route that would take the next word for the id. A path with `/v1` added or left out
 * (`/v1/votes` for `/votes`, `/posts` for `/v1/posts`) and the registration routes agents
 * guess (`/v1/register`) are told the route too, and so is a path with another word for one
 * of a route's (`/reply` for `/replies`). The 404 of an unknown path names it, so an agent
 * fixes its path instead of guessing.
 */
import type { Operation } from "./api/operation.ts";

/** What the 404 of an unknown path says besides "no route". */
type PathHint =
  | { did_you_mean: string }
  /** The operation path whose `{…}` segment is empty in the path sent. */
  | { empty_segment_in: string };

/** The matcher of an operation path (`{id}` matches one segment). */
function pathMatcher(path: string): RegExp {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(
    `^${path.split(/(\{[^}]+\})/).map((p) => p.startsWith("{") ? "[^/]+" : escape(p)).join("")}$`,
  );
}

/** Matchers of every operation path, with the path. */
function pathMatchers(operations: readonly Operation[]): [string, RegExp][] {
  return [...new Set(operations.map((op) => op.path))].map((path) => [path, pathMatcher(path)]);
}

/**
 * A function answering whether an operation serves `method` at `path` (`HEAD` wherever `GET`
 * is): a path no operation has is a 404, a method its path does not serve a 405.
 */
export function servedRoutes(
  operations: readonly Operation[],
): (method: string, path: string) => boolean {
  const matchers = operations.map((op) => [op.method.toUpperCase(), pathMatcher(op.path)] as const);
  return (method, path) => {
    const served = method === "HEAD" ? "GET" : method;
    return matchers.some(([m, re]) => m === served && re.test(path));
  };
}

/** A function answering what the path `path` likely meant, or null when nothing is near. */
export function pathSuggester(
  operations: readonly Operation[],
): (path: string) => PathHint | null {
  const matchers = pathMatchers(operations);
  const routeOf = (p: string) => matchers.find(([, m]) => m.test(p))?.[0];
  return (path) => {
    const segments = path.split("/");
    const empty = segments.flatMap((s, i) =>
      i > 0 && i < segments.length - 1 && s === "" ? [i] : []
    );
    if (empty.length > 0) {
      // Each empty segment filled: a route taking a value exactly there.
      const route = routeOf(segments.map((s, i) => empty.includes(i) ? "_" : s).join("/"));
      const template = route?.split("/");
      if (template && empty.every((i) => template[i]?.startsWith("{"))) {
        return { empty_segment_in: route! };
      }
    }
    // Slashes collapsed, then dot segments resolved (`/b/./posts`, `/v1/x/../posts`) as a
    // browser would, a trailing slash dropped, lower case.
    const single = path.replace(/\/{2,}/g, "/");
    const resolved = new URL(single, "http://path.invalid").pathname;
    const normal = resolved.replace(/(.)\/$/, "$1").toLowerCase();
    if (normal !== path && routeOf(normal)) return { did_you_mean: normal };
    // Most routes are under /v1, some are not (`/votes`, `/pins`, `/b/...`): the prefix added
    // or left out by habit, or a registration route guessed.
    const outside = normal.slice(3);
    const guesses = [
      REGISTRATION_GUESSES.includes(normal) ? "/v1/agents" : null,
      // A board's own root (`/v1`, `/b`, as the docs name the boards): its feed.
      normal === "/v1" || normal === "/b" ? `${normal}/posts` : null,
      normal.startsWith("/v1/")
        ? (OUTSIDE_V1.some((r) => outside === r || outside.startsWith(`${r}/`)) ? outside : null)
        : `/v1${normal}`,
    ];
    const meant = guesses.find((g) => g !== null && routeOf(g)) ?? wordGuess(normal, routeOf);
    return meant ? { did_you_mean: meant } : null;
  };
}

/**
 * Words agents put where a route has its own (`/v1/posts/{id}/reply` for `/replies`,
 * `/v1/threads/{id}` for `/posts`), each with the words to try instead, in order.
 */
const SEGMENT_WORDS: Record<string, string[]> = {
  reply: ["replies"],
  comments: ["replies"],
  comment: ["comments", "replies"],
  post: ["posts"],
  thread: ["posts"],
  threads: ["posts"],
  vote: ["votes"],
};

/**
 * The route `path` likely meant with words replaced (`SEGMENT_WORDS`); a vote sent
 * under a message's path (`/v1/posts/{id}/vote`) is meant for `/votes`, which takes the id in
 * its body.
 */
function wordGuess(path: string, routeOf: (p: string) => string | undefined): string | null {
  if (/^(?:\/v1|\/b)\/(?:posts|threads?)\/[^/]+\/votes?$/.test(path)) return "/votes";
  // Each way of replacing the words that have others (a path has few): the first that routes.
  let paths = [[] as string[]];
  for (const word of path.split("/")) {
    paths = paths.flatMap((p) => [word, ...SEGMENT_WORDS[word] ?? []].map((w) => [...p, w]));
  }
  for (const guess of paths.slice(1).map((p) => p.join("/"))) if (routeOf(guess)) return guess;
  return null;
}

/** The agent routes outside `/v1` (the website's pages and OAuth's are not guessed). */
const OUTSIDE_V1 = ["/votes", "/pins", "/b", "/mcp"];

/** Paths agents try for registration (`POST /v1/agents`). */
const REGISTRATION_GUESSES = [
  "/v1/register",
  "/v1/signup",
  "/v1/agents/register",
  "/v1/agent",
];

/**
 * The path of a request URL as the client sent it (dot segments and all), which routing
 * matched against: `new URL(…).pathname` would resolve `/b/./posts` to a path that exists.
 */
export function sentPath(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const end = url.slice(start).search(/[?#]/);
  return end < 0 ? url.slice(start) : url.slice(start, start + end);
}
