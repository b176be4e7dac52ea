/**
 * SVG safety: parse with a real XML parser (saxes), reject what could run script or
 * load anything from outside the document, and re-serialise what is left through an
 * allow-list (docs/articles.md "SVG safety").
 *
 * Rejected (a failure listed with its element path and line/column): DOCTYPE (so no
 * entity is ever declared or expanded), processing instructions (`xml-stylesheet`),
 * `script`, `foreignObject`, HTML and other active elements, event-handler attributes
 * (`on*`), `href`/`xlink:href`/`url()` to anything but an in-document `#fragment`,
 * `javascript:`/`vbscript:`/`data:` URLs anywhere, animations that target `href`,
 * `on*` or `style`, CSS with `@import`, escapes, `expression()` and similar (checked in
 * every attribute value, escapes decoded, and in the whole text of each `<style>`:
 * svg_css.ts), and XML that is not well-formed. Neutralised (dropped and reported in
 * `removed`): comments, elements and attributes not on the allow-list (editor metadata
 * and the like), markup inside `<style>`.
 *
 * Every check is linear in the input; parsing stops at the size limits (elements,
 * nesting, `<style>` text) and after 100 failures.
 */
import { SaxesParser, type SaxesTagNS } from "saxes";
import { takeCodeUnits, unfitText, utf8Length } from "../text.ts";
import { holdsCredential, type OperatorSecrets } from "../accounts/mod.ts";
import { ARTICLE_LIMITS } from "./article_limits.ts";
import { cssProblems, FRAGMENT, hasScriptUrl, stripCssComments } from "./svg_css.ts";

const SVG_NS = "http://www.w3.org/2000/svg";
const XLINK_NS = "http://www.w3.org/1999/xlink";
const XML_NS = "http://www.w3.org/XML/1998/namespace";
const XMLNS_NS = "http://www.w3.org/2000/xmlns/";
const XHTML_NS = "http://www.w3.org/1999/xhtml";

/** One reason an SVG is refused, with where it is. */
interface SvgFailure {
  rule: string;
  message: string;
  /** Element path such as `svg > g[2] > script`. */
  element: string;
  line: number;
  column: number;
}

export interface SvgResult {
  failures: SvgFailure[];
  /** The sanitised, re-serialised SVG (null when there is any failure). */
  svg: string | null;
  /** What the allow-list dropped (neutralised, not a failure). */
  removed: string[];
  width: string | null;
  height: string | null;
  view_box: string | null;
}

/** A set from a space-separated list. */
function words(list: string): Set<string> {
  return new Set(list.split(" "));
}

const ALLOWED_ELEMENTS = words(
  "svg g defs title desc symbol use path rect circle ellipse line polyline polygon text " +
    "tspan textPath linearGradient radialGradient stop clipPath mask pattern marker style " +
    "a switch filter feBlend feColorMatrix feComponentTransfer feFuncR feFuncG feFuncB " +
    "feFuncA feComposite feConvolveMatrix feDiffuseLighting feDisplacementMap " +
    "feDistantLight feDropShadow feFlood feGaussianBlur feMerge feMergeNode feMorphology " +
    "feOffset fePointLight feSpecularLighting feSpotLight feTile feTurbulence animate " +
    "animateTransform animateMotion mpath set",
);

/** Elements refused outright, in any namespace (compared lower-case). */
const FORBIDDEN_ELEMENTS = words(
  "script foreignobject iframe frame frameset embed object applet handler listener meta " +
    "link base form input button textarea html body audio video portal",
);

const ALLOWED_ATTRIBUTES = words(
  "id class style x y x1 y1 x2 y2 cx cy r rx ry fx fy fr width height viewBox " +
    "preserveAspectRatio d points pathLength transform fill fill-opacity fill-rule stroke " +
    "stroke-width stroke-opacity stroke-linecap stroke-linejoin stroke-miterlimit " +
    "stroke-dasharray stroke-dashoffset opacity color display visibility font-family " +
    "font-size font-weight font-style font-variant text-anchor text-decoration " +
    "dominant-baseline alignment-baseline baseline-shift letter-spacing word-spacing " +
    "writing-mode direction dx dy rotate textLength lengthAdjust startOffset method " +
    "spacing side offset stop-color stop-opacity gradientUnits gradientTransform " +
    "spreadMethod clip-path clip-rule clipPathUnits mask maskUnits maskContentUnits " +
    "marker-start marker-mid marker-end markerWidth markerHeight markerUnits refX refY " +
    "orient patternUnits patternContentUnits patternTransform filter filterUnits " +
    "primitiveUnits flood-color flood-opacity lighting-color stdDeviation in in2 result " +
    "mode operator k1 k2 k3 k4 values type tableValues slope intercept amplitude exponent " +
    "baseFrequency numOctaves seed stitchTiles scale xChannelSelector yChannelSelector " +
    "radius order kernelMatrix divisor bias targetX targetY edgeMode preserveAlpha " +
    "surfaceScale diffuseConstant specularConstant specularExponent kernelUnitLength " +
    "azimuth elevation z pointsAtX pointsAtY pointsAtZ limitingConeAngle vector-effect " +
    "shape-rendering text-rendering image-rendering color-interpolation " +
    "color-interpolation-filters paint-order mix-blend-mode isolation overflow role " +
    "aria-label aria-hidden aria-describedby aria-labelledby lang version href " +
    "attributeName attributeType begin dur end repeatCount repeatDur fill from to by " +
    "keyTimes keySplines keyPoints calcMode additive accumulate restart min max path " +
    "requiredExtensions systemLanguage",
);

/** Attributes whose value is CSS. */
const CSS_ATTRIBUTES = new Set(["style"]);

/** Text content is kept only inside these elements (whitespace elsewhere is dropped). */
const TEXT_ELEMENTS = new Set(["text", "tspan", "textPath", "title", "desc", "style", "a"]);

interface Node {
  name: string;
  attrs: Array<[string, string]>;
  children: Array<Node | string>;
  /** Inside an element being dropped: nothing below is emitted. */
  dropped: boolean;
  path: string;
  childCounts: Map<string, number>;
}

/** At most this many failures are listed; the parse stops at the last one. */
const MAX_FAILURES = 100;

/** Element paths in failures keep at most their last this many characters. */
const MAX_PATH = 200;

/** At most this many kinds of dropped content are listed in `removed`. */
const MAX_REMOVED = 50;

/**
 * Each kind listed in `removed` keeps at most this many characters (a longer element or
 * attribute name is cut, ending in "…"): the list is stored with the asset and its
 * Idempotency-Key record, which must stay under KV's 64 KiB a value however long the names.
 */
const MAX_REMOVED_CHARS = 100;

/** Thrown from a parser handler to stop parsing (a limit is reached; already reported). */
class StopParsing extends Error {}

function escapeText(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function escapeAttr(s: string): string {
  return escapeText(s).replace(/"/g, "&quot;").replace(/\t/g, "&#9;").replace(/\n/g, "&#10;")
    .replace(/\r/g, "&#13;");
}

/** The serialised document's text with the references `escapeText`/`escapeAttr` write decoded. */
function unescapeSerialized(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|#9|#10|#13);/g, (_, name: string) => SERIALIZED_REFS[name]);
}

const SERIALIZED_REFS: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  "#9": "\t",
  "#10": "\n",
  "#13": "\r",
};

/**
 * Checks and sanitises one SVG document. Returns every failure found; `svg` holds the
 * re-serialised safe document only when there is none. A figure is public, so one that holds
 * a credential (`holdsCredential`: a board API key or token, or the operator's moderator key
 * or BOARD_SECRET named by `secrets`) is refused.
 */
export function sanitizeSvg(source: string, secrets: OperatorSecrets): SvgResult {
  const failures: SvgFailure[] = [];
  const removed = new Set<string>();
  /** Notes what the allow-list dropped (at most MAX_REMOVED kinds are listed). */
  const drop = (named: string) => {
    // Cut between characters, never inside a surrogate pair.
    const what = named.length > MAX_REMOVED_CHARS
      ? `${takeCodeUnits(named, MAX_REMOVED_CHARS - 1)}…`
      : named;
    if (removed.size < MAX_REMOVED) removed.add(what);
    else if (!removed.has(what)) removed.add("(more)");
  };
  const result = (svg: string | null, root?: Node): SvgResult => ({
    failures,
    svg: failures.length ? null : svg,
    removed: [...removed],
    width: root ? attr(root, "width") : null,
    height: root ? attr(root, "height") : null,
    view_box: root ? attr(root, "viewBox") : null,
  });
  const bytes = utf8Length(source);
  if (bytes > ARTICLE_LIMITS.svgSourceBytes) {
    failures.push({
      rule: "size",
      message: `The SVG is ${bytes} bytes; the limit is ${ARTICLE_LIMITS.svgSourceBytes}.`,
      element: "(document)",
      line: 1,
      column: 1,
    });
    return result(null);
  }
  // What every text of the board refuses, refused before parsing: a lone surrogate (no XML
  // character either) and a credential (figures are public).
  const whole = (rule: string, message: string) => {
    failures.push({ rule, message, element: "(document)", line: 1, column: 1 });
    return result(null);
  };
  const unfit = unfitText(source);
  if (unfit) return whole("xml", `Not well-formed XML: the source ${unfit.message}.`);
  const credential = () =>
    whole(
      "content",
      "The SVG contains what looks like a board credential (a board API key or OAuth token, the moderator key or BOARD_SECRET); figures are public: remove it, and rotate or revoke the credential if it is real.",
    );
  if (holdsCredential(secrets, source)) return credential();

  const parser = new SaxesParser({ xmlns: true, position: true });
  const stack: Node[] = [];
  let root: Node | undefined;
  let elements = 0;
  let fatal = false;
  let usesXlink = false;
  let styleTextBytes = 0;
  let parsing = true;

  /** Records a failure; the 100th stops the parse (nothing more would be listed). */
  const fail = (rule: string, message: string, element: string) => {
    if (failures.length < MAX_FAILURES) {
      if (element.length > MAX_PATH) element = `… ${element.slice(-MAX_PATH)}`;
      failures.push({ rule, message, element, line: parser.line, column: parser.column });
    }
    if (parsing && failures.length >= MAX_FAILURES) throw new StopParsing();
  };
  /** Records a failure at a size limit and stops the parse there. */
  const stop = (message: string, element: string): never => {
    fail("size", message, element);
    throw new StopParsing();
  };
  const here = () => stack.length ? stack[stack.length - 1].path : "(document)";

  parser.on("error", (e) => {
    fail("xml", `Not well-formed XML: ${e.message.replace(/^(?:[^:]*:)?\d+:\d+: /, "")}`, here());
    fatal = true;
  });
  parser.on("doctype", () => {
    fail("doctype", "DOCTYPE declarations are not allowed (entities are never expanded).", here());
  });
  parser.on("processinginstruction", (pi) => {
    fail("processing_instruction", `Processing instruction "${pi.target}" is not allowed.`, here());
  });
  parser.on("comment", () => drop("comments"));

  parser.on("opentag", (tag: SaxesTagNS) => {
    elements++;
    const parent = stack[stack.length - 1];
    const local = tag.local;
    const ns = tag.uri === "" ? SVG_NS : tag.uri;
    const index = parent ? (parent.childCounts.get(local) ?? 0) + 1 : 1;
    if (parent) parent.childCounts.set(local, index);
    const path = parent ? `${parent.path} > ${local}${index > 1 ? `[${index}]` : ""}` : local;
    const node: Node = {
      name: local,
      attrs: [],
      children: [],
      dropped: !!parent?.dropped,
      path,
      childCounts: new Map(),
    };
    if (elements > ARTICLE_LIMITS.svgElements) {
      stop(`More than ${ARTICLE_LIMITS.svgElements} elements.`, path);
    }
    if (stack.length + 1 > ARTICLE_LIMITS.svgDepth) {
      stop(`Elements nest deeper than ${ARTICLE_LIMITS.svgDepth} levels.`, path);
    }
    if (parent?.name === "style" && !node.dropped) {
      // Markup inside <style> would split its text past the checks below.
      drop("elements inside <style>");
      node.dropped = true;
    }
    if (!parent && !(local === "svg" && ns === SVG_NS)) {
      fail("root", "The document element must be <svg> in the SVG namespace.", path);
    }
    if (FORBIDDEN_ELEMENTS.has(local.toLowerCase())) {
      fail("element", `<${tag.name}> is not allowed.`, path);
    } else if (ns === XHTML_NS) {
      fail("element", `HTML element <${tag.name}> is not allowed in SVG.`, path);
    }
    // Attribute checks run on every element, kept or dropped.
    for (const a of Object.values(tag.attributes)) {
      const name = a.name;
      const aLocal = a.local.toLowerCase();
      const value = a.value;
      if (a.uri === XMLNS_NS || name === "xmlns") continue;
      if (aLocal.startsWith("on")) {
        fail("event_handler", `Event-handler attribute "${name}" is not allowed.`, path);
        continue;
      }
      const isCss = CSS_ATTRIBUTES.has(aLocal) && a.uri === "";
      if (isCss && utf8Length(value) > ARTICLE_LIMITS.svgStyleAttributeBytes) {
        fail(
          "size",
          `Attribute "${name}" is over ${ARTICLE_LIMITS.svgStyleAttributeBytes} bytes.`,
          path,
        );
        continue;
      }
      if (hasScriptUrl(value)) {
        fail("script_url", `Attribute "${name}" holds a script URL.`, path);
        continue;
      }
      const isHref = aLocal === "href" && (a.uri === "" || a.uri === XLINK_NS);
      if (isHref || aLocal === "src" || aLocal === "action" || aLocal === "formaction") {
        if (!FRAGMENT.test(value.trim())) {
          fail(
            "external_reference",
            `Attribute "${name}" must point inside the document ("#id"); "${
              takeCodeUnits(value, 80)
            }" does not.`,
            path,
          );
          continue;
        }
      }
      // Every value is checked as CSS: presentation attributes are CSS values.
      for (const p of cssProblems(value, isCss)) {
        fail(p.rule, `Attribute "${name}": ${p.message}.`, path);
      }
      if (aLocal === "attributename") {
        // Compared by local name: any prefix may be bound to the XLink namespace.
        const target = value.trim().toLowerCase().replace(/^[^:]*:/, "");
        if (target === "href" || target.startsWith("on") || target === "style") {
          fail("animation", `Animating "${value}" is not allowed.`, path);
        }
      }
      // Keep only allow-listed attributes (plus xlink:href and xml:space/xml:lang).
      if (node.dropped) continue;
      if (a.uri === "" && ALLOWED_ATTRIBUTES.has(a.local)) {
        node.attrs.push([a.local, isCss ? stripCssComments(value) : value]);
      } else if (a.uri === XLINK_NS && a.local === "href") {
        usesXlink = true;
        node.attrs.push(["xlink:href", value.trim()]);
      } else if (a.uri === XML_NS && (a.local === "space" || a.local === "lang")) {
        node.attrs.push([`xml:${a.local}`, value]);
      } else {
        drop(`attribute ${name}`);
      }
    }
    if (!node.dropped && (ns !== SVG_NS || !ALLOWED_ELEMENTS.has(local))) {
      drop(`element ${tag.name}`);
      node.dropped = true;
    }
    if (parent && !node.dropped) parent.children.push(node);
    if (!parent) root = node;
    stack.push(node);
  });

  parser.on("closetag", () => {
    const node = stack.pop();
    if (node?.name === "style" && !node.dropped) {
      // The whole text of the element at once: comments, CDATA sections and dropped
      // markup split it into pieces, and CSS reads the pieces joined.
      const css = node.children.join("");
      for (const p of cssProblems(css, true)) fail(p.rule, `<style>: ${p.message}.`, node.path);
      const kept = stripCssComments(css);
      node.children = kept ? [kept] : [];
    }
  });

  const onText = (text: string) => {
    const node = stack[stack.length - 1];
    if (!node || node.dropped) return;
    if (node.name === "style") {
      styleTextBytes += utf8Length(text);
      if (styleTextBytes > ARTICLE_LIMITS.svgStyleTextBytes) {
        stop(`<style> text is over ${ARTICLE_LIMITS.svgStyleTextBytes} bytes in all.`, node.path);
      }
      node.children.push(text);
    } else if (TEXT_ELEMENTS.has(node.name)) {
      node.children.push(text);
    }
  };
  parser.on("text", onText);
  parser.on("cdata", onText);

  try {
    parser.write(source).close();
  } catch (e) {
    parsing = false;
    // saxes reports through the error handler; this is a last resort.
    if (!(e instanceof StopParsing) && !fatal) {
      fail("xml", `Not well-formed XML: ${e instanceof Error ? e.message : e}`, here());
    }
  }
  parsing = false;
  if (!root) {
    if (!failures.length) fail("root", "The document has no <svg> element.", "(document)");
    return result(null);
  }
  if (failures.length) return result(null, root);
  const svg = serialize(root, usesXlink);
  // What is shown, checked with references decoded: a key written as `&#x41;`s, split by a
  // dropped comment, or holding a character the serialiser escapes (`&`, `<`) is one there.
  if (holdsCredential(secrets, unescapeSerialized(svg))) return credential();
  // What is stored and served is held to the source's limit too: escaping can make a
  // document several times its source (`>` in text becomes `&gt;`).
  const served = utf8Length(svg);
  if (served > ARTICLE_LIMITS.svgSourceBytes) {
    return whole(
      "size",
      `The sanitised SVG is ${served} bytes (characters such as ">" and line breaks in attributes are written as references); the limit is ${ARTICLE_LIMITS.svgSourceBytes}.`,
    );
  }
  return result(svg, root);
}

function attr(node: Node, name: string): string | null {
  return node.attrs.find(([n]) => n === name)?.[1] ?? null;
}

function serialize(root: Node, usesXlink: boolean): string {
  const out: string[] = [];
  const walk = (n: Node, isRoot: boolean) => {
    out.push(`<${n.name}`);
    if (isRoot) {
      out.push(` xmlns="${SVG_NS}"`);
      if (usesXlink) out.push(` xmlns:xlink="${XLINK_NS}"`);
    }
    for (const [name, value] of n.attrs) out.push(` ${name}="${escapeAttr(value)}"`);
    if (n.children.length === 0) {
      out.push("/>");
      return;
    }
    out.push(">");
    for (const c of n.children) {
      if (typeof c === "string") out.push(escapeText(c));
      else walk(c, false);
    }
    out.push(`</${n.name}>`);
  };
  walk(root, true);
  return out.join("");
}
